"""`SqlitePausedExecutionRepository` and the audit trail's `SqliteExecutionRecordRepository`."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from agboss.enums import PauseResolution, PauseStatus
from agboss.outputs import PendingPause
from agboss.pauses.model import PauseAnswer, PauseAnswerRecord, PauseRecord
from agboss.store.protocol import Fence
from agboss.store.rows import PAUSE_COLUMNS, PENDING_COLUMNS, pause_of, pending_of
from agboss.store.sqlite.database import SqliteDatabase
from agboss.store.times import to_micros

__all__ = ["SqliteExecutionRecordRepository", "SqlitePausedExecutionRepository"]


class SqlitePausedExecutionRepository:
    """Pauses in SQLite: every status change is one conditional UPDATE … RETURNING."""

    def __init__(self, database: SqliteDatabase) -> None:
        self._db = database

    async def find_by_step(self, execution_id: str, step_key: str) -> PauseRecord | None:
        row = self._db.connection.execute(
            f"SELECT {PAUSE_COLUMNS} FROM pauses WHERE execution_id = ? AND step_key = ?",
            (execution_id, step_key),
        ).fetchone()
        return None if row is None else pause_of(row)

    async def insert(self, fence: Fence, pause: PauseRecord) -> PauseRecord:
        with self._db.transaction() as connection:
            self._db.check_fence(connection, fence)
            seq = connection.execute(
                f"INSERT INTO pauses ({PAUSE_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM pauses "
                "WHERE root_execution_id = ?), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "RETURNING seq",
                (
                    pause.pause_id,
                    pause.tenant_id,
                    pause.step_key,
                    pause.root_execution_id,
                    pause.execution_id,
                    pause.root_execution_id,
                    pause.status.value,
                    None,
                    0,
                    pause.answered_by.value,
                    pause.channel,
                    pause.agent,
                    pause.ask.model_dump_json(),
                    pause.step.model_dump_json(),
                    None,
                    to_micros(pause.asked_at),
                    None,
                    pause.path,
                    pause.item_index,
                ),
            ).fetchone()[0]
        return replace(pause, seq=int(seq))

    async def find_by_tenant_id_and_pause_id(
        self, tenant_id: str, pause_id: str
    ) -> PauseRecord | None:
        row = self._db.connection.execute(
            f"SELECT {PAUSE_COLUMNS} FROM pauses WHERE tenant_id = ? AND pause_id = ?",
            (tenant_id, pause_id),
        ).fetchone()
        return None if row is None else pause_of(row)

    async def mark_sent(self, tenant_id: str, pause_id: str) -> PauseStatus | None:
        row = self._db.connection.execute(
            "UPDATE pauses SET is_sent = 1 WHERE tenant_id = ? AND pause_id = ? RETURNING status",
            (tenant_id, pause_id),
        ).fetchone()
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
        row = self._db.connection.execute(
            "UPDATE pauses SET status = ?, resolution = ?, answer_json = ?, resolved_at = ? "
            "WHERE tenant_id = ? AND pause_id = ? AND status = 'pending' "
            f"RETURNING {PAUSE_COLUMNS}",
            (
                status.value,
                resolution.value,
                answer.model_dump_json(),
                to_micros(now),
                tenant_id,
                pause_id,
            ),
        ).fetchone()
        return None if row is None else pause_of(row)

    async def take(self, tenant_id: str, pause_id: str) -> None:
        self._db.connection.execute(
            "UPDATE pauses SET status = 'taken' "
            "WHERE tenant_id = ? AND pause_id = ? AND status = 'resolved'",
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
        row = self._db.connection.execute(
            "UPDATE pauses SET status = 'cancelled', resolution = ?, resolved_at = ? "
            "WHERE tenant_id = ? AND pause_id = ? AND status = 'pending' "
            f"RETURNING {PAUSE_COLUMNS}",
            (resolution.value, to_micros(now), tenant_id, pause_id),
        ).fetchone()
        return None if row is None else pause_of(row)

    async def find_by_root(
        self, root_execution_id: str, statuses: tuple[PauseStatus, ...]
    ) -> list[PauseRecord]:
        marks = ", ".join("?" * len(statuses))
        rows = self._db.connection.execute(
            f"SELECT {PAUSE_COLUMNS} FROM pauses "
            f"WHERE root_execution_id = ? AND status IN ({marks}) ORDER BY seq",
            (root_execution_id, *(status.value for status in statuses)),
        ).fetchall()
        return [pause_of(row) for row in rows]

    async def list_pending(self, root_execution_id: str) -> list[PendingPause]:
        rows = self._db.connection.execute(
            f"SELECT {PENDING_COLUMNS} FROM pauses WHERE root_execution_id = ? "
            "AND status = 'pending' ORDER BY answered_by = 'channel', seq",
            (root_execution_id,),
        ).fetchall()
        return [pending_of(row, root_execution_id) for row in rows]

    async def find_under(
        self, root_execution_id: str, path: str, statuses: tuple[PauseStatus, ...]
    ) -> list[PauseRecord]:
        marks = ", ".join("?" * len(statuses))
        rows = self._db.connection.execute(
            f"SELECT {PAUSE_COLUMNS} FROM pauses WHERE root_execution_id = ? "
            f"AND status IN ({marks}) AND branch_path >= ? AND branch_path < ? ORDER BY seq",
            (root_execution_id, *(s.value for s in statuses), path, path + "\uffff"),
        ).fetchall()
        return [pause_of(row) for row in rows]

    async def delete_resolved_before(self, cutoff: datetime) -> int:
        cursor = self._db.connection.execute(
            "DELETE FROM pauses WHERE status IN ('taken', 'cancelled') AND resolved_at < ?",
            (to_micros(cutoff),),
        )
        return cursor.rowcount


class SqliteExecutionRecordRepository:
    """The audit trail in SQLite: one row per pause, written once."""

    def __init__(self, database: SqliteDatabase) -> None:
        self._db = database

    async def save_pause_answer(
        self, tenant_id: str, root_execution_id: str, answer: PauseAnswerRecord
    ) -> None:
        self._db.connection.execute(
            "INSERT INTO pause_answers "
            "(tenant_id, root_execution_id, seq, step_key, execution_id, entry_json) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
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
        rows = self._db.connection.execute(
            "SELECT entry_json FROM pause_answers "
            "WHERE tenant_id = ? AND root_execution_id = ? ORDER BY seq",
            (tenant_id, root_execution_id),
        ).fetchall()
        return [PauseAnswerRecord.model_validate_json(row[0]) for row in rows]
