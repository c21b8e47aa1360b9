"""Answering a pause by its id: the checks, recording the decision, then moving the tree.

A resume has two phases. 1. Record the decision: the shape, the lookup by
``(tenant_id, pause_id)``, who may answer, the decision's validation, then Pending → Resolved
atomically (a second answer gets `NotPausedError` and moves nothing). 2. Move the tree: take
its lease and run a pass, which takes every resolved pause.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from agboss.components._specs import ToolSpec
from agboss.context import DEFAULT_TENANT_ID
from agboss.dto import ToolCallApprovalDecisionDto
from agboss.engine._channels import lacking, shows_answers, tool_of
from agboss.engine._frame import TOOL_STEP, intent_of
from agboss.enums import OnInterrupted, PauseResolution, PauseStatus
from agboss.errors import (
    AgbossError,
    AnswerNotMovedError,
    NotPausedError,
    StoreError,
    StoreOutcomeUnknownError,
    StoreUnavailableError,
    UnknownPauseError,
)
from agboss.pauses._answers import (
    AnswerReceipt,
    Credentials,
    Recorded,
    check_not_owner,
    check_owner,
    check_shape,
    closed_as,
    credential,
    expired,
    read_back,
    read_decision,
    shown,
    tell_answered,
    validated,
)
from agboss.pauses._voting import Vote, record_vote
from agboss.records._outputs import ExecutionOutput
from agboss.records._pauses import PauseAnswer, PauseRecord, shown_pause_id
from agboss.records._refs import pause_ref
from agboss.store.protocol import ExecutionRow, Store
from agboss.store.writes import AppendStep, ResolvePause

if TYPE_CHECKING:
    from agboss.engine._engine import Engine

__all__ = ["AnswerReceipt", "Recorded", "move_answered", "record_answer"]


async def move_answered(engine: Engine, recorded: Recorded, *, record: bool) -> ExecutionOutput:
    """The second phase of an answer: the tree moved, with the lease the first phase took (or
    waiting for it); see `App.resume`.

    Raises:
        AnswerNotMovedError: The store failed while the tree moved, or while the answer was
            committed: the answer is recorded all the same (a `StoreError` here would say it
            was refused).
    """
    execution_id = recorded.receipt.execution_id
    if recorded.undecided:  # a vote that left its question waiting: the tree stays as it is
        return await engine.get(execution_id, tenant_id=recorded.tenant_id, record=record)
    if recorded.in_doubt:
        raise AnswerNotMovedError(
            "the answer was recorded, but the store failed as it committed, so this call "
            "cannot tell whether it holds the tree: the tree moves with the recovery sweep",
            execution_id=execution_id,
        )
    try:
        return await engine.move(execution_id, record=record, taken=recorded.taken)
    except StoreError as error:
        raise AnswerNotMovedError(
            "the answer was recorded, but the store failed while the tree was moved on: "
            f"{error.message}",
            execution_id=execution_id,
        ) from error


async def record_answer(
    engine: Engine,
    credentials: Credentials,
    *,
    decision: ToolCallApprovalDecisionDto | Mapping[str, Any] | None,
    reply: str | None,
    take_lease: bool = True,
    repeat_ok: bool = False,
) -> Recorded:
    """The first phase of an answer: every check, then the decision recorded (with the
    tree's lease taken in the same commit when it is free, unless ``take_lease=False``: the
    answer is then left for any instance's pass or sweep). On a question whose role takes
    several approvals, the answer is a vote (`record_vote`).

    With ``repeat_ok``, an answer that repeats the one recorded gets its receipt again
    (``repeated=True``, nothing to move) instead of `NotPausedError`; checked before a reply
    is read, so a retried reply costs no second model call.
    """
    runtime = engine.runtime
    check_shape(decision, reply, runtime.assembly.spec.limits)
    store = runtime.store
    pause_id = credentials.pause_id
    tenant = credentials.tenant_id or DEFAULT_TENANT_ID
    # A question this instance asked is checked as stored (a reply, whose reading costs a
    # model call, is checked against the pause as it is now): its write says if it waits.
    kept = runtime.asked.take(tenant, pause_id) if reply is None else None
    found = kept or await store.pauses.find_with_execution(tenant, pause_id)
    if found is None:
        raise UnknownPauseError()
    pause, row = found
    if row.workflow not in runtime.assembly.workflows_by_name:
        raise lacking(pause.root_execution_id, f"the workflow {row.workflow!r}")
    tool_of(runtime, pause)  # what the answer is read with: refused here if this build lacks it
    responder = credential(pause, credentials.owner_id, credentials.answered_by)
    if pause.votes is not None:
        vote = Vote(responder, decision, reply)
        return await record_vote(
            engine, pause, row, vote, take_lease=take_lease, repeat_ok=repeat_ok
        )
    check_owner(pause, row, responder)
    check_not_owner(engine, pause, row, responder)
    repeated = _repeated(engine, pause, row, responder, decision, reply) if repeat_ok else None
    if repeated is not None:
        return Recorded(repeated)
    if pause.status is not PauseStatus.PENDING:  # closed: no reply is read for nothing
        raise NotPausedError(closed_as(pause))
    if expired(pause, runtime.clock.now()):
        raise NotPausedError("expired")  # its deadline passed: the tree's next pass decides
    valid, usage = await read_decision(engine, pause, row, decision, reply)
    now = runtime.clock.now()
    answer = PauseAnswer(decision=valid, responder=responder, reply=reply, usage=usage)
    # The decision and its audit entry, and the tree's lease for the pass that takes it: one
    # commit.
    tool_spec, channel = tool_of(runtime, pause)
    resolve = ResolvePause(
        pause,
        PauseStatus.RESOLVED,
        PauseResolution.REPLIED,
        answer,
        now,
        tell=shows_answers(channel),
    )
    intents = _intents(pause, tool_spec, valid, now) if take_lease else ()
    in_doubt = False
    try:
        resolved, taken = await engine.record_answer(resolve, move=take_lease, intents=intents)
    except StoreOutcomeUnknownError as unknown:
        resolved, taken, in_doubt = await _settled(store, resolve, unknown), None, take_lease
    if resolved is None:
        current = await store.pauses.find_by_tenant_id_and_pause_id(tenant, pause_id)
        if repeat_ok and current is not None:  # the same answer, recorded by a retry meanwhile
            again = _repeated(engine, current, row, responder, decision, reply)
            if again is not None:
                return Recorded(again)
        if current is None and kept is not None:  # kept, then removed (retention)
            raise UnknownPauseError()
        if current is not None and expired(current, runtime.clock.now()):
            raise NotPausedError("expired")
        raise NotPausedError(closed_as(current) if current else "gone")
    await tell_answered(engine, resolved, row, responder, valid, now)
    receipt = AnswerReceipt(
        pause_id=shown_pause_id(resolved.pause_id, resolved.answered_by),
        pause_ref=pause_ref(resolved.pause_id),
        execution_id=resolved.root_execution_id,
        thread_id=row.thread_id,
        decision=shown(engine, resolved, row, valid),
        responder=responder,
    )
    return Recorded(receipt, taken, in_doubt)


def _intents(
    pause: PauseRecord, tool: ToolSpec, decision: ToolCallApprovalDecisionDto, now: datetime
) -> tuple[AppendStep, ...]:
    """The intent of the call an approval lets run, for a tool that must not run twice:
    journaled with the answer if its commit takes the lease, so that the pass that runs the
    tool needs no commit of its own before it (a tool that runs again anyway needs none)."""
    if (
        not decision.approved
        or pause.step.kind != TOOL_STEP
        or tool.on_interrupted is OnInterrupted.RERUN
    ):
        return ()
    return (AppendStep(pause.execution_id, intent_of(pause.step_key, 1, pause.step), now),)


async def _settled(
    store: Store, resolve: ResolvePause, unknown: StoreOutcomeUnknownError
) -> PauseRecord | None:
    """Whether an answer whose commit's outcome is unknown was recorded, asked of the store
    once more: the pause as this answer resolved it, or ``None`` if another answer or a
    withdrawal closed it first.

    Raises:
        StoreUnavailableError: It was not recorded (the pause still waits): nothing changed.
        StoreOutcomeUnknownError: The store cannot be asked either.
    """
    pause = resolve.pause
    current = await read_back(store, pause, unknown)
    if current is None or current.status is PauseStatus.PENDING:
        raise StoreUnavailableError(
            f"the store failed before it recorded the answer: {unknown.message}",
            hint="nothing was recorded and the pause still waits: answer again",
        ) from unknown
    if current.answer == resolve.answer:
        return current
    return None


def _repeated(
    engine: Engine,
    pause: PauseRecord,
    row: ExecutionRow,
    responder: str,
    decision: ToolCallApprovalDecisionDto | Mapping[str, Any] | None,
    reply: str | None,
) -> AnswerReceipt | None:
    """The receipt of the answer already recorded on this pause when this one repeats it (the
    same answerer, and the same words or the same decision once validated): a retried
    webhook. ``None`` when it was answered otherwise, withdrawn, or still waits."""
    recorded = pause.answer
    if (
        recorded is None
        or pause.status is PauseStatus.PENDING
        or pause.resolution is not PauseResolution.REPLIED
        or recorded.responder != responder
    ):
        return None
    if reply is not None:
        if recorded.reply != reply:
            return None
    else:
        try:
            valid = validated(engine, decision, pause, row)
        except AgbossError:
            return None
        if recorded.reply is not None or valid != recorded.decision:
            return None
    return AnswerReceipt(
        pause_id=shown_pause_id(pause.pause_id, pause.answered_by),
        pause_ref=pause_ref(pause.pause_id),
        execution_id=pause.root_execution_id,
        thread_id=row.thread_id,
        decision=shown(engine, pause, row, recorded.decision),
        responder=responder,
        repeated=True,
    )
