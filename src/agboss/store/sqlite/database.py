"""One SQLite file in WAL mode: the connection, the schema, transactions and time encoding.

Statements run on the event loop's thread, synchronously: on a local file each takes tens of
microseconds, less than a hop to a worker thread would cost, and no transaction is ever held
across an ``await``, so two instances in one process never wait on each other's locks.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agboss.errors import LeaseLostError, StoreError
from agboss.store.protocol import Fence

__all__ = ["SqliteDatabase"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS threads (
    tenant_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, thread_id)
);
CREATE TABLE IF NOT EXISTS executions (
    execution_id TEXT PRIMARY KEY,
    root_execution_id TEXT NOT NULL,
    parent_execution_id TEXT,
    tenant_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    workflow TEXT NOT NULL,
    workflow_version TEXT NOT NULL,
    status TEXT NOT NULL,
    input_json TEXT NOT NULL,
    output_json TEXT,
    error BLOB,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost REAL NOT NULL DEFAULT 0,
    model_calls INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS executions_by_root ON executions (root_execution_id);
CREATE INDEX IF NOT EXISTS executions_by_parent ON executions (parent_execution_id);
CREATE INDEX IF NOT EXISTS executions_by_thread ON executions (tenant_id, thread_id);
CREATE INDEX IF NOT EXISTS executions_running ON executions (status)
    WHERE status IN ('running', 'paused');
CREATE TABLE IF NOT EXISTS steps (
    execution_id TEXT NOT NULL,
    step_key TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    result_json TEXT NOT NULL,
    record_json TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (execution_id, step_key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS steps_by_seq ON steps (execution_id, seq);
CREATE TABLE IF NOT EXISTS leases (
    root_execution_id TEXT PRIMARY KEY,
    holder TEXT,
    epoch INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS pauses (
    pause_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    step_key TEXT NOT NULL,
    root_execution_id TEXT NOT NULL,
    execution_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    status TEXT NOT NULL,
    resolution TEXT,
    is_sent INTEGER NOT NULL DEFAULT 0,
    answered_by TEXT NOT NULL,
    channel TEXT NOT NULL,
    agent TEXT NOT NULL,
    ask_json TEXT NOT NULL,
    step_json TEXT NOT NULL,
    answer_json TEXT,
    asked_at INTEGER NOT NULL,
    resolved_at INTEGER,
    branch_path TEXT NOT NULL DEFAULT '',
    item_index INTEGER,
    PRIMARY KEY (tenant_id, pause_id)
);
CREATE UNIQUE INDEX IF NOT EXISTS pauses_by_step ON pauses (execution_id, step_key);
CREATE INDEX IF NOT EXISTS pauses_by_root ON pauses (root_execution_id, status);
CREATE INDEX IF NOT EXISTS pauses_resolved_at ON pauses (resolved_at)
    WHERE status IN ('taken', 'cancelled');
CREATE TABLE IF NOT EXISTS branches (
    execution_id TEXT NOT NULL,
    place TEXT NOT NULL,
    status TEXT NOT NULL,
    output_json TEXT,
    error BLOB,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (execution_id, place)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS launches (
    execution_id TEXT NOT NULL,
    place TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    PRIMARY KEY (execution_id, place)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS budget_ledger (
    root_execution_id TEXT NOT NULL,
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    execution_id TEXT NOT NULL,
    caller TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost REAL NOT NULL,
    calls INTEGER NOT NULL,
    at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS budget_ledger_by_root ON budget_ledger (root_execution_id);
CREATE TABLE IF NOT EXISTS pause_answers (
    tenant_id TEXT NOT NULL,
    root_execution_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    step_key TEXT NOT NULL,
    execution_id TEXT NOT NULL,
    entry_json TEXT NOT NULL,
    PRIMARY KEY (tenant_id, root_execution_id, execution_id, step_key)
);
"""


ADDED_COLUMNS = (
    ("executions", "input_tokens", "INTEGER NOT NULL DEFAULT 0"),
    ("executions", "output_tokens", "INTEGER NOT NULL DEFAULT 0"),
    ("executions", "cost", "REAL NOT NULL DEFAULT 0"),
    ("executions", "model_calls", "INTEGER NOT NULL DEFAULT 0"),
    ("pauses", "branch_path", "TEXT NOT NULL DEFAULT ''"),
    ("pauses", "item_index", "INTEGER"),
)
"""Columns added after a table was first released: a store file made before gets them."""


def _add_missing_columns(connection: sqlite3.Connection) -> None:
    for table, column, declaration in ADDED_COLUMNS:
        columns = {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
        if column not in columns:
            connection.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")


class SqliteDatabase:
    """The connection to one SQLite file, shared by the store's repositories."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._connection: sqlite3.Connection | None = None

    @property
    def connection(self) -> sqlite3.Connection:
        """The open connection."""
        if self._connection is None:
            raise StoreError(
                f"the SQLite store at {self.path} is not open",
                hint="use the store through App.create, which opens it, and before app.close()",
            )
        return self._connection

    def open(self) -> None:
        """Opens the file (creating it and its folder) and the schema; idempotent."""
        if self._connection is not None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=10.0
            )
            connection.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a committed step survives a process crash (only an OS crash
            # may lose the last commits), at a fraction of FULL's fsync cost.
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute("PRAGMA busy_timeout=10000")
            connection.executescript(SCHEMA)
            _add_missing_columns(connection)
        except (sqlite3.Error, OSError) as error:
            raise StoreError(
                f"the SQLite store at {self.path} cannot be opened: {error}",
                hint="check that the folder is writable and the file is an agboss store",
            ) from error
        self._connection = connection

    def close(self) -> None:
        """Closes the connection."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction that takes the file's write lock at once (BEGIN IMMEDIATE)."""
        connection = self.connection
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

    @staticmethod
    def check_fence(connection: sqlite3.Connection, fence: Fence) -> None:
        """Inside a transaction: raises `LeaseLostError` unless the fence still holds."""
        row = connection.execute(
            "SELECT 1 FROM leases WHERE root_execution_id = ? AND holder = ? AND epoch = ?",
            (fence.root_execution_id, fence.holder, fence.epoch),
        ).fetchone()
        if row is None:
            raise LeaseLostError(
                f"this instance lost the lease on execution tree {fence.root_execution_id}",
                hint="another instance took the tree over; its pass carries on the work",
            )
