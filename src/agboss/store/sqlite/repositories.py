"""The SQLite repositories of executions, the step journal and leases."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta

from agboss.enums import ExecutionStatus
from agboss.errors import ThreadOwnerError
from agboss.models.messages import Usage
from agboss.store.protocol import (
    BranchRow,
    ExecutionRow,
    Fence,
    LedgerEntry,
    StepEntry,
    ThreadRow,
)
from agboss.store.rows import EXECUTION_COLUMNS, execution_of
from agboss.store.sqlite.database import SqliteDatabase
from agboss.store.times import from_micros, to_micros

__all__ = [
    "SqliteBranchRepository",
    "SqliteBudgetLedgerRepository",
    "SqliteExecutionRepository",
    "SqliteLeaseRepository",
    "SqliteStepJournalRepository",
]


def _insert_execution(connection: sqlite3.Connection, row: ExecutionRow) -> None:
    # A second insert of the same id (a child re-entered after a crash) changes nothing.
    created = to_micros(row.created_at)
    connection.execute(
        f"INSERT INTO executions ({EXECUTION_COLUMNS}) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        (
            row.execution_id,
            row.root_execution_id,
            row.parent_execution_id,
            row.tenant_id,
            row.thread_id,
            row.owner_id,
            row.workflow,
            row.workflow_version,
            row.status.value,
            row.input_json,
            row.output_json,
            row.error,
            created,
            created,
        ),
    )


class SqliteExecutionRepository:
    """Threads and executions in SQLite."""

    def __init__(self, database: SqliteDatabase) -> None:
        self._db = database

    async def find_thread(self, tenant_id: str, thread_id: str) -> ThreadRow | None:
        row = self._db.connection.execute(
            "SELECT owner_id FROM threads WHERE tenant_id = ? AND thread_id = ?",
            (tenant_id, thread_id),
        ).fetchone()
        return None if row is None else ThreadRow(tenant_id, thread_id, str(row[0]))

    async def begin(self, row: ExecutionRow, *, holder: str, lease_until: datetime) -> Fence:
        now = to_micros(row.created_at)
        with self._db.transaction() as connection:
            connection.execute(
                "INSERT INTO threads (tenant_id, thread_id, owner_id, created_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (row.tenant_id, row.thread_id, row.owner_id, now),
            )
            owner = connection.execute(
                "SELECT owner_id FROM threads WHERE tenant_id = ? AND thread_id = ?",
                (row.tenant_id, row.thread_id),
            ).fetchone()[0]
            if owner != row.owner_id:
                raise ThreadOwnerError(f"thread {row.thread_id} belongs to another owner")
            _insert_execution(connection, row)
            connection.execute(
                "INSERT INTO leases (root_execution_id, holder, epoch, expires_at) "
                "VALUES (?, ?, 1, ?)",
                (row.root_execution_id, holder, to_micros(lease_until)),
            )
        return Fence(row.root_execution_id, holder, 1)

    async def find(self, tenant_id: str, execution_id: str) -> ExecutionRow | None:
        row = self._db.connection.execute(
            f"SELECT {EXECUTION_COLUMNS} FROM executions WHERE execution_id = ? AND tenant_id = ?",
            (execution_id, tenant_id),
        ).fetchone()
        return None if row is None else execution_of(row)

    async def find_by_id(self, execution_id: str) -> ExecutionRow | None:
        row = self._db.connection.execute(
            f"SELECT {EXECUTION_COLUMNS} FROM executions WHERE execution_id = ?",
            (execution_id,),
        ).fetchone()
        return None if row is None else execution_of(row)

    async def finish(
        self,
        fence: Fence,
        execution_id: str,
        *,
        status: ExecutionStatus,
        output_json: str | None,
        error: bytes | None,
        now: datetime,
    ) -> bool:
        with self._db.transaction() as connection:
            self._db.check_fence(connection, fence)
            cursor = connection.execute(
                "UPDATE executions SET status = ?, output_json = ?, error = ?, updated_at = ? "
                "WHERE execution_id = ? AND status != 'cancelled'",
                (status.value, output_json, error, to_micros(now), execution_id),
            )
        return cursor.rowcount == 1

    async def find_interrupted(self, now: datetime, limit: int) -> list[str]:
        rows = self._db.connection.execute(
            "SELECT e.execution_id FROM executions AS e "
            "LEFT JOIN leases AS l ON l.root_execution_id = e.execution_id "
            "WHERE e.parent_execution_id IS NULL "
            "AND (l.holder IS NULL OR l.expires_at <= ?) "
            "AND (e.status = 'running' OR (e.status = 'paused' AND EXISTS ("
            "  SELECT 1 FROM pauses AS p WHERE p.root_execution_id = e.execution_id "
            "  AND p.status = 'resolved'))) "
            "ORDER BY e.created_at LIMIT ?",
            (to_micros(now), limit),
        ).fetchall()
        return [str(row[0]) for row in rows]

    async def insert_child(self, fence: Fence, row: ExecutionRow) -> ExecutionRow:
        with self._db.transaction() as connection:
            self._db.check_fence(connection, fence)
            _insert_execution(connection, row)
            found = connection.execute(
                f"SELECT {EXECUTION_COLUMNS} FROM executions WHERE execution_id = ?",
                (row.execution_id,),
            ).fetchone()
        return execution_of(found)

    async def find_children(self, execution_id: str) -> list[ExecutionRow]:
        rows = self._db.connection.execute(
            f"SELECT {EXECUTION_COLUMNS} FROM executions WHERE parent_execution_id = ? "
            "ORDER BY created_at, execution_id",
            (execution_id,),
        ).fetchall()
        return [execution_of(row) for row in rows]

    async def spend_of(self, execution_id: str, *, tree: bool) -> Usage:
        where = "execution_id = ? OR execution_id >= ? AND execution_id < ?"
        arguments: tuple[object, ...] = (execution_id,)
        if tree:  # children's ids extend their parent's: <parent>/<place>
            arguments = (execution_id, execution_id + "/", execution_id + "/\uffff")
        else:
            where = "execution_id = ?"
        row = self._db.connection.execute(
            "SELECT COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0), "
            "COALESCE(SUM(cost), 0.0), COALESCE(SUM(model_calls), 0) "
            f"FROM executions WHERE {where}",
            arguments,
        ).fetchone()
        return Usage(
            input_tokens=int(row[0]),
            output_tokens=int(row[1]),
            cost=float(row[2]),
            calls=int(row[3]),
        )

    async def cancel_under(self, fence: Fence, execution_id: str, *, now: datetime) -> None:
        with self._db.transaction() as connection:
            self._db.check_fence(connection, fence)
            connection.execute(  # the execution, and its descendants: <id>/<place>…
                "UPDATE executions SET status = 'cancelled', updated_at = ? "
                "WHERE (execution_id = ? OR execution_id >= ? AND execution_id < ?) "
                "AND status IN ('running', 'paused')",
                (to_micros(now), execution_id, execution_id + "/", execution_id + "/\uffff"),
            )

    async def cancel(self, tenant_id: str, thread_id: str, *, now: datetime) -> list[str]:
        rows = self._db.connection.execute(
            "UPDATE executions SET status = 'cancelled', updated_at = ? "
            "WHERE tenant_id = ? AND thread_id = ? AND status IN ('running', 'paused') "
            "RETURNING execution_id, parent_execution_id",
            (to_micros(now), tenant_id, thread_id),
        ).fetchall()
        return [str(row[0]) for row in rows if row[1] is None]


class SqliteStepJournalRepository:
    """The step journal in SQLite: one row per step."""

    def __init__(self, database: SqliteDatabase) -> None:
        self._db = database

    async def load(self, execution_id: str, prefix: str = "") -> dict[str, StepEntry]:
        rows = self._db.connection.execute(
            "SELECT step_key, kind, result_json, record_json, seq FROM steps "
            "WHERE execution_id = ? AND step_key >= ? AND step_key < ? ORDER BY seq",
            (execution_id, prefix, prefix + "\uffff"),
        ).fetchall()
        return {
            str(row[0]): StepEntry(str(row[0]), str(row[1]), str(row[2]), str(row[3]), int(row[4]))
            for row in rows
        }

    async def append(
        self, fence: Fence, execution_id: str, entry: StepEntry, *, now: datetime
    ) -> None:
        with self._db.transaction() as connection:
            self._db.check_fence(connection, fence)
            connection.execute(
                "INSERT INTO steps "
                "(execution_id, step_key, seq, kind, result_json, record_json, created_at) "
                "VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM steps "
                "WHERE execution_id = ?), ?, ?, ?, ?)",
                (
                    execution_id,
                    entry.key,
                    execution_id,
                    entry.kind,
                    entry.result_json,
                    entry.record_json,
                    to_micros(now),
                ),
            )
            if entry.usage is not None:
                connection.execute(
                    "UPDATE executions SET input_tokens = input_tokens + ?, "
                    "output_tokens = output_tokens + ?, cost = cost + ?, "
                    "model_calls = model_calls + ? WHERE execution_id = ?",
                    (
                        entry.usage.input_tokens,
                        entry.usage.output_tokens,
                        entry.usage.cost,
                        entry.usage.calls,
                        execution_id,
                    ),
                )


class SqliteLeaseRepository:
    """Tree leases in SQLite: acquire and renew are single conditional statements."""

    def __init__(self, database: SqliteDatabase) -> None:
        self._db = database

    async def acquire(
        self, root_execution_id: str, holder: str, *, now: datetime, ttl: timedelta
    ) -> Fence | None:
        row = self._db.connection.execute(
            "INSERT INTO leases (root_execution_id, holder, epoch, expires_at) "
            "VALUES (?, ?, 1, ?) "
            "ON CONFLICT (root_execution_id) DO UPDATE SET "
            "holder = excluded.holder, epoch = leases.epoch + 1, "
            "expires_at = excluded.expires_at "
            "WHERE leases.holder IS NULL OR leases.expires_at <= ? "
            "RETURNING epoch",
            (root_execution_id, holder, to_micros(now + ttl), to_micros(now)),
        ).fetchone()
        return None if row is None else Fence(root_execution_id, holder, int(row[0]))

    async def renew(self, fence: Fence, *, now: datetime, ttl: timedelta) -> bool:
        cursor = self._db.connection.execute(
            "UPDATE leases SET expires_at = ? "
            "WHERE root_execution_id = ? AND holder = ? AND epoch = ?",
            (to_micros(now + ttl), fence.root_execution_id, fence.holder, fence.epoch),
        )
        return cursor.rowcount == 1

    async def release(self, fence: Fence) -> None:
        self._db.connection.execute(
            "UPDATE leases SET holder = NULL, expires_at = 0 "
            "WHERE root_execution_id = ? AND holder = ? AND epoch = ?",
            (fence.root_execution_id, fence.holder, fence.epoch),
        )


class SqliteBudgetLedgerRepository:
    """The budgets' ledger in SQLite: one row per model call."""

    def __init__(self, database: SqliteDatabase) -> None:
        self._db = database

    async def add(
        self, root_execution_id: str, execution_id: str, caller: str, usage: Usage, *, now: datetime
    ) -> None:
        self._db.connection.execute(
            "INSERT INTO budget_ledger (root_execution_id, execution_id, caller, input_tokens, "
            "output_tokens, cost, calls, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                root_execution_id,
                execution_id,
                caller,
                usage.input_tokens,
                usage.output_tokens,
                usage.cost,
                usage.calls,
                to_micros(now),
            ),
        )

    async def total(self, root_execution_id: str) -> Usage:
        row = self._db.connection.execute(
            "SELECT COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0), "
            "COALESCE(SUM(cost), 0.0), COALESCE(SUM(calls), 0) FROM budget_ledger "
            "WHERE root_execution_id = ?",
            (root_execution_id,),
        ).fetchone()
        return Usage(
            input_tokens=int(row[0]),
            output_tokens=int(row[1]),
            cost=float(row[2]),
            calls=int(row[3]),
        )

    async def entries(self, root_execution_id: str) -> list[LedgerEntry]:
        rows = self._db.connection.execute(
            "SELECT execution_id, caller, input_tokens, output_tokens, cost, calls, at "
            "FROM budget_ledger WHERE root_execution_id = ? ORDER BY seq",
            (root_execution_id,),
        ).fetchall()
        return [
            LedgerEntry(
                execution_id=str(row[0]),
                caller=str(row[1]),
                usage=Usage(
                    input_tokens=int(row[2]),
                    output_tokens=int(row[3]),
                    cost=float(row[4]),
                    calls=int(row[5]),
                ),
                at=from_micros(int(row[6])),
            )
            for row in rows
        ]


