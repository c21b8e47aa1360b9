"""Asking a channel to approve a tool call: the pause's record, ``send``, and what comes back.

The pause record is keyed by the waiting step, so a step re-entered (after an answer, or a
retry after a crash) finds the same ``pause_id``; one not yet sent is sent again with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from agboss.assembly.assemble import ToolChannel
from agboss.components.channels import ApprovalAsk, ChannelAsk, ChannelOutcome
from agboss.components.specs import ToolSpec
from agboss.context import StepContext
from agboss.dto import ToolCallApprovalAskDto, ToolCallApprovalDecisionDto
from agboss.engine.frame import ExecutionFrame, maybe_await
from agboss.enums import PauseResolution, PauseStatus
from agboss.errors import AgentFailedError, DtoValidationError
from agboss.observability.tracing import span
from agboss.pauses.decisions import validate_decision
from agboss.pauses.model import PauseAnswer, PauseAnswerRecord, PauseRecord
from agboss.pauses.withdrawing import withdraw
from agboss.records.model import StepRecord

__all__ = ["Approval", "ask_approval", "new_pause_id"]


def new_pause_id() -> str:
    """A pause id: 128 random bits from the operating system's CSPRNG, as hex."""
    return secrets.token_hex(16)


@dataclass(frozen=True, slots=True)
class Approval:
    """The decision a waiting call takes, and who made it."""

    decision: ToolCallApprovalDecisionDto
    decided_by: str
    pause: PauseRecord


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
) -> Approval | None:
    """The decision on a tool call, asking its channel if need be.

    Returns:
        The decision to take, or ``None`` while the call waits (or its pause was closed).

    Raises:
        AgentFailedError: The channel's ``send`` threw, or decided something invalid.
    """
    runtime = frame.runtime
    pauses = runtime.store.pauses
    row = frame.row
    assert step.tool_call is not None
    pause = await pauses.find_by_step(row.execution_id, step_key)
    if pause is None:
        pause = await pauses.insert(
            frame.fence,
            PauseRecord(
                pause_id=new_pause_id(),
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
                    arguments=args.model_dump(mode="json"),
                ),
                step=step,
                answer=None,
                asked_at=runtime.clock.now(),
                resolved_at=None,
                item_index=step.item_index,
                child_execution_id=(
                    None if row.execution_id == row.root_execution_id else row.execution_id
                ),
                path=path,
            ),
        )
    if pause.status in (PauseStatus.RESOLVED, PauseStatus.TAKEN):
        return _approval(pause)
    if pause.status is PauseStatus.CANCELLED or pause.is_sent:
        return None
    return await _send(frame, pause, channel, tool, context, args)


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
    pauses = runtime.store.pauses
    send_context = StepContext(
        node_id=context.node_id,
        kind="channel-send",
        idempotency_key=context.idempotency_key,
        call_id=context.call_id,
        visit=context.visit,
        tool_loop_iteration=context.tool_loop_iteration,
        validation_attempts=context.validation_attempts,
        copy_index=context.copy_index,
        item_index=context.item_index,
    )
    handler = runtime.assembly.container.create(
        channel.implementation,
        runtime.assembly.components[channel.implementation].deps,
        frame.context(send_context),
    )
    ask = ChannelAsk(
        pause_id=pause.pause_id,
        value=ApprovalAsk(tool=tool.name, call_id=pause.ask.call_id, arguments=args),
        channel=channel.name,
        answered_by=channel.answered_by,
        agent=pause.agent,
    )
    try:
        with span(
            "channel-send",
            channel=channel.name,
            tool=tool.name,
            execution_id=pause.execution_id,
            root_execution_id=pause.root_execution_id,
        ):
            outcome = await _uncancelled_send(handler, ask, pause, frame)
        if not isinstance(outcome, ChannelOutcome):
            raise TypeError(
                f"send() returned {type(outcome).__name__}; return ChannelOutcome.await_reply() "
                "or ChannelOutcome.decided(...)"
            )
        decision = (
            None
            if outcome.awaits_reply
            else validate_decision(outcome.decision, tool.name, tool.input)
        )
    except Exception as error:
        # Never sent (or decided nonsense): closed without a withdraw; the step fails.
        await _close_unsent(frame, pause)
        what = "decided an invalid answer" if isinstance(error, DtoValidationError) else "failed"
        raise AgentFailedError(
            f"its channel {channel.name} {what} when asked to approve {tool.name}: {error}",
            agent=pause.agent,
            node_id=context.node_id,
            hint="fix the channel's send(); the model never reads a channel's failure",
        ) from error
    if decision is not None:
        now = runtime.clock.now()
        answer = PauseAnswer(decision=decision)
        decided = await pauses.resolve(
            pause.tenant_id,
            pause.pause_id,
            status=PauseStatus.TAKEN,
            resolution=PauseResolution.DECIDED,
            answer=answer,
            now=now,
        )
        if decided is None:
            return None  # closed while send was returning; nothing was sent to take back
        await runtime.store.records.save_pause_answer(
            pause.tenant_id,
            pause.root_execution_id,
            PauseAnswerRecord.of(decided, PauseResolution.DECIDED, now, answer),
        )
        return _approval(decided)
    status = await pauses.mark_sent(pause.tenant_id, pause.pause_id)
    if status in (PauseStatus.RESOLVED, PauseStatus.TAKEN):
        # A fast webhook answered while send was returning: taken at once, no pause.
        answered = await pauses.find_by_tenant_id_and_pause_id(pause.tenant_id, pause.pause_id)
        assert answered is not None
        return _approval(answered)
    if status is PauseStatus.CANCELLED:
        # Closed while send was returning: whoever closed it saw it unsent, so this step
        # tells the channel, once.
        closed = await pauses.find_by_tenant_id_and_pause_id(pause.tenant_id, pause.pause_id)
        resolution = (closed.resolution if closed else None) or PauseResolution.CANCELLED
        await withdraw(runtime, frame.row, pause, resolution)
    return None


async def _uncancelled_send(
    handler: Any, ask: ChannelAsk[Any], pause: PauseRecord, frame: ExecutionFrame
) -> object:
    """The channel's ``send``, which a branch's cancellation (FailFast, a decided quorum) does
    not cut off: a question half-posted could never be taken back. If the branch is cancelled
    meanwhile, ``send`` finishes, the pause is marked sent, and whoever drops the branch sees a
    sent pause and withdraws it."""
    sending = asyncio.ensure_future(maybe_await(handler.send(ask)))
    try:
        return await asyncio.shield(sending)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            outcome = await sending
            if isinstance(outcome, ChannelOutcome) and outcome.awaits_reply:
                await frame.runtime.store.pauses.mark_sent(pause.tenant_id, pause.pause_id)
        raise


async def _close_unsent(frame: ExecutionFrame, pause: PauseRecord) -> None:
    runtime = frame.runtime
    now = runtime.clock.now()
    closed = await runtime.store.pauses.cancel_by_tenant_id_and_pause_id(
        pause.tenant_id, pause.pause_id, resolution=PauseResolution.CANCELLED, now=now
    )
    if closed is not None:
        await runtime.store.records.save_pause_answer(
            pause.tenant_id,
            pause.root_execution_id,
            PauseAnswerRecord.of(closed, PauseResolution.CANCELLED, now, None),
        )
