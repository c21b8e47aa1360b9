"""`PostgresPausedExecutionRepository` and the audit trail's `PostgresExecutionRecordRepository`."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from agboss.enums import PauseResolution, PauseStatus
from agboss.outputs import PendingPause
from agboss.pauses.model import PauseAnswer, PauseAnswerRecord, PauseRecord
from agboss.store.postgres.database import END, PostgresDatabase
from agboss.store.protocol import Fence
from agboss.store.rows import PAUSE_COLUMNS, PENDING_COLUMNS, pause_of, pending_of
from agboss.store.times import to_micros

__all__ = ["PostgresExecutionRecordRepository", "PostgresPausedExecutionRepository"]


class PostgresPausedExecutionRepository:
    """Pauses in PostgreSQL: every status change is one conditional UPDATE … RETURNING."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._db = database

    async def find_by_step(self, execution_id: str, step_key: str) -> PauseRecord | None:
        row = await self._db.fetchone(
            f"SELECT {PAUSE_COLUMNS} FROM pauses WHERE execution_id = %s AND step_key = %s",
            (execution_id, step_key),
        )
        return None if row is None else pause_of(row)

    async def insert(self, fence: Fence, pause: PauseRecord) -> PauseRecord:
        async with self._db.transaction() as connection:
            await self._db.check_fence(connection, fence)
            cursor = await connection.execute(
                "INSERT INTO pauses (pause_id, tenant_id, step_key, root_execution_id, "
                "execution_id, status, resolution, is_sent, answered_by, channel, agent, "
                "ask_json, step_json, answer_json, asked_at, resolved_at, branch_path, "
                "item_index) VALUES (%s, %s, %s, %s, %s, %s, NULL, FALSE, %s, %s, %s, %s, %s, "
                "NULL, %s, NULL, %s, %s) RETURNING seq",
                (
                    pause.pause_id,
                    pause.tenant_id,
                    pause.step_key,
                    pause.root_execution_id,
                    pause.execution_id,
                    pause.status.value,
                    pause.answered_by.value,
                    pause.channel,
                    pause.agent,
                    pause.ask.model_dump_json(),
                    pause.step.model_dump_json(),
                    to_micros(pause.asked_at),
                    pause.path,
                    pause.item_index,
                ),
            )
            row = await cursor.fetchone()
        assert row is not None
        return replace(pause, seq=int(row[0]))

    async def find_by_tenant_id_and_pause_id(
        self, tenant_id: str, pause_id: str
    ) -> PauseRecord | None:
        row = await self._db.fetchone(
            f"SELECT {PAUSE_COLUMNS} FROM pauses WHERE tenant_id = %s AND pause_id = %s",
            (tenant_id, pause_id),
        )
        return None if row is None else pause_of(row)

    async def mark_sent(self, tenant_id: str, pause_id: str) -> PauseStatus | None:
        row = await self._db.fetchone(
            "UPDATE pauses SET is_sent = TRUE WHERE tenant_id = %s AND pause_id = %s "
            "RETURNING status",
            (tenant_id, pause_id),
        )
        return None if row is None else PauseStatus(row[0])

    async def resolve(
        self,
        tenant_id: str,
        pause_id: str,
        *,
        status: PauseStatus,
        resolution: PauseResolution,
        answer: PauseAnswer,
        now: datetime,
    ) -> PauseRecord | None:
        row = await self._db.fetchone(
            "UPDATE pauses SET status = %s, resolution = %s, answer_json = %s, resolved_at = %s "
            "WHERE tenant_id = %s AND pause_id = %s AND status = 'pending' "
            f"RETURNING {PAUSE_COLUMNS}",
            (
                status.value,
                resolution.value,
                answer.model_dump_json(),
                to_micros(now),
                tenant_id,
                pause_id,
            ),
        )
        return None if row is None else pause_of(row)

    async def take(self, tenant_id: str, pause_id: str) -> None:
        await self._db.execute(
            "UPDATE pauses SET status = 'taken' "
            "WHERE tenant_id = %s AND pause_id = %s AND status = 'resolved'",
            (tenant_id, pause_id),
        )

    async def cancel_by_tenant_id_and_pause_id(
        self,
        tenant_id: str,
        pause_id: str,
        *,
        resolution: PauseResolution,
        now: datetime,
    ) -> PauseRecord | None:
        row = await self._db.fetchone(
            "UPDATE pauses SET status = 'cancelled', resolution = %s, resolved_at = %s "
            "WHERE tenant_id = %s AND pause_id = %s AND status = 'pending' "
            f"RETURNING {PAUSE_COLUMNS}",
            (resolution.value, to_micros(now), tenant_id, pause_id),
        )
        return None if row is None else pause_of(row)

    async def find_by_root(
        self, root_execution_id: str, statuses: tuple[PauseStatus, ...]
    ) -> list[PauseRecord]:
        rows = await self._db.fetchall(
            f"SELECT {PAUSE_COLUMNS} FROM pauses "
            "WHERE root_execution_id = %s AND status = ANY(%s) ORDER BY seq",
            (root_execution_id, [status.value for status in statuses]),
        )
        return [pause_of(row) for row in rows]

    async def list_pending(self, root_execution_id: str) -> list[PendingPause]:
        rows = await self._db.fetchall(
            f"SELECT {PENDING_COLUMNS} FROM pauses WHERE root_execution_id = %s "
            "AND status = 'pending' ORDER BY answered_by = 'channel', seq",
            (root_execution_id,),
        )
        return [pending_of(row, root_execution_id) for row in rows]

    async def find_under(
        self, root_execution_id: str, path: str, statuses: tuple[PauseStatus, ...]
    ) -> list[PauseRecord]:
        rows = await self._db.fetchall(
            f"SELECT {PAUSE_COLUMNS} FROM pauses WHERE root_execution_id = %s "
            "AND status = ANY(%s) AND branch_path >= %s AND branch_path < %s ORDER BY seq",
            (root_execution_id, [status.value for status in statuses], path, path + END),
        )
        return [pause_of(row) for row in rows]

    async def delete_resolved_before(self, cutoff: datetime) -> int:
        return await self._db.execute(
            "DELETE FROM pauses WHERE status IN ('taken', 'cancelled') AND resolved_at < %s",
            (to_micros(cutoff),),
        )


class PostgresExecutionRecordRepository:
    """The audit trail in PostgreSQL: one row per pause, written once."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._db = database

    async def save_pause_answer(
        self, tenant_id: str, root_execution_id: str, answer: PauseAnswerRecord
    ) -> None:
        await self._db.execute(
            "INSERT INTO pause_answers "
            "(tenant_id, root_execution_id, seq, step_key, execution_id, entry_json) "
            "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
            (
                tenant_id,
                root_execution_id,
                answer.seq,
                answer.step.key,
                answer.execution_id,
                answer.model_dump_json(),
            ),
        )

    async def find_pause_answers_by_tenant_id_and_root_execution_id(
        self, tenant_id: str, root_execution_id: str
    ) -> list[PauseAnswerRecord]:
        rows = await self._db.fetchall(
            "SELECT entry_json FROM pause_answers "
            "WHERE tenant_id = %s AND root_execution_id = %s ORDER BY seq",
            (tenant_id, root_execution_id),
        )
        return [PauseAnswerRecord.model_validate_json(row[0]) for row in rows]
