"""The PostgreSQL repositories of executions, the step journal, leases, branches, the ledger."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from psycopg import AsyncConnection

from agboss.enums import ExecutionStatus
from agboss.errors import ThreadOwnerError
from agboss.models.messages import Usage
from agboss.store.postgres.database import END, PostgresDatabase
from agboss.store.protocol import (
    BranchRow,
    ExecutionRow,
    Fence,
    LedgerEntry,
    StepEntry,
    ThreadRow,
)
from agboss.store.rows import EXECUTION_COLUMNS, execution_of
from agboss.store.times import from_micros, to_micros

__all__ = [
    "PostgresBranchRepository",
    "PostgresBudgetLedgerRepository",
    "PostgresExecutionRepository",
    "PostgresLeaseRepository",
    "PostgresStepJournalRepository",
]


async def _insert_execution(connection: AsyncConnection[Any], row: ExecutionRow) -> None:
    created = to_micros(row.created_at)
    await connection.execute(
        f"INSERT INTO executions ({EXECUTION_COLUMNS}) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
        "ON CONFLICT DO NOTHING",
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


def _usage(row: tuple[Any, ...] | None) -> Usage:
    assert row is not None
    return Usage(
        input_tokens=int(row[0]), output_tokens=int(row[1]), cost=float(row[2]), calls=int(row[3])
    )


class PostgresExecutionRepository:
    """Threads and executions in PostgreSQL."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._db = database

    async def find_thread(self, tenant_id: str, thread_id: str) -> ThreadRow | None:
        row = await self._db.fetchone(
            "SELECT owner_id FROM threads WHERE tenant_id = %s AND thread_id = %s",
            (tenant_id, thread_id),
        )
        return None if row is None else ThreadRow(tenant_id, thread_id, str(row[0]))

    async def begin(self, row: ExecutionRow, *, holder: str, lease_until: datetime) -> Fence:
        now = to_micros(row.created_at)
        async with self._db.transaction() as connection:
            await connection.execute(
                "INSERT INTO threads (tenant_id, thread_id, owner_id, created_at) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (row.tenant_id, row.thread_id, row.owner_id, now),
            )
            cursor = await connection.execute(
                "SELECT owner_id FROM threads WHERE tenant_id = %s AND thread_id = %s",
                (row.tenant_id, row.thread_id),
            )
            owner = await cursor.fetchone()
            if owner is None or owner[0] != row.owner_id:
                raise ThreadOwnerError(f"thread {row.thread_id} belongs to another owner")
            await _insert_execution(connection, row)
            await connection.execute(
                "INSERT INTO leases (root_execution_id, holder, epoch, expires_at) "
                "VALUES (%s, %s, 1, %s)",
                (row.root_execution_id, holder, to_micros(lease_until)),
            )
        return Fence(row.root_execution_id, holder, 1)

    async def find(self, tenant_id: str, execution_id: str) -> ExecutionRow | None:
        row = await self._db.fetchone(
            f"SELECT {EXECUTION_COLUMNS} FROM executions "
            "WHERE execution_id = %s AND tenant_id = %s",
            (execution_id, tenant_id),
        )
        return None if row is None else execution_of(row)

    async def find_by_id(self, execution_id: str) -> ExecutionRow | None:
        row = await self._db.fetchone(
            f"SELECT {EXECUTION_COLUMNS} FROM executions WHERE execution_id = %s",
            (execution_id,),
        )
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
        async with self._db.transaction() as connection:
            await self._db.check_fence(connection, fence)
            cursor = await connection.execute(
                "UPDATE executions SET status = %s, output_json = %s, error = %s, "
                "updated_at = %s WHERE execution_id = %s AND status != 'cancelled'",
                (status.value, output_json, error, to_micros(now), execution_id),
            )
            return cursor.rowcount == 1

    async def find_interrupted(self, now: datetime, limit: int) -> list[str]:
        rows = await self._db.fetchall(
            "SELECT e.execution_id FROM executions AS e "
            "LEFT JOIN leases AS l ON l.root_execution_id = e.execution_id "
            "WHERE e.parent_execution_id IS NULL "
            "AND (l.holder IS NULL OR l.expires_at <= %s) "
            "AND (e.status = 'running' OR (e.status = 'paused' AND EXISTS ("
            "  SELECT 1 FROM pauses AS p WHERE p.root_execution_id = e.execution_id "
            "  AND p.status = 'resolved'))) "
            "ORDER BY e.created_at LIMIT %s",
            (to_micros(now), limit),
        )
        return [str(row[0]) for row in rows]

    async def insert_child(self, fence: Fence, row: ExecutionRow) -> ExecutionRow:
        async with self._db.transaction() as connection:
            await self._db.check_fence(connection, fence)
            await _insert_execution(connection, row)
            cursor = await connection.execute(
                f"SELECT {EXECUTION_COLUMNS} FROM executions WHERE execution_id = %s",
                (row.execution_id,),
            )
            found = await cursor.fetchone()
        assert found is not None
        return execution_of(found)

    async def find_children(self, execution_id: str) -> list[ExecutionRow]:
        rows = await self._db.fetchall(
            f"SELECT {EXECUTION_COLUMNS} FROM executions "
            "WHERE parent_execution_id = %s ORDER BY created_at, execution_id",
            (execution_id,),
        )
        return [execution_of(row) for row in rows]

    async def spend_of(self, execution_id: str, *, tree: bool) -> Usage:
        totals = (
            "SELECT COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0), "
            "COALESCE(SUM(cost), 0.0), COALESCE(SUM(model_calls), 0) FROM executions "
        )
        if tree:  # children's ids extend their parent's: <parent>/<place>
            return _usage(
                await self._db.fetchone(
                    totals + "WHERE execution_id = %s OR "
                    "(execution_id >= %s AND execution_id < %s)",
                    (execution_id, execution_id + "/", execution_id + "/" + END),
                )
            )
        return _usage(await self._db.fetchone(totals + "WHERE execution_id = %s", (execution_id,)))

    async def cancel_under(self, fence: Fence, execution_id: str, *, now: datetime) -> None:
        async with self._db.transaction() as connection:
            await self._db.check_fence(connection, fence)
            await connection.execute(
                "UPDATE executions SET status = 'cancelled', updated_at = %s "
                "WHERE (execution_id = %s OR (execution_id >= %s AND execution_id < %s)) "
                "AND status IN ('running', 'paused')",
                (to_micros(now), execution_id, execution_id + "/", execution_id + "/" + END),
            )

    async def cancel(self, tenant_id: str, thread_id: str, *, now: datetime) -> list[str]:
        rows = await self._db.fetchall(
            "UPDATE executions SET status = 'cancelled', updated_at = %s "
            "WHERE tenant_id = %s AND thread_id = %s AND status IN ('running', 'paused') "
            "RETURNING execution_id, parent_execution_id",
            (to_micros(now), tenant_id, thread_id),
        )
        return [str(row[0]) for row in rows if row[1] is None]


