"""Schema versions: a store written by agboss 0.1.0 is migrated and its pauses are resumed."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import sqlite3
import time
from collections.abc import AsyncIterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from agboss import App, ExecutionStatus, FunctionProvider, StoreSchemaError
from agboss.store import SqliteStore, Store
from agboss.store.sql import SqlStore
from agboss.store.sql._migrations import LATEST_VERSION
from tests.apps.multi_app import CountDto, ItemsApplication, model
from tests.stores import POSTGRES_URL, STORE_KINDS, made_store, needs_postgres, store_url

FIXTURES = Path(__file__).parent / "v0_1_0"

FROZEN = {
    "sqlite": "2b14664774727b12496d6037cf117a516f7638dccc1ef1a3c22769a495fdd37d",
    "postgres": "b2594f78c07b446c31a83a84685d50e9c19205317809c20e51886d5320660d94",
}
"""The SHA-256 of each dialect's step 1: the schema 0.1.0 made, never edited."""


def _frozen(kind: str) -> str:
    path = resources.files("agboss.store.sql").joinpath(f"schema/0001_{kind}.sql")
    return path.read_text(encoding="utf-8")


def _value(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"b64"}:
        return base64.b64decode(value["b64"])
    return value


def _tables(kind: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{kind}.json").read_text())
    return data


async def _load_old_store(kind: str, url: str) -> None:
    """The tables of agboss 0.1.0 and the rows it wrote, as it left them."""
    data = _tables(kind)
    if kind == "sqlite":
        connection = sqlite3.connect(url.removeprefix("sqlite:///"))
        connection.executescript(_frozen(kind))
        for table, content in data["tables"].items():
            marks = ", ".join("?" * len(content["columns"]))
            connection.executemany(
                f"INSERT INTO {table} ({', '.join(content['columns'])}) VALUES ({marks})",
                [[_value(v) for v in row] for row in content["rows"]],
            )
        connection.commit()
        connection.close()
        return
    from psycopg import AsyncConnection, sql

    assert POSTGRES_URL is not None
    schema = url.rsplit("schema=", 1)[1]
    async with await AsyncConnection.connect(POSTGRES_URL, autocommit=True) as connection:
        await connection.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        await connection.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        await connection.execute(_frozen(kind).encode())
        for table, content in data["tables"].items():
            columns = content["columns"]
            statement = sql.SQL("INSERT INTO {} ({}) VALUES ({})").format(
                sql.Identifier(table),
                sql.SQL(", ").join(sql.Identifier(c) for c in columns),
                sql.SQL(", ").join(sql.Placeholder() * len(columns)),
            )
            for row in content["rows"]:
                await connection.execute(statement, [_value(v) for v in row])
        for table in ("steps", "pauses", "budget_ledger"):  # as 0.1.0's sequences left them
            await connection.execute(
                sql.SQL(
                    "SELECT setval(pg_get_serial_sequence({}, 'seq'), MAX(seq)) FROM {}"
                ).format(sql.Literal(table), sql.Identifier(table))
            )


@pytest.fixture(params=STORE_KINDS)
async def old_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    async with store_url(request.param, tmp_path) as url:
        await _load_old_store(request.param, url)
        yield url


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_step_one_is_the_schema_0_1_0_made_and_is_never_edited(kind: str) -> None:
    assert hashlib.sha256(_frozen(kind).encode()).hexdigest() == FROZEN[kind]


async def test_a_0_1_0_store_is_migrated_and_its_pauses_resumed_to_completion(
    old_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGBOSS_TEST_RUNS", str(tmp_path / "runs.txt"))
    app = await App.create(ItemsApplication, store=old_store, providers=[FunctionProvider(model)])
    try:
        assert await app.store.schema_version() == LATEST_VERSION
        for root in _tables(_kind(old_store))["paused"]:  # the trees 0.1.0 left paused
            tenant, input_json = _execution(root, old_store)
            paused = await app.get(root, tenant_id=tenant)
            assert paused.status is ExecutionStatus.PAUSED
            result = paused
            for pending in paused.pending:
                # Its reference was computed by the migration: a screen's answer finds it.
                found = await app.pause_id_of(pending.pause_ref, tenant_id=tenant, owner_id="u")
                assert found == pending.pause_id
                result = await app.resume(
                    str(pending.pause_id),
                    decision={"approved": True},
                    tenant_id=tenant,
                    owner_id="u",
                    record=True,
                )
            assert result.status is ExecutionStatus.COMPLETED
            assert isinstance(result.output, CountDto)
            items = json.loads(input_json)["items"]
            assert result.output.done == len(items)
            assert result.record is not None
            assert len(result.record.pauses) == len(items)
    finally:
        await app.close()


def _kind(url: str) -> str:
    return "sqlite" if url.startswith("sqlite") else "postgres"


def _execution(execution_id: str, url: str) -> tuple[str, str]:
    """An execution's tenant and input, as 0.1.0 stored them."""
    table = _tables(_kind(url))["tables"]["executions"]
    values = next(r for r in table["rows"] if r[0] == execution_id)
    row = dict(zip(table["columns"], values, strict=True))
    return str(row["tenant_id"]), str(row["input_json"])


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_plain_start_of_a_current_store_runs_no_ddl(kind: str, tmp_path: Path) -> None:
    async with made_store(kind, tmp_path) as made:
        await made.open()
        await made.close()
        store = _same_store(kind, made)
        assert isinstance(store, SqlStore)
        transactions: list[object] = []
        transact = store.driver.transact

        async def counted(work: Any, **options: Any) -> Any:
            transactions.append(work)
            return await transact(work, **options)

        store.driver.transact = counted  # type: ignore[method-assign]
        await store.open()
        await store.close()
    assert transactions == []  # a migration is a transaction; reading the version is not


async def test_an_old_schema_without_migrate_is_a_schema_error(old_store: str) -> None:
    with pytest.raises(StoreSchemaError) as raised:
        await App.create(
            ItemsApplication, store=old_store, providers=[FunctionProvider(model)], migrate=False
        )
    assert "agboss migrate" in str(raised.value)


async def test_a_schema_from_a_newer_agboss_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "agboss.db"
    store = SqliteStore(path)
    await store.open()
    await store.close()
    connection = sqlite3.connect(path)
    connection.execute("UPDATE agboss_schema SET version = ?", (LATEST_VERSION + 1,))
    connection.commit()
    connection.close()
    with pytest.raises(StoreSchemaError) as raised:
        await SqliteStore(path).open()
    assert "newer agboss" in str(raised.value)


def _same_store(kind: str, made: Store) -> Store:
    if kind == "sqlite":
        assert isinstance(made, SqliteStore)
        return SqliteStore(made.path)
    from agboss.store.postgres import PostgresStore

    assert isinstance(made, PostgresStore)
    return PostgresStore(str(POSTGRES_URL), made.schema, max_connections=2)


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_instances_starting_together_migrate_once(kind: str, tmp_path: Path) -> None:
    async with made_store(kind, tmp_path) as made:
        stores = [_same_store(kind, made) for _ in range(4)]
        await asyncio.gather(*(store.open() for store in stores))
        versions = [await store.schema_version() for store in stores]
        await asyncio.gather(*(store.close() for store in stores))
    assert versions == [LATEST_VERSION] * 4


@needs_postgres
async def test_a_plain_start_is_not_blocked_by_another_instances_open_transaction(
    tmp_path: Path,
) -> None:
    from psycopg import AsyncConnection, sql

    async with made_store("postgres", tmp_path) as made:
        await made.open()
        await made.close()
        second = _same_store("postgres", made)
        assert POSTGRES_URL is not None
        async with await AsyncConnection.connect(POSTGRES_URL) as other:
            schema = getattr(made, "schema", None)
            await other.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
            await other.execute(  # a pass of another instance, mid-transaction
                "INSERT INTO executions (execution_id, root_execution_id, tenant_id, thread_id, "
                "owner_id, workflow, workflow_version, status, input_json, created_at, "
                "updated_at) VALUES ('x', 'x', 't', 'th', 'u', 'w', '1', 'running', '{}', 0, 0)"
            )
            started = time.monotonic()
            await asyncio.wait_for(second.open(), timeout=5)
            assert time.monotonic() - started < 1
            await second.close()
            await other.rollback()
