"""Decoding stored rows, the same for every SQL dialect (columns in the order named here)."""

from __future__ import annotations

import json
from typing import Any

from agboss.dto import ToolCallApprovalAskDto
from agboss.enums import ExecutionStatus, PauseAnswerer, PauseKind, PauseResolution, PauseStatus
from agboss.models import Usage
from agboss.records import (
    PauseAnswer,
    PauseRecord,
    PauseVotes,
    PendingPause,
    StepRecord,
    pause_ref,
    shown_pause_id,
)
from agboss.store._times import from_micros
from agboss.store.protocol import ExecutionRow, StepEntry

__all__ = [
    "AT_NOW",
    "EXECUTION_COLUMNS",
    "EXECUTION_READ",
    "PAUSE_COLUMNS",
    "PENDING_COLUMNS",
    "PENDING_IDS",
    "QUESTION_DUE",
    "STEPS_UNDER",
    "TREE_DUE",
    "by_seq",
    "execution_of",
    "pause_of",
    "pending_of",
    "pending_pause",
    "qualified",
    "step_of",
]


def qualified(columns: str, alias: str) -> str:
    """Columns as ``alias.column``, for a query that joins tables."""
    return ", ".join(f"{alias}.{name.strip()}" for name in columns.split(","))


EXECUTION_COLUMNS = (
    "execution_id, root_execution_id, parent_execution_id, tenant_id, thread_id, owner_id, "
    "workflow, workflow_version, status, input_json, output_json, error_json, created_at, "
    "updated_at, generation, wake_at, fingerprint"
)

EXECUTION_READ = (
    EXECUTION_COLUMNS
    + ", input_tokens, output_tokens, cost, model_calls, resting_until, resting_paths"
)
"""An execution's columns, what its own steps spent, and when its earliest resting step is
due and in which branches (written only as its tree rests)."""

AT_NOW = "COALESCE(CAST(? AS BIGINT), {now})"
"""Now, in a statement: the application's time when given (a test clock), else the
database's (``{now}``, filled in by the dialect)."""

TREE_DUE = f"wake_at <= {AT_NOW}"
"""The one statement of "a tree is due": its wake-up (a resting step's next attempt, a
question's deadline or ladder step) has come, by the application's time when given, else the
database's. The sweep finds such a tree, and the lease's taking starts a pass on it."""

QUESTION_DUE = f"(expires_at <= {AT_NOW} OR next_step_at <= {AT_NOW})"
"""A pending question is due: its deadline, or its ladder's next step, has come (which of a
tree's branches a pass woken by time enters)."""


def execution_of(row: Any) -> ExecutionRow:
    """An executions row as an `ExecutionRow`."""
    values = tuple(row)
    return ExecutionRow(
        execution_id=str(values[0]),
        root_execution_id=str(values[1]),
        parent_execution_id=None if values[2] is None else str(values[2]),
        tenant_id=str(values[3]),
        thread_id=str(values[4]),
        owner_id=str(values[5]),
        workflow=str(values[6]),
        workflow_version=str(values[7]),
        status=ExecutionStatus(values[8]),
        input_json=str(values[9]),
        output_json=None if values[10] is None else str(values[10]),
        error_json=None if values[11] is None else str(values[11]),
        created_at=from_micros(int(values[12])),
        updated_at=from_micros(int(values[13])),
        generation=int(values[14]),
        wake_at=None if values[15] is None else from_micros(int(values[15])),
        fingerprint=None if values[16] is None else str(values[16]),
        spend=(
            # Counters the store summed from validated usages: constructed, not validated.
            Usage.model_construct(
                input_tokens=int(values[17]),
                output_tokens=int(values[18]),
                cost=float(values[19]),
                calls=int(values[20]),
            )
            if len(values) > 17
            else Usage()
        ),
        resting_until=(
            None if len(values) <= 21 or values[21] is None else from_micros(int(values[21]))
        ),
        resting_paths=(
            None if len(values) <= 22 or values[22] is None else tuple(json.loads(values[22]))
        ),
    )


