"""What a store does when its database is busy, gone, or handed what it cannot keep: a
`StoreError` with a code after a bounded wait, never a frozen event loop, never a raw driver
error."""

from __future__ import annotations

import asyncio
import base64
import os
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agboss import (
    StoreBusyError,
    StoreError,
    StoreUnavailableError,
    StoreValueError,
)
from agboss.store import ExecutionRow, SqliteStore
from agboss.store.writes import BeginExecution, ReleaseLease, write_one
from tests.stores import POSTGRES_URL, made_store, needs_postgres

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _row(execution_id: str = "ex-1", tenant_id: str = "acme") -> ExecutionRow:
    return ExecutionRow.starting(
        execution_id=execution_id,
        parent=None,
        tenant_id=tenant_id,
        thread_id="th-1",
        owner_id="u",
        workflow="w",
        workflow_version="1",
        input_json="{}",
        now=NOW,
    )


def _begin(execution_id: str = "ex-1", tenant_id: str = "acme") -> BeginExecution:
    return BeginExecution(_row(execution_id, tenant_id), "a", timedelta(seconds=30), NOW)


async def _ticks_while(work: asyncio.Future[object]) -> list[float]:
    """The gaps between ticks of the event loop while ``work`` runs."""
    gaps: list[float] = []
    last = time.monotonic()
    while not work.done():
        await asyncio.sleep(0.01)
        now = time.monotonic()
        gaps.append(now - last)
        last = now
    return gaps


async def test_a_sqlite_write_behind_another_writer_fails_busy_and_never_freezes_the_loop(
    tmp_path: Path,
) -> None:
    path = tmp_path / "agboss.db"
    store = SqliteStore(path, busy_timeout=timedelta(milliseconds=500))
    await store.open()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process's long write transaction
    try:
        started = time.monotonic()
        writing = asyncio.ensure_future(store.write([_begin()]))
        gaps = await _ticks_while(writing)
        with pytest.raises(StoreBusyError) as raised:
            await writing
        assert 0.4 < time.monotonic() - started < 3
        assert max(gaps) < 0.2  # the loop kept running while the write waited
        assert raised.value.code == "store.busy"
        assert isinstance(raised.value.__cause__, sqlite3.OperationalError)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert await write_one(store, _begin())  # the lock is gone: it goes through
    await store.close()


def _locked_for(path: Path, seconds: float) -> None:
    """Holds the file's exclusive lock (a rollback-journal file, as a new one is before an
    instance switches it to WAL) for ``seconds``, from another connection."""
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("CREATE TABLE IF NOT EXISTS held (x)")
    other.execute("BEGIN EXCLUSIVE")
    other.execute("INSERT INTO held VALUES (1)")
    time.sleep(seconds)
    other.execute("COMMIT")
    other.close()


async def test_a_sqlite_store_opening_while_another_holds_the_files_lock_waits_and_opens(
    tmp_path: Path,
) -> None:
    path = tmp_path / "new.db"
    holding = asyncio.get_running_loop().run_in_executor(None, _locked_for, path, 0.4)
    await asyncio.sleep(0.1)  # the lock is held
    store = SqliteStore(path, busy_timeout=timedelta(seconds=5))
    await store.open()
    await store.close()
    await holding


async def test_a_sqlite_store_locked_past_its_busy_timeout_fails_with_a_store_error(
    tmp_path: Path,
) -> None:
    path = tmp_path / "new.db"
    holding = asyncio.get_running_loop().run_in_executor(None, _locked_for, path, 0.8)
    await asyncio.sleep(0.1)
    store = SqliteStore(path, busy_timeout=timedelta(milliseconds=200))
    with pytest.raises(StoreError) as raised:  # never a bare sqlite3.OperationalError
        await store.open()
    assert not isinstance(raised.value, sqlite3.Error)
    await holding


async def test_a_file_that_is_not_a_sqlite_database_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "agboss.db"
    path.write_bytes(b"this is no database, " * 100)
    with pytest.raises(StoreError) as raised:
        await SqliteStore(path).open()
    assert isinstance(raised.value.__cause__, sqlite3.DatabaseError)


async def test_a_sqlite_store_in_a_folder_that_cannot_be_made_is_unavailable(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreUnavailableError) as raised:
        await SqliteStore(blocker / "agboss.db").open()
    assert "sqlite:////absolute" in str(raised.value)


@needs_postgres
@pytest.mark.parametrize(
    "limit",
    [
        {"lock_timeout": timedelta(milliseconds=300)},
        {"statement_timeout": timedelta(milliseconds=300), "lock_timeout": timedelta(minutes=1)},
    ],
    ids=["lock_timeout", "statement_timeout"],
)
async def test_a_postgres_write_behind_a_held_lock_fails_busy_after_its_timeout(
    tmp_path: Path, limit: dict[str, timedelta]
) -> None:
    from psycopg import AsyncConnection, sql

    from agboss.store.postgres import PostgresStore

    async with made_store("postgres", tmp_path) as made:
        assert isinstance(made, PostgresStore)
        schema = made.schema
        await made.close()
        store = PostgresStore(str(POSTGRES_URL), schema, **limit)  # type: ignore[arg-type]
        await store.open()
        fence = await write_one(store, _begin())
        assert POSTGRES_URL is not None
        async with await AsyncConnection.connect(POSTGRES_URL) as other:
            await other.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
            await other.execute("SELECT 1 FROM leases FOR UPDATE")  # a stalled transaction
            started = time.monotonic()
            with pytest.raises(StoreBusyError):
                await store.write([ReleaseLease(fence)], fence=fence)
            assert 0.25 < time.monotonic() - started < 3
            await other.rollback()
        await store.close()


@needs_postgres
@pytest.mark.alone  # it ends every idle connection of the server: other tests' pools' too
async def test_a_postgres_server_that_drops_the_connection_is_unavailable_then_recovers(
    tmp_path: Path,
) -> None:
    from psycopg import AsyncConnection

    async with made_store("postgres", tmp_path) as store:
        await store.open()
        try:
            async with store.session():
                await store.write([_begin()])
                assert POSTGRES_URL is not None
                async with await AsyncConnection.connect(POSTGRES_URL, autocommit=True) as admin:
                    await admin.execute(  # as a restart does: AdminShutdown / terminated
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE pid != pg_backend_pid() AND usename = current_user "
                        "AND state = 'idle'"
                    )
                with pytest.raises(StoreUnavailableError) as raised:
                    await store.executions.find_by_id("ex-1")
                assert raised.value.code == "store.unavailable"
            found = await store.executions.find_by_id("ex-1")  # a new connection
            assert found is not None
        finally:
            await store.close()


@needs_postgres
async def test_a_postgres_key_longer_than_its_index_allows_is_a_value_error(
    tmp_path: Path,
) -> None:
    async with made_store("postgres", tmp_path) as store:
        await store.open()
        try:
            with pytest.raises(StoreValueError) as raised:
                # Random text, which no compression brings under a b-tree entry's limit.
                await store.write([_begin(tenant_id=base64.b64encode(os.urandom(4500)).decode())])
            assert raised.value.code == "store.value-rejected"
            with pytest.raises(StoreValueError):
                await store.write([_begin(execution_id="nul\x00")])
            assert await store.executions.find_by_id("ex-1") is None
        finally:
            await store.close()
