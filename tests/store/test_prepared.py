"""PostgreSQL: statements sent often go out prepared, and a pooler that drops them is survived."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agboss import App, ExecutionStatus, FunctionProvider, LeaseLostError
from agboss.store.postgres import PostgresStore
from agboss.store.protocol import Fence
from agboss.store.writes import ReleaseLease
from tests.apps.multi_app import ItemDto, ItemsApplication, ItemsDto, ItemsWorkflow, model
from tests.stores import POSTGRES_URL, needs_postgres

pytestmark = needs_postgres


async def _cycles(app: App, count: int) -> None:
    for _ in range(count):
        items = ItemsDto(items=[ItemDto(item_id="i0")])
        paused = await app.execute(ItemsWorkflow, items, owner_id="u")
        [pending] = paused.pending
        done = await app.resume(str(pending.pause_id), decision={"approved": True}, owner_id="u")
        assert done.status is ExecutionStatus.COMPLETED


async def _prepared_on(store: PostgresStore) -> list[str]:
    async with store.driver.pool.connection() as connection:  # type: ignore[attr-defined]
        cursor = await connection.execute(
            "SELECT name FROM pg_prepared_statements WHERE name LIKE 'agboss%'"
        )
        return [str(row[0]) for row in await cursor.fetchall()]


async def _app(store: PostgresStore) -> App:
    return await App.create(ItemsApplication, store=store, providers=[FunctionProvider(model)])


async def test_statements_a_pass_sends_again_go_out_prepared(
    schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGBOSS_TEST_RUNS", str(tmp_path / "runs.txt"))
    assert POSTGRES_URL is not None
    store = PostgresStore(POSTGRES_URL, schema, max_connections=1)
    app = await _app(store)
    try:
        await _cycles(app, 3)
        assert len(await _prepared_on(store)) >= 5
        async with store.driver.pool.connection() as connection:  # type: ignore[attr-defined]
            cursor = await connection.execute(
                "SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'agboss%' "
                "AND statement LIKE '%agboss_fence($1, $2, $3)%'"
            )
            assert await cursor.fetchone() == (1,)  # the lease's fence too
    finally:
        await app.close()


async def test_without_prepared_statements_nothing_is_prepared(
    schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGBOSS_TEST_RUNS", str(tmp_path / "runs.txt"))
    assert POSTGRES_URL is not None
    store = PostgresStore(POSTGRES_URL, schema, max_connections=1, prepared_statements=False)
    app = await _app(store)
    try:
        await _cycles(app, 6)  # psycopg would prepare its reads after five
        assert await _prepared_on(store) == []
        async with store.driver.pool.connection() as connection:  # type: ignore[attr-defined]
            cursor = await connection.execute("SELECT count(*) FROM pg_prepared_statements")
            assert await cursor.fetchone() == (0,)
    finally:
        await app.close()


async def test_prepared_statements_that_vanish_are_turned_off_and_nothing_is_lost(
    schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What a pooler in transaction mode does: the next transaction's connection has none of
    # the statements this one prepared.
    runs = tmp_path / "runs.txt"
    monkeypatch.setenv("AGBOSS_TEST_RUNS", str(runs))
    assert POSTGRES_URL is not None
    store = PostgresStore(POSTGRES_URL, schema, max_connections=1)
    app = await _app(store)
    try:
        await _cycles(app, 6)  # psycopg's own prepared reads too (after five)
        async with store.driver.pool.connection() as connection:  # type: ignore[attr-defined]
            await connection.execute("DEALLOCATE ALL")
        await _cycles(app, 2)
        assert not store.prepared_statements
        assert await _prepared_on(store) == []
    finally:
        await app.close()
    assert sum(line.startswith("tool") for line in runs.read_text().splitlines()) == 8


async def test_prepared_statements_survive_a_rolled_back_transaction(
    schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # psycopg answers a ROLLBACK by deallocating every prepared statement (its own and the
    # store's): they are prepared again, once each, and the store keeps using them.
    monkeypatch.setenv("AGBOSS_TEST_RUNS", str(tmp_path / "runs.txt"))
    assert POSTGRES_URL is not None
    store = PostgresStore(POSTGRES_URL, schema, max_connections=1)
    app = await _app(store)
    prepares: list[str] = []
    from psycopg import AsyncConnection

    execute = AsyncConnection.execute

    async def counted(connection: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(query, str) and query.startswith("PREPARE "):
            prepares.append(query.split()[1])
        return await execute(connection, query, *args, **kwargs)

    monkeypatch.setattr(AsyncConnection, "execute", counted)
    try:
        await _cycles(app, 6)  # psycopg's own prepared reads too (after five)
        before = set(await _prepared_on(store))
        assert len(before) >= 5
        for _ in range(2):  # a refused fenced write (a lost lease): rolled back
            with pytest.raises(LeaseLostError):
                await store.write(
                    [ReleaseLease(Fence("ex-none", "a-holder-that-lost-it", 9))],
                    fence=Fence("ex-none", "a-holder-that-lost-it", 9),
                )
            prepares.clear()
            await _cycles(app, 1)
            assert store.prepared_statements
            assert len(prepares) == len(set(prepares))  # each prepared again once, at most
            assert set(await _prepared_on(store)) >= before
        prepares.clear()
        await _cycles(app, 3)
        assert prepares == []  # and sent as EXECUTE from then on
        assert store.prepared_statements
    finally:
        await app.close()


_AWKWARD = (
    "plain",
    "",
    "it's",
    "''",
    "back\\slash \\' E'\\\\",
    "-- not a comment",
    "$1 %s ? {now}",
    "ünïcödé ✓ \U0001f600",
    "line\nbreak\ttab\r",
    0,
    1,
    -1,
    2**63 - 1,
    -(2**63),
    True,
    False,
    None,
    1.5,
)


async def test_every_value_an_execute_carries_comes_back_as_it_went(schema: str) -> None:
    # Values written into EXECUTE as literals by the store, not by psycopg: the same value is
    # read back whether the statement went inline (its first send) or prepared (after).
    from agboss.store.sql._dialect import Returns, Sql

    assert POSTGRES_URL is not None
    store = PostgresStore(POSTGRES_URL, schema, max_connections=1)
    await store.open()
    try:
        for value in _AWKWARD:
            kind = {bool: "boolean", int: "bigint", float: "float8"}.get(type(value), "text")
            statement = Sql(f"SELECT ?::{kind}, ?::text", (value, "after"), Returns.ONE)

            def work(statement: Sql = statement) -> Any:
                row = yield statement
                return row

            for _ in range(3):  # inline, then prepared, then prepared again
                assert await store.driver.transact(work) == (value, "after")
        assert len(await _prepared_on(store)) >= 4
    finally:
        await store.close()