STEPS_UNDER = (
    "SELECT step_key, kind, result_json, record_json, seq FROM steps "
    "WHERE execution_id = ? AND step_key >= ? AND step_key < ? ORDER BY seq"
)
"""An execution's journaled steps whose keys start with a prefix (its parameters: the
execution, the prefix, the prefix + ``KEY_END``), decoded by `step_of`."""


def step_of(row: Any) -> StepEntry:
    """A journaled step from a row of `STEPS_UNDER`."""
    return StepEntry(str(row[0]), str(row[1]), str(row[2]), str(row[3]), int(row[4]))


PAUSE_COLUMNS = (
    "pause_id, tenant_id, step_key, root_execution_id, execution_id, seq, status, resolution, "
    "is_sent, answered_by, channel, agent, ask_json, step_json, answer_json, asked_at, "
    "resolved_at, branch_path, item_index, generation, sent_reference, expires_at, "
    "ladder_step, next_step_at, escalation, votes_json, claimed_by, claimed_until"
)


def by_seq(pause: PauseRecord) -> int:
    """Sorts pauses in the order they were asked."""
    return pause.seq


def pause_of(row: Any) -> PauseRecord:
    """A pauses row as a `PauseRecord`."""
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
        generation=int(row[19]),
        sent_reference=None if row[20] is None else str(row[20]),
        expires_at=None if row[21] is None else from_micros(int(row[21])),
        ladder_step=int(row[22]),
        next_step_at=None if row[23] is None else from_micros(int(row[23])),
        escalation=int(row[24]),
        votes=None if row[25] is None else PauseVotes.model_validate_json(row[25]),
        claimed_by=None if row[26] is None else str(row[26]),
        claimed_until=None if row[27] is None else from_micros(int(row[27])),
    )


PENDING_IDS = (
    "SELECT pause_id FROM pauses WHERE root_execution_id = ? AND status = 'pending' "
    "ORDER BY answered_by = 'channel', seq"
)
"""A tree's pending pauses' ids in the order ``ExecutionOutput.pending`` lists them: the
thread owner's first, then the channels', each in the order asked (a partial index serves it
without a sort)."""

PENDING_COLUMNS = (
    "pause_id, answered_by, agent, channel, item_index, execution_id, ask_json, votes_json"
)


def pending_of(row: Any, root_execution_id: str) -> PendingPause:
    """A row of `PENDING_COLUMNS` as a `PendingPause`, read without the record's detail."""
    answered_by = PauseAnswerer(row[1])
    execution_id = str(row[5])
    pause_id = str(row[0])
    return PendingPause(
        pause_id=shown_pause_id(pause_id, answered_by),
        pause_ref=pause_ref(pause_id),
        answered_by=answered_by,
        agent=str(row[2]),
        channel=str(row[3]),
        item_index=None if row[4] is None else int(row[4]),
        child_execution_id=None if execution_id == root_execution_id else execution_id,
        ask=_ask_of(row[6]),
        votes=None if row[7] is None else PauseVotes.model_validate_json(row[7]),
    )


def _ask_of(ask_json: str) -> ToolCallApprovalAskDto:
    # Written by the store from a validated DTO: constructed, not validated again (its kind
    # made the enum it was; a row from before kinds asks an approval).
    fields = json.loads(ask_json)
    fields["kind"] = PauseKind(fields.get("kind", PauseKind.APPROVAL))
    return ToolCallApprovalAskDto.model_construct(**fields)


def pending_pause(pause: PauseRecord) -> PendingPause:
    """A pause just inserted as `pending_of` would read it back."""
    return PendingPause(
        pause_id=shown_pause_id(pause.pause_id, pause.answered_by),
        pause_ref=pause_ref(pause.pause_id),
        answered_by=pause.answered_by,
        agent=pause.agent,
        channel=pause.channel,
        item_index=pause.item_index,
        child_execution_id=pause.child_execution_id,
        ask=pause.ask,
        votes=pause.votes,
    )
