"""One PostgreSQL database (or one schema of it): the pool, the schema, transactions, fences.

Times are integer microseconds, as in the SQLite store; key columns use the "C" collation so
that the prefix ranges the repositories read (a branch's steps, a path's pauses) are byte
ranges an index serves. A fenced write locks the lease row it checks (``FOR SHARE``), so a
takeover — an UPDATE of that row — waits for the write's transaction, or comes first and makes
the check fail.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from psycopg import AsyncConnection, sql
from psycopg.errors import Error as PsycopgError
from psycopg_pool import AsyncConnectionPool

from agboss.errors import LeaseLostError, StoreError
from agboss.store.protocol import Fence

__all__ = ["PostgresDatabase"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS threads (
    tenant_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, thread_id)
);
CREATE TABLE IF NOT EXISTS executions (
    execution_id TEXT COLLATE "C" PRIMARY KEY,
    root_execution_id TEXT COLLATE "C" NOT NULL,
    parent_execution_id TEXT COLLATE "C",
    tenant_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    workflow TEXT NOT NULL,
    workflow_version TEXT NOT NULL,
    status TEXT NOT NULL,
    input_json TEXT NOT NULL,
    output_json TEXT,
    error BYTEA,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    input_tokens BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    cost DOUBLE PRECISION NOT NULL DEFAULT 0,
    model_calls BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS executions_by_root ON executions (root_execution_id);
CREATE INDEX IF NOT EXISTS executions_by_parent ON executions (parent_execution_id);
CREATE INDEX IF NOT EXISTS executions_by_thread ON executions (tenant_id, thread_id);
CREATE INDEX IF NOT EXISTS executions_running ON executions (status)
    WHERE status IN ('running', 'paused');
CREATE TABLE IF NOT EXISTS steps (
    execution_id TEXT COLLATE "C" NOT NULL,
    step_key TEXT COLLATE "C" NOT NULL,
    seq BIGSERIAL,
    kind TEXT NOT NULL,
    result_json TEXT NOT NULL,
    record_json TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (execution_id, step_key)
);
CREATE TABLE IF NOT EXISTS leases (
    root_execution_id TEXT COLLATE "C" PRIMARY KEY,
    holder TEXT,
    epoch BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS pauses (
    pause_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    step_key TEXT COLLATE "C" NOT NULL,
    root_execution_id TEXT COLLATE "C" NOT NULL,
    execution_id TEXT COLLATE "C" NOT NULL,
    seq BIGSERIAL,
    status TEXT NOT NULL,
    resolution TEXT,
    is_sent BOOLEAN NOT NULL DEFAULT FALSE,
    answered_by TEXT NOT NULL,
    channel TEXT NOT NULL,
    agent TEXT NOT NULL,
    ask_json TEXT NOT NULL,
    step_json TEXT NOT NULL,
    answer_json TEXT,
    asked_at BIGINT NOT NULL,
    resolved_at BIGINT,
    branch_path TEXT COLLATE "C" NOT NULL DEFAULT '',
    item_index INTEGER,
    PRIMARY KEY (tenant_id, pause_id)
);
CREATE UNIQUE INDEX IF NOT EXISTS pauses_by_step ON pauses (execution_id, step_key);
CREATE INDEX IF NOT EXISTS pauses_by_root ON pauses (root_execution_id, status, branch_path);
CREATE INDEX IF NOT EXISTS pauses_resolved_at ON pauses (resolved_at)
    WHERE status IN ('taken', 'cancelled');
CREATE TABLE IF NOT EXISTS branches (
    execution_id TEXT COLLATE "C" NOT NULL,
    place TEXT COLLATE "C" NOT NULL,
    status TEXT NOT NULL,
    output_json TEXT,
    error BYTEA,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (execution_id, place)
);
CREATE TABLE IF NOT EXISTS launches (
    execution_id TEXT COLLATE "C" NOT NULL,
    place TEXT COLLATE "C" NOT NULL,
    started_at BIGINT NOT NULL,
    PRIMARY KEY (execution_id, place)
);
CREATE TABLE IF NOT EXISTS budget_ledger (
    seq BIGSERIAL PRIMARY KEY,
    root_execution_id TEXT COLLATE "C" NOT NULL,
    execution_id TEXT NOT NULL,
    caller TEXT NOT NULL,
    input_tokens BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    cost DOUBLE PRECISION NOT NULL,
    calls BIGINT NOT NULL,
    at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS budget_ledger_by_root ON budget_ledger (root_execution_id);
CREATE TABLE IF NOT EXISTS pause_answers (
    tenant_id TEXT NOT NULL,
    root_execution_id TEXT COLLATE "C" NOT NULL,
    seq BIGINT NOT NULL,
    step_key TEXT NOT NULL,
    execution_id TEXT NOT NULL,
    entry_json TEXT NOT NULL,
    PRIMARY KEY (tenant_id, root_execution_id, execution_id, step_key)
);
"""

