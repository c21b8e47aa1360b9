"""Answering a pause by its id: the checks, recording the decision, then moving the tree.

A resume has two phases. 1. Record the decision — one path for every answer, whether it
decides its pause alone or is one vote of several (a `Ballot` says how it counts): the shape,
the lookup by ``(tenant_id, pause_id)``, who may answer, an answer given before, the decision's
validation, then the record through the engine's door (Pending → Resolved atomically, or the
vote counted; a second answer gets `NotPausedError` and moves nothing). 2. Move the tree: take
its lease and run a pass, which takes every resolved pause.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from agboss.components import ToolSpec
from agboss.context import DEFAULT_TENANT_ID
from agboss.dto import ToolCallApprovalDecisionDto
from agboss.engine import TOOL_STEP, Interpretation, intent_of, lacking, shows_answers, tool_of
from agboss.enums import OnInterrupted, PauseResolution, PauseStatus
from agboss.errors import (
    AgbossError,
    AnswerNotMovedError,
    NotPausedError,
    StoreError,
    StoreOutcomeUnknownError,
    StoreUnavailableError,
    UnknownPauseError,
    VersionNotServedError,
)
from agboss.observability import span
from agboss.pauses._answers import (
    AnswerReceipt,
    Ballot,
    Credentials,
    Given,
    Recorded,
    answering_for,
    check_not_owner,
    check_owner,
    check_shape,
    check_unclaimed,
    closed_as,
    credential,
    expired,
    others_answer,
    read_back,
    read_decision,
    shown,
    tell_answered,
    validated,
)
from agboss.pauses._voting import VoteBallot
from agboss.records import ExecutionOutput, PauseAnswer, PauseRecord, pause_ref, shown_pause_id
from agboss.store.protocol import ExecutionRow, Store
from agboss.store.writes import AppendStep, ResolvePause

if TYPE_CHECKING:
    from agboss.engine import Engine

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
    # A vote that left its question waiting, or a tree left to a build that serves it: read.
    if recorded.undecided or recorded.left:
        return await engine.get(execution_id, tenant_id=recorded.tenant_id, record=record)
    if recorded.in_doubt:
        raise AnswerNotMovedError(
            "the answer was recorded, but the store failed as it committed, so this call "
            "cannot tell whether it holds the tree: the tree moves with the recovery sweep",
            execution_id=execution_id,
        )
    try:
        return await engine.move(execution_id, record=record, held=recorded.held)
    except VersionNotServedError:
        # Asked here, then moved to a later build by its continuation: left to that build.
        return await engine.get(execution_id, tenant_id=recorded.tenant_id, record=record)
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
    move: bool = True,
    repeat_ok: bool = False,
) -> Recorded:
    """The first phase of an answer — one path for an answer that decides its pause and for
    a vote (``approvals=``: `VoteBallot`): every check, then the decision recorded (with
    ``move``, an answer's with the tree's lease acquired in the same commit when it is free;
    without, the answer is left for any instance's pass or sweep).

    With ``repeat_ok``, an answer that repeats the one recorded gets its receipt again
    (``repeated=True``, nothing to move) instead of `NotPausedError`; checked before a reply
    is read, so a retried reply costs no second model call.
    """
    runtime = engine.runtime
    check_shape(decision, reply, runtime.assembly.spec.limits)
    pause_id = credentials.pause_id
    tenant = credentials.tenant_id or DEFAULT_TENANT_ID
    # A question this instance asked is checked as stored (a reply, whose reading costs a
    # model call, is checked against the pause as it is now): its write says if it waits.
    kept = runtime.memory.asked.take(tenant, pause_id) if reply is None else None
    found = kept or await runtime.store.pauses.find_with_execution(tenant, pause_id)
    if found is None:
        raise UnknownPauseError()
    pause, row = found
    if row.workflow not in runtime.assembly.workflows_by_name:
        raise lacking(pause.root_execution_id, f"the workflow {row.workflow!r}")
    if await engine.continue_waiting(pause.root_execution_id, row):
        # Moved to this build by its continuation: its question is read as asked now.
        kept = None
        found = await runtime.store.pauses.find_with_execution(tenant, pause_id)
        if found is None:
            raise UnknownPauseError()
        pause, row = found
    tool_of(runtime, pause)  # what the answer is read with: refused here if this build lacks it
    responder = credential(pause, credentials.owner_id, credentials.answered_by)
    given = Given(responder, decision, reply, await answering_for(engine, pause, row, responder))
    ballot: Ballot = (
        _Alone(engine, pause, row, kept is not None)
        if pause.votes is None
        else VoteBallot(engine, pause, row, pause.votes)
    )
    ballot.check(given)
    again = ballot.again(given, repeat_ok=repeat_ok)
    if again is not None:
        return Recorded(again, tenant_id=pause.tenant_id)
    if pause.status is not PauseStatus.PENDING:  # closed: no reply is read for nothing
        raise NotPausedError(closed_as(pause))
    if expired(pause, runtime.clock.now()):
        raise NotPausedError("expired")  # its deadline passed: the tree's next pass decides
    valid, read = await read_decision(engine, pause, row, decision, reply)
    ballot.check_decision(valid)
    with span(  # the answer recorded: who, through which role, for whom
        "answer",
        tool=pause.ask.tool,
        channel=pause.channel,
        execution_id=pause.execution_id,
        root_execution_id=pause.root_execution_id,
        tenant_id=pause.tenant_id,
        on_behalf_of=given.on_behalf_of,
        approved=valid.approved,
    ):
        if move and not await engine.serves(pause.root_execution_id, row):
            # Recorded here all the same, and announced: a build that serves the tree moves it.
            recorded = await ballot.record(given, valid, read, move=False, repeat_ok=repeat_ok)
            return replace(recorded, left=True, tenant_id=pause.tenant_id)
        return await ballot.record(given, valid, read, move=move, repeat_ok=repeat_ok)


@dataclass(frozen=True, slots=True)
class _Alone:
    """An answer that decides its pause by itself (a `Ballot`): Pending → Resolved with its
    audit entry, and the tree's lease for the pass that takes it, in one commit."""

    engine: Engine
    pause: PauseRecord
    row: ExecutionRow
    kept: bool
    """The pause was read from what this instance keeps of the questions it asked."""

    def check(self, given: Given) -> None:
        """Raises unless the answer may be taken: the thread's owner's (or their delegate's)
        for an owner's pause, not the owner's under ``distinct_from_owner`` — neither the
        delegate nor whom they answer for — and not while someone else's claim holds (unless
        the role takes others' answers)."""
        check_owner(self.pause, self.row, given.answerer)
        for person in dict.fromkeys((given.responder, given.answerer)):
            check_not_owner(self.engine, self.pause, self.row, person)
        check_unclaimed(self.engine, self.pause, given.answerer)

    def again(self, given: Given, *, repeat_ok: bool) -> AnswerReceipt | None:
        """The receipt of the answer this one repeats, with ``repeat_ok``."""
        if not repeat_ok:
            return None
        return _repeated(self.engine, self.pause, self.row, given)

    def check_decision(self, decision: ToolCallApprovalDecisionDto) -> None:
        """Any valid decision decides the pause (its arguments' overrides included)."""

    async def record(
        self,
        given: Given,
        decision: ToolCallApprovalDecisionDto,
        read: Interpretation | None,
        *,
        move: bool,
        repeat_ok: bool,
    ) -> Recorded:
        """Records the answer through the engine's door (`Engine.record_answer`).

        Raises:
            NotPausedError: The pause was answered, withdrawn or expired since it was read.
            UnknownPauseError: It was removed since it was read.
        """
        engine, pause, row = self.engine, self.pause, self.row
        runtime = engine.runtime
        store = runtime.store
        now = runtime.clock.now()
        responder = given.responder
        answer = PauseAnswer(
            decision=decision,
            responder=responder,
            reply=given.reply,
            usage=None if read is None else read.usage,
            decided_by=None if read is None else read.reading.decider,
            reading=None if read is None else read.reading,
            on_behalf_of=given.on_behalf_of,
        )
        tool_spec, channel = tool_of(runtime, pause)
        resolve = ResolvePause(
            pause,
            PauseStatus.RESOLVED,
            PauseResolution.REPLIED,
            answer,
            now,
            tell=shows_answers(channel),
            answerer=None if others_answer(channel) else given.answerer,
        )
        intents = _intents(pause, tool_spec, decision, now) if move else ()
        # A root read from what this instance keeps may have moved to a later build since.
        version = row.workflow_version if row.execution_id == pause.root_execution_id else None
        in_doubt = False
        try:
            resolved, held = await engine.record_answer(
                resolve, move=move, intents=intents, version=version
            )
        except StoreOutcomeUnknownError as unknown:
            resolved, held, in_doubt = await _settled(store, resolve, unknown), None, move
        if resolved is None:
            current = await store.pauses.find_by_tenant_id_and_pause_id(
                pause.tenant_id, pause.pause_id
            )
            if repeat_ok and current is not None:  # the same answer, recorded by a retry
                again = _repeated(engine, current, row, given)
                if again is not None:
                    return Recorded(again)
            if current is None and self.kept:  # kept, then removed (retention)
                raise UnknownPauseError()
            if current is not None and expired(current, runtime.clock.now()):
                raise NotPausedError("expired")
            if current is not None and current.status is PauseStatus.PENDING:
                # Claimed since it was read: by someone the answerer stands in for, or not.
                standing_in = await answering_for(engine, current, row, given.responder)
                if standing_in is not None and standing_in != given.on_behalf_of:
                    standing = _Alone(engine, current, row, kept=False)
                    delegated = replace(given, on_behalf_of=standing_in)
                    standing.check(delegated)
                    return await standing.record(
                        delegated, decision, read, move=move, repeat_ok=repeat_ok
                    )
                check_unclaimed(engine, current, given.answerer)
            raise NotPausedError(closed_as(current) if current else "gone")
        await tell_answered(engine, resolved, row, responder, decision, now)
        receipt = AnswerReceipt(
            pause_id=shown_pause_id(resolved.pause_id, resolved.answered_by),
            pause_ref=pause_ref(resolved.pause_id),
            execution_id=resolved.root_execution_id,
            thread_id=row.thread_id,
            decision=shown(engine, resolved, row, decision),
            responder=responder,
        )
        return Recorded(receipt, held, in_doubt)


def _intents(
    pause: PauseRecord, tool: ToolSpec, decision: ToolCallApprovalDecisionDto, now: datetime
) -> tuple[AppendStep, ...]:
    """The intent of the call an approval lets run, for a tool that must not run twice:
    journaled with the answer if its commit acquires the lease, so that the pass that runs the
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
    engine: Engine, pause: PauseRecord, row: ExecutionRow, given: Given
) -> AnswerReceipt | None:
    """The receipt of the answer already recorded on this pause when this one repeats it (the
    same answerer, and the same words or the same decision once validated): a retried
    webhook. ``None`` when it was answered otherwise, withdrawn, or still waits."""
    recorded = pause.answer
    responder, reply = given.responder, given.reply
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
            valid = validated(engine, given.decision, pause, row)
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
