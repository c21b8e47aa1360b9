"""What the store contract's parts share: a fixed clock, rows and pauses to write, an answer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agboss.dto import ToolCallApprovalAskDto, ToolCallApprovalDecisionDto
from agboss.enums import PauseAnswerer, PauseResolution, PauseStatus
from agboss.models import Usage
from agboss.records import ComponentRecord, PauseAnswer, PauseRecord, StepRecord
from agboss.store.protocol import (
    ExecutionRow,
    Fence,
    StepEntry,
    Store,
)
from agboss.store.writes import (
    BeginExecution,
    ResolvePause,
    write_one,
)

__all__ = [
    "ANSWER",
    "NOW",
    "TTL",
    "Contract",
    "answer_of",
    "make_entry",
    "make_pause",
    "make_row",
]

NOW = datetime(2026, 1, 1, tzinfo=UTC)
TTL = timedelta(seconds=30)
ANSWER = PauseAnswer(decision=ToolCallApprovalDecisionDto(approved=True), responder="u")


def make_row(
    execution_id: str = "ex-1",
    *,
    parent: ExecutionRow | None = None,
    thread_id: str = "th-1",
    owner_id: str = "u",
    tenant_id: str = "acme",
) -> ExecutionRow:
    return ExecutionRow.starting(
        execution_id=execution_id,
        parent=parent,
        tenant_id=tenant_id,
        thread_id=thread_id,
        owner_id=owner_id,
        workflow="office-workflow",
        workflow_version="1",
        input_json='{"text": "x"}',
        now=NOW,
    )


def make_pause(
    pause_id: str = "p" * 32,
    key: str = "1:a#0/turn-0/tool-0",
    *,
    execution_id: str = "ex-1",
    path: str = "",
    answered_by: PauseAnswerer = PauseAnswerer.THREAD_OWNER,
) -> PauseRecord:
    return PauseRecord(
        pause_id=pause_id,
        tenant_id="acme",
        step_key=key,
        root_execution_id="ex-1",
        execution_id=execution_id,
        seq=0,
        status=PauseStatus.PENDING,
        resolution=None,
        is_sent=False,
        answered_by=answered_by,
        channel="expense-approval-channel",
        agent="office-agent",
        ask=ToolCallApprovalAskDto(tool="book-expense-tool", call_id="c1", arguments={"n": 1}),
        step=StepRecord(
            kind="tool-run",
            key=f"{execution_id}/{key}",
            agent=ComponentRecord(kind="agent", name="office-agent"),
            node_id="1:office-agent",
        ),
        answer=None,
        asked_at=NOW,
        resolved_at=None,
        child_execution_id=None if execution_id == "ex-1" else execution_id,
        path=path,
    )


def make_entry(key: str, usage: Usage | None = None) -> StepEntry:
    return StepEntry(key=key, kind="model-call", result_json="{}", record_json="{}", usage=usage)


async def answer_of(
    store: Store, pause_id: str = "p" * 32, status: PauseStatus = PauseStatus.RESOLVED
) -> ResolvePause:
    """The answer of a stored pause (`ResolvePause` is given the record the store has)."""
    pause = await store.pauses.find_by_tenant_id_and_pause_id("acme", pause_id)
    assert pause is not None
    return ResolvePause(pause, status, PauseResolution.REPLIED, ANSWER, NOW)


class Contract:
    """The base of the contract's parts: how a test begins an execution."""

    async def _begin(self, store: Store, row: ExecutionRow | None = None) -> Fence:
        return await write_one(store, BeginExecution(row or make_row(), "a", TTL, NOW))
