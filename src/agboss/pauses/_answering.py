"""Answering a pause by its id: the checks, recording the decision, then moving the tree.

A resume has two phases. 1. Record the decision: the shape, the lookup by
``(tenant_id, pause_id)``, who may answer, the decision's validation, then Pending → Resolved
atomically (a second answer gets `NotPausedError` and moves nothing). 2. Move the tree: take
its lease and run a pass, which takes every resolved pause.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from agboss.components._specs import ToolSpec
from agboss.context import DEFAULT_TENANT_ID
from agboss.dto import ToolCallApprovalDecisionDto
from agboss.engine._channels import tool_of
from agboss.engine._decisions import validate_decision
from agboss.engine._frame import TOOL_STEP, intent_of
from agboss.engine._interpreting import interpret_reply
from agboss.engine._lease import Taken
from agboss.enums import OnInterrupted, PauseAnswerer, PauseResolution, PauseStatus
from agboss.errors import (
    AgbossError,
    AnswerNotMovedError,
    DtoValidationError,
    NotPausedError,
    PauseAnswererError,
    ReplyInterpreterMissingError,
    StoreError,
    StoreOutcomeUnknownError,
    StoreUnavailableError,
    ThreadOwnerError,
    UnknownPauseError,
)
from agboss.inputs import InputLimits, check_depth, check_text
from agboss.observability._events import ExecutionEvent, ExecutionEventKind, emit
from agboss.observability._logs import log_event
from agboss.records._outputs import ExecutionOutput
from agboss.records._pauses import (
    ExecutionResumeEvent,
    PauseAnswer,
    PauseRecord,
    shown_pause_id,
)
from agboss.store.protocol import ExecutionRow, Store
from agboss.store.writes import AppendStep, ResolvePause

if TYPE_CHECKING:
    from agboss.engine._engine import Engine

__all__ = ["AnswerReceipt", "Recorded", "move_answered", "record_answer"]


def _check_shape(decision: object, reply: object, limits: InputLimits) -> None:
    if (decision is None) == (reply is None):
        raise DtoValidationError(
            "a resume takes exactly one of decision= or reply=",
            hint="pass decision=ToolCallApprovalDecisionDto(...) or reply='the answer in words'",
        )
    if reply is None:
        # Before anything reads it: the lookup's repeat check, the masks, the validation.
        if isinstance(decision, ToolCallApprovalDecisionDto):
            check_depth(decision.override_arguments, "override_arguments")
        else:
            check_depth(decision, "decision")
        return
    check_text(reply, "reply", limits.reply_length, "reply_length")
    assert isinstance(reply, str)
    if not reply.strip():
        raise DtoValidationError(
            "the reply is empty", hint="pass the person's words, or answer with decision="
        )


def _check_answerer(
    pause: PauseRecord, row: ExecutionRow, owner_id: str | None, answered_by: str | None
) -> str:
    """Who answers, once the credential fits the pause; raises otherwise."""
    if pause.answered_by is PauseAnswerer.THREAD_OWNER:
        if answered_by is not None or owner_id is None:
            instead = ", not answered_by=" if answered_by is not None else ""
            raise PauseAnswererError(
                "this pause is answered by the thread's owner",
                hint=f"pass owner_id=<the thread's owner>{instead}",
            )
        if owner_id != row.owner_id:
            raise ThreadOwnerError("owner_id is not the owner of the pause's thread")
        return owner_id
    if owner_id is not None or answered_by is None:
        instead = ", not owner_id=" if owner_id is not None else ""
        raise PauseAnswererError(
            "this pause is answered through its channel",
            hint="pass answered_by=<who answered, as the channel authenticated them>" + instead,
        )
    return answered_by


def _unmasked(
    engine: Engine, decision: object, pause: PauseRecord, row: ExecutionRow, dto: type[BaseModel]
) -> object:
    """The decision with its override arguments handed back as ``pending`` showed them turned
    back into the real values (see `PiiOutside.unmasked`)."""
    if isinstance(decision, ToolCallApprovalDecisionDto):
        overrides: object = decision.override_arguments
    elif isinstance(decision, Mapping):
        overrides = decision.get("override_arguments")
    else:
        return decision
    if not isinstance(overrides, Mapping):
        return decision
    assembly = engine.runtime.assembly
    kept = assembly.pii_outside.unmasked(
        overrides, pause.ask.arguments, dto, assembly.pii_policy(row.workflow)
    )
    if kept is overrides:
        return decision
    if isinstance(decision, ToolCallApprovalDecisionDto):
        return decision.model_copy(update={"override_arguments": kept})
    return {**decision, "override_arguments": kept}


@dataclass(frozen=True, slots=True)
class AnswerReceipt:
    """An answer recorded: what `App.answer` returns at once, before the tree moves.

    Attributes:
        pause_id: The pause answered, as results may show it (``None`` for a channel pause).
        execution_id: The root execution it waits in; `App.get` reads where it stands.
        thread_id: Its thread.
        decision: The decision recorded (validated; read from the reply for ``reply=``),
            masked like the audit trail: the tool gets the real values.
        responder: Who answered.
        repeated: This answer repeats one already recorded (a retried webhook: the same
            answerer, the same decision or words); nothing new was recorded.
    """

    pause_id: str | None
    execution_id: str
    thread_id: str
    decision: ToolCallApprovalDecisionDto
    responder: str
    repeated: bool = False


@dataclass(frozen=True, slots=True)
class Recorded:
    """What the first phase of an answer recorded, and the tree's lease it took for the
    second (``None``: not taken — held elsewhere, not asked for, or nothing to move)."""

    receipt: AnswerReceipt
    taken: Taken | None = None
    in_doubt: bool = False
    """The commit's outcome was learnt by reading the pause back: whether it also took the
    tree's lease is not known, so this call does not move the tree (the recovery sweep does,
    once a lease it may hold expired)."""

    @property
    def to_move(self) -> bool:
        """Whether this call moves the tree: a new answer whose commit is known."""
        return not (self.receipt.repeated or self.in_doubt)


async def move_answered(engine: Engine, recorded: Recorded, *, record: bool) -> ExecutionOutput:
    """The second phase of an answer: the tree moved, with the lease the first phase took (or
    waiting for it); see `App.resume`.

    Raises:
        AnswerNotMovedError: The store failed while the tree moved, or while the answer was
            committed: the answer is recorded all the same (a `StoreError` here would say it
            was refused).
    """
    execution_id = recorded.receipt.execution_id
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


def _closed_as(pause: PauseRecord) -> str:
    """How a closed pause is said to a late answer: ``escalated`` for a question asked of
    another role (under a new id), else its status."""
    if pause.resolution is PauseResolution.ESCALATED:
        return "escalated"
    return pause.status.value


def _expired(pause: PauseRecord, now: datetime) -> bool:
    """Whether a waiting pause's deadline has passed: no answer is taken after it."""
    return (
        pause.status is PauseStatus.PENDING
        and pause.expires_at is not None
        and pause.expires_at <= now
    )