class PostgresStepJournalRepository:
    """The step journal in PostgreSQL: one row per step."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._db = database

    async def load(self, execution_id: str, prefix: str = "") -> dict[str, StepEntry]:
        rows = await self._db.fetchall(
            "SELECT step_key, kind, result_json, record_json, seq FROM steps "
            "WHERE execution_id = %s AND step_key >= %s AND step_key < %s ORDER BY seq",
            (execution_id, prefix, prefix + END),
        )
        return {
            str(row[0]): StepEntry(str(row[0]), str(row[1]), str(row[2]), str(row[3]), int(row[4]))
            for row in rows
        }

    async def append(
        self, fence: Fence, execution_id: str, entry: StepEntry, *, now: datetime
    ) -> None:
        async with self._db.transaction() as connection:
            await self._db.check_fence(connection, fence)
            await connection.execute(
                "INSERT INTO steps (execution_id, step_key, kind, result_json, record_json, "
                "created_at) VALUES (%s, %s, %s, %s, %s, %s)",
                (
                    execution_id,
                    entry.key,
                    entry.kind,
                    entry.result_json,
                    entry.record_json,
                    to_micros(now),
                ),
            )
            if entry.usage is not None:
                await connection.execute(
                    "UPDATE executions SET input_tokens = input_tokens + %s, "
                    "output_tokens = output_tokens + %s, cost = cost + %s, "
                    "model_calls = model_calls + %s WHERE execution_id = %s",
                    (
                        entry.usage.input_tokens,
                        entry.usage.output_tokens,
                        entry.usage.cost,
                        entry.usage.calls,
                        execution_id,
                    ),
                )


class PostgresLeaseRepository:
    """Tree leases in PostgreSQL: acquire and renew are single conditional statements."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._db = database

    async def acquire(
        self, root_execution_id: str, holder: str, *, now: datetime, ttl: timedelta
    ) -> Fence | None:
        row = await self._db.fetchone(
            "INSERT INTO leases (root_execution_id, holder, epoch, expires_at) "
            "VALUES (%s, %s, 1, %s) "
            "ON CONFLICT (root_execution_id) DO UPDATE SET "
            "holder = excluded.holder, epoch = leases.epoch + 1, "
            "expires_at = excluded.expires_at "
            "WHERE leases.holder IS NULL OR leases.expires_at <= %s "
            "RETURNING epoch",
            (root_execution_id, holder, to_micros(now + ttl), to_micros(now)),
        )
        return None if row is None else Fence(root_execution_id, holder, int(row[0]))

    async def renew(self, fence: Fence, *, now: datetime, ttl: timedelta) -> bool:
        changed = await self._db.execute(
            "UPDATE leases SET expires_at = %s "
            "WHERE root_execution_id = %s AND holder = %s AND epoch = %s",
            (to_micros(now + ttl), fence.root_execution_id, fence.holder, fence.epoch),
        )
        return changed == 1

    async def release(self, fence: Fence) -> None:
        await self._db.execute(
            "UPDATE leases SET holder = NULL, expires_at = 0 "
            "WHERE root_execution_id = %s AND holder = %s AND epoch = %s",
            (fence.root_execution_id, fence.holder, fence.epoch),
        )


