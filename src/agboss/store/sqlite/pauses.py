"""`SqlitePausedExecutionRepository` and the audit trail's `SqliteExecutionRecordRepository`."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime
from typing import Any

from agboss.dto import ToolCallApprovalAskDto
from agboss.enums import PauseAnswerer, PauseResolution, PauseStatus
from agboss.outputs import PendingPause
from agboss.pauses.model import PauseAnswer, PauseAnswerRecord, PauseRecord
from agboss.records.model import StepRecord
from agboss.store.protocol import Fence
from agboss.store.sqlite.database import SqliteDatabase, from_micros, to_micros

__all__ = ["SqliteExecutionRecordRepository", "SqlitePausedExecutionRepository"]

_COLUMNS = (
    "pause_id, tenant_id, step_key, root_execution_id, execution_id, seq, status, resolution, "
    "is_sent, answered_by, channel, agent, ask_json, step_json, answer_json, asked_at, "
    "resolved_at, branch_path, item_index"
)


def _pause(row: tuple[Any, ...]) -> PauseRecord:
    step = StepRecord.model_validate_json(row[13])
    execution_id = str(row[4])
    root = str(row[3])
    return PauseRecord(
        pause_id=str(row[0]),
        tenant_id=str(row[1]),
        step_key=str(row[2]),
        root_execution_id=root,
        execution_id=execution_id,
        seq=int(row[5]),
        status=PauseStatus(row[6]),
        resolution=None if row[7] is None else PauseResolution(row[7]),
        is_sent=bool(row[8]),
        answered_by=PauseAnswerer(row[9]),
        channel=str(row[10]),
        agent=str(row[11]),
        ask=ToolCallApprovalAskDto.model_validate_json(row[12]),
        step=step,
        answer=None if row[14] is None else PauseAnswer.model_validate_json(row[14]),
        asked_at=from_micros(int(row[15])),
        resolved_at=None if row[16] is None else from_micros(int(row[16])),
        item_index=None if row[18] is None else int(row[18]),
        child_execution_id=None if execution_id == root else execution_id,
        path=str(row[17]),
    )


class SqlitePausedExecutionRepository:
    """Pauses in SQLite: every status change is one conditional UPDATE … RETURNING."""

    def __init__(self, database: SqliteDatabase) -> None:
        self._db = database

    async def find_by_step(self, execution_id: str, step_key: str) -> PauseRecord | None:
        row = self._db.connection.execute(
            f"SELECT {_COLUMNS} FROM pauses WHERE execution_id = ? AND step_key = ?",
            (execution_id, step_key),
        ).fetchone()
        return None if row is None else _pause(row)

    async def insert(self, fence: Fence, pause: PauseRecord) -> PauseRecord:
        with self._db.transaction() as connection:
            self._db.check_fence(connection, fence)
            seq = connection.execute(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM pauses WHERE root_execution_id = ?",
                (pause.root_execution_id,),
            ).fetchone()[0]
            connection.execute(
                f"INSERT INTO pauses ({_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    pause.pause_id,
                    pause.tenant_id,
                    pause.step_key,
                    pause.root_execution_id,
                    pause.execution_id,
                    seq,
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
            )
        return replace(pause, seq=int(seq))

    async def find_by_tenant_id_and_pause_id(
        self, tenant_id: str, pause_id: str
    ) -> PauseRecord | None:
        row = self._db.connection.execute(
            f"SELECT {_COLUMNS} FROM pauses WHERE tenant_id = ? AND pause_id = ?",
            (tenant_id, pause_id),
        ).fetchone()
        return None if row is None else _pause(row)

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
            f"RETURNING {_COLUMNS}",
            (
                status.value,
                resolution.value,
                answer.model_dump_json(),
                to_micros(now),
                tenant_id,
                pause_id,
            ),
        ).fetchone()
        return None if row is None else _pause(row)

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
            f"RETURNING {_COLUMNS}",
            (resolution.value, to_micros(now), tenant_id, pause_id),
        ).fetchone()
        return None if row is None else _pause(row)

    async def find_by_root(
        self, root_execution_id: str, statuses: tuple[PauseStatus, ...]
    ) -> list[PauseRecord]:
        marks = ", ".join("?" * len(statuses))
        rows = self._db.connection.execute(
            f"SELECT {_COLUMNS} FROM pauses "
            f"WHERE root_execution_id = ? AND status IN ({marks}) ORDER BY seq",
            (root_execution_id, *(status.value for status in statuses)),
        ).fetchall()
        return [_pause(row) for row in rows]

    async def list_pending(self, root_execution_id: str) -> list[PendingPause]:
        rows = self._db.connection.execute(
            "SELECT pause_id, answered_by, agent, channel, item_index, execution_id, ask_json "
            "FROM pauses WHERE root_execution_id = ? AND status = 'pending' "
            "ORDER BY answered_by = 'channel', seq",
            (root_execution_id,),
        ).fetchall()
        pending = []
        for row in rows:
            answered_by = PauseAnswerer(row[1])
            execution_id = str(row[5])
            pending.append(
                PendingPause(
                    pause_id=str(row[0]) if answered_by is PauseAnswerer.THREAD_OWNER else None,
                    answered_by=answered_by,
                    agent=str(row[2]),
                    channel=str(row[3]),
                    item_index=None if row[4] is None else int(row[4]),
                    child_execution_id=(
                        None if execution_id == root_execution_id else execution_id
                    ),
                    # Written by this store from a validated DTO: constructed, not re-validated.
                    ask=ToolCallApprovalAskDto.model_construct(**json.loads(row[6])),
                )
            )
        return pending

    async def find_under(
        self, root_execution_id: str, path: str, statuses: tuple[PauseStatus, ...]
    ) -> list[PauseRecord]:
        marks = ", ".join("?" * len(statuses))
        rows = self._db.connection.execute(
            f"SELECT {_COLUMNS} FROM pauses WHERE root_execution_id = ? "
            f"AND status IN ({marks}) AND branch_path >= ? AND branch_path < ? ORDER BY seq",
            (root_execution_id, *(s.value for s in statuses), path, path + "\uffff"),
        ).fetchall()
        return [_pause(row) for row in rows]

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