async def record_answer(
    engine: Engine,
    pause_id: str,
    *,
    decision: ToolCallApprovalDecisionDto | Mapping[str, Any] | None,
    reply: str | None,
    tenant_id: str | None,
    owner_id: str | None,
    answered_by: str | None,
    take_lease: bool = True,
    repeat_ok: bool = False,
) -> Recorded:
    """The first phase of an answer: every check, then the decision recorded (with the
    tree's lease taken in the same commit when it is free, unless ``take_lease=False``: the
    answer is then left for any instance's pass or sweep).

    With ``repeat_ok``, an answer that repeats the one recorded gets its receipt again
    (``repeated=True``, nothing to move) instead of `NotPausedError`; checked before a reply
    is read, so a retried reply costs no second model call.
    """
    runtime = engine.runtime
    limits = runtime.assembly.spec.limits
    _check_shape(decision, reply, limits)
    store = runtime.store
    tenant = tenant_id or DEFAULT_TENANT_ID
    found = await store.pauses.find_with_execution(tenant, pause_id)
    if found is None:
        raise UnknownPauseError()
    pause, row = found
    responder = _check_answerer(pause, row, owner_id, answered_by)
    repeated = _repeated(engine, pause, row, responder, decision, reply) if repeat_ok else None
    if repeated is not None:
        return Recorded(repeated)
    if pause.status is not PauseStatus.PENDING:  # closed: no reply is read for nothing
        raise NotPausedError(_closed_as(pause))
    if _expired(pause, runtime.clock.now()):
        raise NotPausedError("expired")  # its deadline passed: the tree's next pass decides
    tool_spec, channel = tool_of(runtime, pause)
    if reply is not None:
        if channel.role is None or channel.role.reply_interpreter is None:
            raise ReplyInterpreterMissingError(
                f"{channel.name} has no reply interpreter to read a free-text reply",
                hint="answer with decision=, or name a reply_interpreter= on the channel role",
            )
        interpretation = await interpret_reply(engine, pause, row, reply)
        valid, usage = interpretation.decision, interpretation.usage
    else:
        given = _unmasked(engine, decision, pause, row, tool_spec.input)
        valid = validate_decision(given, tool_spec.name, tool_spec.input, limits, pause.ask.kind)
        usage = None
    now = runtime.clock.now()
    answer = PauseAnswer(decision=valid, responder=responder, reply=reply, usage=usage)
    # The decision and its audit entry, and the tree's lease for the pass that takes it: one
    # commit.
    resolve = ResolvePause(pause, PauseStatus.RESOLVED, PauseResolution.REPLIED, answer, now)
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
        if current is not None and _expired(current, runtime.clock.now()):
            raise NotPausedError("expired")
        raise NotPausedError(_closed_as(current) if current else "gone")
    log_event(
        runtime.logger,
        logging.INFO,
        "run.answered",
        "a question of execution %(execution_id)s was answered by %(answered_by)s: %(verdict)s",
        execution_id=resolved.root_execution_id,
        tenant_id=tenant,
        answered_by=responder,
        verdict="approved" if valid.approved else "rejected",
    )
    emit(
        lambda: ExecutionEvent(
            ExecutionEventKind.PAUSE_ANSWERED,
            resolved.execution_id,
            now,
            agent=resolved.agent,
            tool=resolved.ask.tool,
            call_id=resolved.ask.call_id,
            pause_id=shown_pause_id(resolved.pause_id, resolved.answered_by),
            answered_by=responder,
            approved=valid.approved,
        )
    )
    await engine.hooks.on_resume(
        ExecutionResumeEvent(
            tenant_id=tenant,
            thread_id=row.thread_id,
            execution_id=resolved.root_execution_id,
            pause_id=shown_pause_id(resolved.pause_id, resolved.answered_by),
            answered_by=responder,
            channel=resolved.channel,
            decision=valid,
        )
    )
    receipt = AnswerReceipt(
        pause_id=shown_pause_id(resolved.pause_id, resolved.answered_by),
        execution_id=resolved.root_execution_id,
        thread_id=row.thread_id,
        decision=_shown(engine, resolved, row, valid),
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
    try:
        current = await store.pauses.find_by_tenant_id_and_pause_id(pause.tenant_id, pause.pause_id)
    except StoreError as error:
        raise unknown from error
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
        tool_spec, _ = tool_of(engine.runtime, pause)
        try:
            given = _unmasked(engine, decision, pause, row, tool_spec.input)
            valid = validate_decision(
                given,
                tool_spec.name,
                tool_spec.input,
                engine.runtime.assembly.spec.limits,
                pause.ask.kind,
            )
        except AgbossError:
            return None
        if recorded.reply is not None or valid != recorded.decision:
            return None
    return AnswerReceipt(
        pause_id=shown_pause_id(pause.pause_id, pause.answered_by),
        execution_id=pause.root_execution_id,
        thread_id=row.thread_id,
        decision=_shown(engine, pause, row, recorded.decision),
        responder=responder,
        repeated=True,
    )


def _shown(
    engine: Engine, pause: PauseRecord, row: ExecutionRow, decision: ToolCallApprovalDecisionDto
) -> ToolCallApprovalDecisionDto:
    """The decision as a receipt may show it: masked like the audit trail (a receipt leaves
    the process, to a webhook's caller or a page)."""
    outside = engine.runtime.assembly.pii_outside
    return outside.decision(
        decision, pause.agent, pause.ask.tool, pause.ask.arguments, outside.policy(row.workflow)
    )