class SqliteBranchRepository:
    """Launches and their branches in SQLite: one row per launch, one per branch."""

    def __init__(self, database: SqliteDatabase) -> None:
        self._db = database

    async def start_launch(
        self, fence: Fence, execution_id: str, place: str, *, now: datetime
    ) -> datetime:
        with self._db.transaction() as connection:
            self._db.check_fence(connection, fence)
            connection.execute(
                "INSERT INTO launches (execution_id, place, started_at) VALUES (?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                (execution_id, place, to_micros(now)),
            )
            started = connection.execute(
                "SELECT started_at FROM launches WHERE execution_id = ? AND place = ?",
                (execution_id, place),
            ).fetchone()[0]
        return from_micros(int(started))

    async def load(self, execution_id: str, prefix: str) -> dict[str, BranchRow]:
        rows = self._db.connection.execute(
            "SELECT place, status, output_json, error FROM branches "
            "WHERE execution_id = ? AND place >= ? AND place < ?",
            (execution_id, prefix, prefix + "\uffff"),
        ).fetchall()
        return {
            str(row[0]): BranchRow(
                str(row[0]),
                str(row[1]),
                None if row[2] is None else str(row[2]),
                None if row[3] is None else bytes(row[3]),
            )
            for row in rows
        }

    async def save(
        self, fence: Fence, execution_id: str, branch: BranchRow, *, now: datetime
    ) -> None:
        with self._db.transaction() as connection:
            self._db.check_fence(connection, fence)
            connection.execute(
                "INSERT INTO branches "
                "(execution_id, place, status, output_json, error, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (execution_id, place) DO UPDATE SET "
                "status = excluded.status, output_json = excluded.output_json, "
                "error = excluded.error, updated_at = excluded.updated_at",
                (
                    execution_id,
                    branch.place,
                    branch.status,
                    branch.output_json,
                    branch.error,
                    to_micros(now),
                ),
            )