class PostgresBranchRepository:
    """Launches and their branches in PostgreSQL."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._db = database

    async def start_launch(
        self, fence: Fence, execution_id: str, place: str, *, now: datetime
    ) -> datetime:
        async with self._db.transaction() as connection:
            await self._db.check_fence(connection, fence)
            await connection.execute(
                "INSERT INTO launches (execution_id, place, started_at) VALUES (%s, %s, %s) "
                "ON CONFLICT DO NOTHING",
                (execution_id, place, to_micros(now)),
            )
            cursor = await connection.execute(
                "SELECT started_at FROM launches WHERE execution_id = %s AND place = %s",
                (execution_id, place),
            )
            started = await cursor.fetchone()
        assert started is not None
        return from_micros(int(started[0]))

    async def load(self, execution_id: str, prefix: str) -> dict[str, BranchRow]:
        rows = await self._db.fetchall(
            "SELECT place, status, output_json, error FROM branches "
            "WHERE execution_id = %s AND place >= %s AND place < %s",
            (execution_id, prefix, prefix + END),
        )
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
        async with self._db.transaction() as connection:
            await self._db.check_fence(connection, fence)
            await connection.execute(
                "INSERT INTO branches "
                "(execution_id, place, status, output_json, error, updated_at) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (execution_id, place) DO UPDATE SET "
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


class PostgresBudgetLedgerRepository:
    """The budgets' ledger in PostgreSQL: one row per model call."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._db = database

    async def add(
        self, root_execution_id: str, execution_id: str, caller: str, usage: Usage, *, now: datetime
    ) -> None:
        await self._db.execute(
            "INSERT INTO budget_ledger (root_execution_id, execution_id, caller, input_tokens, "
            "output_tokens, cost, calls, at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
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
        return _usage(
            await self._db.fetchone(
                "SELECT COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0), "
                "COALESCE(SUM(cost), 0.0), COALESCE(SUM(calls), 0) FROM budget_ledger "
                "WHERE root_execution_id = %s",
                (root_execution_id,),
            )
        )

    async def entries(self, root_execution_id: str) -> list[LedgerEntry]:
        rows = await self._db.fetchall(
            "SELECT execution_id, caller, input_tokens, output_tokens, cost, calls, at "
            "FROM budget_ledger WHERE root_execution_id = %s ORDER BY seq",
            (root_execution_id,),
        )
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
