"""What a person says of a tool's call cut off under ``OnInterrupted.FAIL``, given to
`App.retry` once they checked whether it took effect.

The failure is final for a plain retry (it would replay into the same failure). With a person's
word it is not: the word is recorded as the answer to the question ``ASK`` would have asked — a
pause of the call's own (``<step>/interrupted-<attempt>``, of kind `PauseKind.INTERRUPTED`),
inserted and resolved in the retry's commit, its answerer the person who retried — so that the
audit trail says who said what, and the retried pass (or one that recovers it) takes it: not
run, the call runs once more with the same idempotency key; ran, the model reads that it ran
and what they said it did.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from agboss.dto import ToolCallApprovalAskDto, ToolCallApprovalDecisionDto
from agboss.engine.instance import Runtime
from agboss.engine.questions._channels import TOOL_INTERRUPTED
from agboss.engine.trees import ATTEMPT, attempt_key, interrupted_key
from agboss.enums import PauseAnswerer, PauseKind, PauseResolution, PauseStatus
from agboss.errors import DtoValidationError, FinalFailureError, ToolInterruptedError
from agboss.inputs import InputLimits, check_flag, check_text
from agboss.records import PauseAnswer, PauseRecord, StepRecord, call_digest, new_pause_id
from agboss.store.protocol import ExecutionRow
from agboss.store.writes import InsertPause, ResolvePause

__all__ = ["CallSaid", "call_said", "said_of_cut_off"]

SAID_THROUGH = "app.retry"
"""The channel an answer given with `App.retry` is recorded as asked through."""


@dataclass(frozen=True, slots=True)
class CallSaid:
    """What a person says of a call cut off mid-call.

    Attributes:
        ran: Whether it took effect.
        result: What it did, in their words (``ran`` only): what the model reads.
        by: Who says so (`App.retry`'s ``retried_by``).
    """

    ran: bool
    result: str | None
    by: str


def call_said(ran: object, result: object, by: str | None, limits: InputLimits) -> CallSaid | None:
    """`App.retry`'s ``call_ran`` and ``call_result``, checked at the edge: ``None`` when not
    given.

    Raises:
        DtoValidationError: ``call_result`` without ``call_ran=True``, none with it, a
            ``call_ran`` that is not a boolean, or no ``retried_by`` to say who says so.
    """
    if ran is None:
        if result is not None:
            raise DtoValidationError(
                "call_result= comes with call_ran=True", hint="pass call_ran=True with it"
            )
        return None
    said_ran = check_flag(ran, "call_ran")
    if by is None:
        raise DtoValidationError(
            "call_ran= is a person's word, recorded with who gave it: retried_by= is missing",
            hint="pass retried_by='ops-lead' (the person who checked)",
        )
    if not said_ran:
        if result is not None:
            raise DtoValidationError(
                "call_result= is what a call that ran did: a call that did not run has none",
                hint="drop call_result=, or pass call_ran=True",
            )
        return CallSaid(False, None, by)
    text = check_text(result, "call_result", limits.reason_length, "reason_length")
    if not text.strip():
        raise DtoValidationError(
            "call_result= must say what the call did: the model reads it",
            hint="pass e.g. call_result='the refund of 40.00 went out (bank ref 7731)'",
        )
    return CallSaid(True, text, by)


async def said_of_cut_off(
    runtime: Runtime,
    root: ExecutionRow,
    failure: ToolInterruptedError,
    said: CallSaid,
    now: datetime,
) -> tuple[InsertPause, ResolvePause]:
    """The writes that record ``said`` as the answer to the cut-off call's question, for the
    retry's commit (the tree's next generation is ``root.generation + 1``).

    Raises:
        FinalFailureError: The call's intent is not in the tree's journal (it was removed).
    """
    found = await _cut_off_call(runtime, root, failure)
    if found is None:
        raise FinalFailureError(failure.code, execution_id=root.execution_id)
    execution_id, key, record = found
    call = record.tool_call
    assert call is not None  # an intent of a tool's run carries its call
    pause_id = new_pause_id()
    arguments = call.arguments or {}
    pause = PauseRecord(
        pause_id=pause_id,
        tenant_id=root.tenant_id,
        step_key=interrupted_key(key, failure.attempt),
        root_execution_id=root.execution_id,
        execution_id=execution_id,
        seq=0,  # numbered by the insert
        status=PauseStatus.PENDING,
        resolution=None,
        is_sent=False,
        answered_by=PauseAnswerer.CHANNEL,
        channel=SAID_THROUGH,
        agent=record.agent.name,
        ask=ToolCallApprovalAskDto(
            tool=call.tool,
            call_id=call.call_id,
            arguments=arguments,
            kind=PauseKind.INTERRUPTED,
            digest=call_digest(
                pause_id, call.tool, runtime.assembly.tool_definition(call.tool), arguments
            ),
        ),
        step=record.model_copy(update={"kind": TOOL_INTERRUPTED}),
        answer=None,
        asked_at=now,
        resolved_at=None,
        item_index=record.item_index,
        child_execution_id=None if execution_id == root.execution_id else execution_id,
        generation=root.generation + 1,
    )
    # Approved runs it again, as an answer to ASK's question does; rejected, it ran.
    decision = ToolCallApprovalDecisionDto(approved=not said.ran, reason=said.result)
    answer = PauseAnswer(decision=decision, responder=said.by)
    resolve = ResolvePause(pause, PauseStatus.RESOLVED, PauseResolution.REPLIED, answer, now)
    return InsertPause(pause), resolve


async def _cut_off_call(
    runtime: Runtime, root: ExecutionRow, failure: ToolInterruptedError
) -> tuple[str, str, StepRecord] | None:
    """The execution, step key and step record of the tree's call whose ``failure.attempt``
    began (its intent is journaled) and left no result — the one the failure names."""
    store = runtime.store
    executions = [node.execution_id for node in await store.executions.outline(root.execution_id)]
    for execution_id in executions or [root.execution_id]:
        journal = await store.journal.load(execution_id)
        for entry in journal.values():
            if entry.kind != ATTEMPT:
                continue
            key, _, _ = entry.key.rpartition("/attempt-")
            record = StepRecord.model_validate_json(entry.record_json)
            call = record.tool_call
            if (
                entry.key == attempt_key(key, failure.attempt)
                and key not in journal
                and call is not None
                and call.tool == failure.tool
            ):
                return execution_id, key, record
    return None
