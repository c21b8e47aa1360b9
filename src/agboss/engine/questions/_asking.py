"""Asking a channel to approve a tool call: the pause's record, ``send``, and what comes back.

The pause record is keyed by the waiting step, so a step re-entered (after an answer, or a
retry after a crash) finds the same ``pause_id``; one not yet sent is sent again with it. A
pause its tree's failure withdrew is asked again, under a new id, in the generation that
`App.retry` opened (the record is keyed by the generation too).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from pydantic import BaseModel

from agboss.assembly import ToolChannel
from agboss.components import ApprovalAsk, ChannelAsk, ChannelOutcome, ToolSpec
from agboss.context import StepContext
from agboss.dto import ToolCallApprovalAskDto, ToolCallApprovalDecisionDto
from agboss.engine.questions._channels import (
    ChannelCall,
    emit_pause_event,
    handoffs_of,
    pause_kind,
)
from agboss.engine.questions._decisions import validate_decision
from agboss.engine.questions._ladder import climb, first_step_at
from agboss.engine.questions._quorums import votes_for
from agboss.engine.trees import WAITING, ExecutionFrame, Waiting
from agboss.enums import Decider, OnExpiry, Outcome, PauseKind, PauseResolution, PauseStatus
from agboss.errors import (
    AgentFailedError,
    DtoValidationError,
    LeaseLostError,
    PauseExpiredError,
)
from agboss.observability import ExecutionEventKind
from agboss.observability import decided as metered
from agboss.records import (
    PauseAnswer,
    PauseRecord,
    StandingDecision,
    StepRecord,
    call_digest,
    new_pause_id,
    secret_of,
)
from agboss.store import redacted
from agboss.store.writes import (
    CancelPause,
    ExpirePause,
    FindStanding,
    InsertPause,
    MarkPauseSent,
    ResolvePause,
    TakePause,
)

__all__ = ["Approval", "ask_approval", "spoken"]


@dataclass(frozen=True, slots=True)
class Approval:
    """The decision a waiting call takes, and who made it."""

    decision: ToolCallApprovalDecisionDto
    decided_by: str
    pause: PauseRecord

    @property
    def taken(self) -> tuple[TakePause, ...]:
        """What takes its answer with the step that acts on it (both, or neither): nothing for
        a pause its channel decided at once, which was taken as it was decided."""
        if self.pause.status is not PauseStatus.RESOLVED:
            return ()
        return (TakePause(self.pause.tenant_id, self.pause.pause_id),)


async def ask_approval(
    frame: ExecutionFrame,
    *,
    agent: str,
    channel: ToolChannel,
    tool: ToolSpec,
    step_key: str,
    step: StepRecord,
    context: StepContext,
    args: BaseModel,
    path: str,
) -> Approval | Waiting:
    """The decision on a tool call, asking its channel if need be.

    Returns:
        The decision to take, or what waits while the call waits (or its pause was closed).

    Raises:
        AgentFailedError: The channel's ``send`` threw, or decided something invalid.
    """
    runtime = frame.runtime
    row = frame.row
    assert step.tool_call is not None
    state = frame.state
    # A new tree has no pauses yet; an answered one was read with the pass's lease.
    pause = state.resolved.get((row.execution_id, step_key))
    if pause is None:  # found due with the lease: read once (what the pass does changes it)
        pause = state.due.pop((row.execution_id, step_key), None)
    if pause is None:
        pauses = runtime.store.pauses
        pause = await state.stored(lambda: pauses.find_by_step(row.execution_id, step_key), None)
    if (
        pause is not None
        and pause.status is PauseStatus.CANCELLED
        and state.reopens(pause.generation)
    ):
        pause = None  # withdrawn by the failure its tree was retried from: asked again, anew
    standing: StandingDecision | None = None
    read = False  # whether a standing decision was read for the question (with its commit)
    if pause is None:
        # Committed before its channel is asked: the id the channel gets is durable. Its
        # deadline and its ladder's times count from the one moment it was asked.
        asked_at = runtime.clock.now()
        kind = pause_kind(step.kind)
        votes = await votes_for(
            channel,
            row,
            ApprovalAsk(tool.name, step.tool_call.call_id, args, kind),
            agent=agent,
            node_id=context.node_id,
        )
        pause_id = new_pause_id()
        asked = args.model_dump(mode="json")
        insert = InsertPause(
            PauseRecord(
                pause_id=pause_id,
                tenant_id=row.tenant_id,
                step_key=step_key,
                root_execution_id=row.root_execution_id,
                execution_id=row.execution_id,
                seq=0,
                status=PauseStatus.PENDING,
                resolution=None,
                is_sent=False,
                answered_by=channel.answered_by,
                channel=channel.name,
                agent=agent,
                ask=ToolCallApprovalAskDto(
                    tool=tool.name,
                    call_id=step.tool_call.call_id,
                    arguments=asked,
                    kind=kind,
                    digest=call_digest(
                        pause_id,
                        tool.name,
                        runtime.assembly.tool_definition(tool.name),
                        asked,
                    ),
                ),
                step=step,
                answer=None,
                asked_at=asked_at,
                resolved_at=None,
                item_index=step.item_index,
                child_execution_id=(
                    None if row.execution_id == row.root_execution_id else row.execution_id
                ),
                path=path,
                generation=state.generation,
                expires_at=(
                    None if channel.expires_after is None else asked_at + channel.expires_after
                ),
                next_step_at=first_step_at(channel.ladder, asked_at),
                votes=votes,
            )
        )
        find = _find_standing(frame, insert.pause, channel)
        results = await frame.writes.commit([insert] if find is None else [insert, find])
        pause = results[insert]
        standing, read = (None if find is None else results[find]), True
        if standing is None:
            runtime.memory.asked_here(pause, row)
        emit_pause_event(ExecutionEventKind.PAUSE_ASKED, pause, asked_at)
    channel = channel.asking(pause.channel)  # the role its ladder escalated it to, if any
    if pause.status in (PauseStatus.RESOLVED, PauseStatus.TAKEN):
        return _approval(pause)
    if pause.status is PauseStatus.CANCELLED:
        if pause.resolution is PauseResolution.EXPIRED:  # withdrawn by its deadline, replayed
            raise _expired_error(pause, channel, context)
        return WAITING
    if pause.expires_at is not None and pause.expires_at <= runtime.clock.now():
        return await _expire(frame, pause, channel, context) or WAITING
    if (
        pause.is_sent
        and pause.next_step_at is not None
        and pause.next_step_at <= runtime.clock.now()
    ):
        pause, channel = await climb(frame, pause, channel)
        if pause.status is not PauseStatus.PENDING:  # an answer was recorded first
            return WAITING if pause.status is PauseStatus.CANCELLED else _approval(pause)
    # The tree moves by itself when the deadline passes, and when the ladder's next step is due.
    waiting = Waiting.on_question(pause.expires_at, pause.next_step_at)
    if pause.is_sent:
        return waiting
    if not read:  # stored before and never sent (a pass cut off, an escalation): read it now
        find = _find_standing(frame, pause, channel)
        if find is not None:
            standing = await frame.runtime.store.standing.covering(
                find.tenant_id,
                tool=find.tool,
                role=find.role,
                thread_id=find.thread_id,
                owner_id=find.owner_id,
                now=find.now,
            )
    if standing is not None:
        answer = PauseAnswer(
            decision=_ALLOWED, responder=standing.responder, decided_by=Decider.STANDING
        )
        return await _decide(frame, pause, answer) or waiting
    return await _send(frame, pause, channel, tool, context, args) or waiting


_ALLOWED = ToolCallApprovalDecisionDto(approved=True)
"""What a standing decision decides."""


def _find_standing(
    frame: ExecutionFrame, pause: PauseRecord, channel: ToolChannel
) -> FindStanding | None:
    """What reads a standing decision (`App.allow`) that would approve the call, for a
    question whether it may run — not one a tool asks mid-call, nor whether a call cut off
    runs again (it may have run: a standing yes must not pay twice)."""
    if pause.ask.kind is not PauseKind.APPROVAL or pause.votes is not None:
        return None  # nor one that takes several approvals: one decision is not a quorum
    row = frame.row
    return FindStanding(
        row.tenant_id,
        pause.ask.tool,
        channel.name,
        row.thread_id,
        row.owner_id,
        frame.runtime.clock.now(),
    )


def spoken(span: timedelta) -> str:
    """A deadline as a person says it: ``2 days``, ``48 h``, ``30 min``, ``45 s``."""
    seconds = int(span.total_seconds())
    for unit, size in (("days", 86_400), ("h", 3_600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{count} {'day' if unit == 'days' and count == 1 else unit}"
    return f"{seconds} s"


def _expired_error(
    pause: PauseRecord, channel: ToolChannel, context: StepContext
) -> PauseExpiredError:
    waited = spoken(_waited(pause, channel))
    return PauseExpiredError(
        f"nobody answered {channel.name} about {pause.ask.tool} within {waited}: its deadline "
        "withdrew the question (on_expiry=withdraw)",
        agent=pause.agent,
        node_id=context.node_id,
        hint="handle PauseExpiredError with .on_join_error(...), or app.retry the execution "
        "to ask again",
        tool=pause.ask.tool,
        channel=channel.name,
    )


def _waited(pause: PauseRecord, channel: ToolChannel) -> timedelta:
    """How long the question waited: since it was first asked (before any escalation)."""
    if channel.expires_after is not None:
        return channel.expires_after
    assert pause.expires_at is not None
    return pause.expires_at - pause.asked_at


async def _expire(
    frame: ExecutionFrame, pause: PauseRecord, channel: ToolChannel, context: StepContext
) -> Approval | None:
    """Its deadline passed with no answer: ``on_expiry`` decides, in one atomic change from
    Pending (an answer recorded first wins, and is taken instead)."""
    runtime = frame.runtime
    answer: PauseAnswer | None = None
    status = PauseStatus.CANCELLED
    if channel.on_expiry is not OnExpiry.WITHDRAW:
        status = PauseStatus.TAKEN  # taken with the step that acts on it, as a decided one
        approved = channel.on_expiry is OnExpiry.APPROVE
        why = f"no answer within {spoken(_waited(pause, channel))}"
        answer = PauseAnswer(
            decision=ToolCallApprovalDecisionDto(approved=approved, reason=why),
            decided_by=Decider.DEADLINE,
        )
    expiry = ExpirePause(pause.tenant_id, pause.pause_id, status, answer, runtime.clock.now())
    expired = await frame.writes.commit_one(expiry)
    if expired is None:  # an answer was recorded first: it is taken, the deadline moot
        found = await runtime.store.pauses.find_by_tenant_id_and_pause_id(
            pause.tenant_id, pause.pause_id
        )
        if found is None or found.status in (PauseStatus.PENDING, PauseStatus.CANCELLED):
            return None
        return _approval(found)
    emit_pause_event(ExecutionEventKind.PAUSE_EXPIRED, pause, runtime.clock.now())
    metered(pause, Outcome.EXPIRED, Decider.DEADLINE, expiry.now)
    if answer is None:
        raise _expired_error(expired, channel, context)
    return _approval(expired)


def _approval(pause: PauseRecord) -> Approval:
    assert pause.answer is not None
    who = pause.answer.responder or pause.channel
    return Approval(pause.answer.decision, who, pause)


async def _send(
    frame: ExecutionFrame,
    pause: PauseRecord,
    channel: ToolChannel,
    tool: ToolSpec,
    context: StepContext,
    args: BaseModel,
) -> Approval | None:
    runtime = frame.runtime
    call = ChannelCall.of(
        runtime, frame.row, pause, "channel-send", tool=tool, channel=channel, args=args
    )
    ask = ChannelAsk(
        pause_id=pause.pause_id,
        value=call.ask,
        channel=channel.name,
        answered_by=channel.answered_by,
        agent=pause.agent,
        accepts_reply=channel.role is not None and channel.role.reply_interpreter is not None,
        expires_at=pause.expires_at,
        claimable=pause.votes is None,
        claimed_by=pause.claimed_by,  # handed to a person: asked as theirs
        claimed_until=pause.claimed_until,
        handoffs=handoffs_of(runtime, pause),
    )
    await frame.writes.flush()  # the lease is held before the channel is asked
    try:
        with call.traced("channel-send"):
            outcome = await _bounded_send(call, ask, frame)
        if not isinstance(outcome, ChannelOutcome):
            raise TypeError(
                f"send() returned {type(outcome).__name__}; return ChannelOutcome.await_reply() "
                "or ChannelOutcome.decided(...)"
            )
        decision = (
            None
            if outcome.awaits_reply
            else validate_decision(
                outcome.decision,
                tool.name,
                tool.input,
                frame.runtime.assembly.spec.limits,
                pause.ask.kind,
            )
        )
    except LeaseLostError:
        raise
    except Exception as raised:
        # Never sent (or decided nonsense): closed without a withdraw; the step fails.
        await _close_unsent(frame, pause)
        error = redacted(raised, secret_of(pause))  # a channel pause's id stays with it
        what = "decided an invalid answer" if isinstance(error, DtoValidationError) else "failed"
        if isinstance(error, TimeoutError):
            what = f"did not answer within its tool's timeout of {tool.timeout}"
        raise AgentFailedError(
            f"its channel {channel.name} {what} when asked to approve {tool.name}: {error}",
            agent=pause.agent,
            node_id=context.node_id,
            hint="fix the channel's send(); the model never reads a channel's failure",
        ) from error
    if decision is not None:
        return await _decide(frame, pause, PauseAnswer(decision=decision, decided_by=Decider.CODE))
    # Committed with the pass's next commit. An answer that came while send was returning is
    # taken by the pass's drain; a close meanwhile leaves the channel owed a withdraw, which
    # the pass (or the sweep) tells.
    frame.writes.add(MarkPauseSent(pause.tenant_id, pause.pause_id, outcome.reference))
    return None


async def _decide(
    frame: ExecutionFrame, pause: PauseRecord, answer: PauseAnswer
) -> Approval | None:
    """A question decided at once — by its channel, or by a standing decision — taken as it
    is decided; ``None`` when it was closed meanwhile (nothing was sent to take back)."""
    now = frame.runtime.clock.now()
    decided = await frame.writes.commit_one(
        ResolvePause(pause, PauseStatus.TAKEN, PauseResolution.DECIDED, answer, now)
    )
    if decided is None:
        return None
    outcome = Outcome.APPROVED if answer.decision.approved else Outcome.REJECTED
    metered(pause, outcome, answer.decided_by or Decider.CODE, now)
    return _approval(decided)


async def _bounded_send(call: ChannelCall, ask: ChannelAsk[Any], frame: ExecutionFrame) -> object:
    """The channel's ``send``, under its tool's timeout.

    A caller that goes away (its task cancelled) cuts the send off: the pause stays Pending and
    unsent, and the next pass sends it again with the same id. A branch that is dropped (a
    FailFast, a decided quorum) lets the send finish first — a question half-posted could not be
    taken back — and marks it sent, so that the drop, which comes next, withdraws it.
    """
    pause = call.pause
    sending = asyncio.ensure_future(call.bounded(call.handler.send(ask), "send"))
    try:
        return await asyncio.shield(sending)
    except asyncio.CancelledError:
        if not frame.state.dropped(pause.path):
            sending.cancel()
            raise
        outcome = None
        try:
            outcome = await sending
        except Exception as error:
            call.runtime.logger.warning(
                "channel.send-failed: %s failed while its branch was dropped: %s",
                pause.channel,
                call.shown(error),
            )
        if isinstance(outcome, ChannelOutcome) and outcome.awaits_reply:
            await frame.writes.commit(
                [MarkPauseSent(pause.tenant_id, pause.pause_id, outcome.reference)]
            )
        raise


async def _close_unsent(frame: ExecutionFrame, pause: PauseRecord) -> None:
    await frame.writes.commit(
        [
            CancelPause(
                pause.tenant_id,
                pause.pause_id,
                PauseResolution.SEND_FAILED,  # nobody was asked: not a cancellation
                frame.runtime.clock.now(),
            )
        ]
    )