END = "\uffff"
"""Past every key of a prefix, in the "C" collation."""


class PostgresDatabase:
    """A connection pool to one database, in one schema (``public`` unless told)."""

    def __init__(
        self,
        url: str,
        *,
        schema: str | None = None,
        max_size: int = 10,
        open_timeout: float = 10.0,
    ) -> None:
        self.url = url
        self.schema = schema
        self._max_size = max_size
        self._open_timeout = open_timeout
        self._pool: AsyncConnectionPool[AsyncConnection[Any]] | None = None

    @property
    def pool(self) -> AsyncConnectionPool[AsyncConnection[Any]]:
        """The open pool."""
        if self._pool is None:
            raise StoreError(
                "the PostgreSQL store is not open",
                hint="use the store through App.create, which opens it, and before app.close()",
            )
        return self._pool

    async def open(self) -> None:
        """Opens the pool and creates the schema; idempotent."""
        if self._pool is not None:
            return
        options = None if self.schema is None else f"-c search_path={self.schema}"
        pool: AsyncConnectionPool[AsyncConnection[Any]] = AsyncConnectionPool(
            self.url,
            min_size=1,
            max_size=self._max_size,
            kwargs={"autocommit": True, **({"options": options} if options else {})},
            open=False,
        )
        try:
            await pool.open(wait=True, timeout=self._open_timeout)
            async with pool.connection() as connection:
                if self.schema is not None:
                    await connection.execute(
                        sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(
                            sql.Identifier(self.schema)
                        )
                    )
                # One instance creates the schema at a time (others may start with it).
                async with connection.transaction():
                    await connection.execute("SELECT pg_advisory_xact_lock(4242424242)")
                    await connection.execute(SCHEMA)
        except (PsycopgError, OSError, TimeoutError) as error:
            await pool.close()
            raise StoreError(
                f"the PostgreSQL store cannot be opened: {error}",
                hint="check the URL (postgresql://user:password@host:port/database) and that "
                "the server is up",
            ) from error
        self._pool = pool

    async def close(self) -> None:
        """Closes the pool."""
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncConnection[Any]]:
        """A connection inside a transaction."""
        async with self.pool.connection() as connection, connection.transaction():
            yield connection

    @staticmethod
    async def check_fence(connection: AsyncConnection[Any], fence: Fence) -> None:
        """Inside a transaction: raises `LeaseLostError` unless the fence still holds."""
        cursor = await connection.execute(
            "SELECT 1 FROM leases WHERE root_execution_id = %s AND holder = %s AND epoch = %s "
            "FOR SHARE",
            (fence.root_execution_id, fence.holder, fence.epoch),
        )
        if await cursor.fetchone() is None:
            raise LeaseLostError(
                f"this instance lost the lease on execution tree {fence.root_execution_id}",
                hint="another instance took the tree over; its pass carries on the work",
            )

    async def fetchall(self, query: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """Runs a read and returns its rows."""
        async with self.pool.connection() as connection:
            cursor = await connection.execute(query, params)
            return await cursor.fetchall()

    async def fetchone(self, query: str, params: tuple[Any, ...]) -> tuple[Any, ...] | None:
        """Runs a statement and returns its first row (``None`` if none)."""
        async with self.pool.connection() as connection:
            cursor = await connection.execute(query, params)
            return await cursor.fetchone()

    async def execute(self, query: str, params: tuple[Any, ...]) -> int:
        """Runs one statement (its own transaction); how many rows it changed."""
        async with self.pool.connection() as connection:
            cursor = await connection.execute(query, params)
            return cursor.rowcount
