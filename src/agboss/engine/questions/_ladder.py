"""A question's ladder: the steps its role declares before the deadline, each once.

Where a pause is on its ladder is stored with it (``ladder_step``, ``next_step_at``), so any
instance's pass — the one its wake-up or the recovery sweep starts — takes a due step. The
channel is called first, under the tree's lease, and the step recorded after (`ClimbLadder`,
fenced): a crash between the two repeats the call once, never loses it — and one call at a time
in a tree, so a crash repeats one branch's reminder, never every branch's. Steps that fell due
together (no instance ran meanwhile) are taken as one: one reminder, not a burst.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from agboss.assembly import ToolChannel
from agboss.components import ChannelReminder, Escalate, LadderStep, Remind
from agboss.engine.questions._channels import ChannelCall, emit_pause_event, tool_of, warn_failed
from agboss.engine.questions._handing import asked_instead
from agboss.engine.trees import ExecutionFrame
from agboss.enums import Decider, Outcome
from agboss.observability import ExecutionEventKind, decided
from agboss.records import PauseRecord
from agboss.store.writes import ClimbLadder, EscalatePause

__all__ = ["climb", "first_step_at"]


def first_step_at(ladder: tuple[LadderStep, ...], asked_at: datetime) -> datetime | None:
    """When a question asked at ``asked_at`` takes its ladder's first step."""
    return asked_at + ladder[0].after if ladder else None


async def climb(
    frame: ExecutionFrame, pause: PauseRecord, channel: ToolChannel
) -> tuple[PauseRecord, ToolChannel]:
    """Takes the steps of ``pause``'s ladder that are due (its ``next_step_at`` passed).

    Returns:
        The pause to go on with and its channel: the same pause, further up its ladder; or
        the question asked of another role, not sent yet (`Escalate`); or, when an answer was
        recorded first, the pause as it is now.
    """
    ladder = channel.ladder
    assert pause.next_step_at is not None
    if pause.ladder_step >= len(ladder):  # the role's ladder was shortened since: none left
        return replace(pause, next_step_at=None), channel
    # The times are from the first asking: the stored next time, less its step's offset.
    origin = pause.next_step_at - ladder[pause.ladder_step].after
    now = frame.runtime.clock.now()
    reached = pause.ladder_step + 1
    while reached < len(ladder) and origin + ladder[reached].after <= now:
        reached += 1
    next_at = origin + ladder[reached].after if reached < len(ladder) else None
    due = ladder[pause.ladder_step : reached]
    escalate = next((step for step in reversed(due) if isinstance(step, Escalate)), None)
    target = None if escalate is None else channel.escalated_to(escalate.to)
    if target is not None:
        asked = await _escalate(frame, pause, target, reached, next_at)
        if asked is not None:
            return asked, target
        # An answer was recorded first: it is taken instead, from the question as it is now.
        found = await frame.runtime.store.pauses.find_by_tenant_id_and_pause_id(
            pause.tenant_id, pause.pause_id
        )
        return (pause if found is None else found), channel
    moved = ClimbLadder(pause.tenant_id, pause.pause_id, pause.ladder_step, reached, next_at)
    reminder = sum(isinstance(step, Remind) for step in ladder[:reached])
    async with frame.state.reminding:
        await frame.writes.flush()  # the lease is held before the channel is called
        await _remind(frame, pause, reminder)
        await frame.writes.commit_one(moved)
    return replace(pause, ladder_step=reached, next_step_at=next_at), channel


async def _escalate(
    frame: ExecutionFrame,
    pause: PauseRecord,
    target: ToolChannel,
    reached: int,
    next_at: datetime | None,
) -> PauseRecord | None:
    """Withdraws the question from its channel and asks it of ``target`` under a new id, in
    one commit; the pass then sends it (and tells the first channel, which is owed a
    ``withdraw``). ``None`` when the question was no longer Pending."""
    runtime = frame.runtime
    now = runtime.clock.now()
    asked = await asked_instead(
        runtime, frame.row, pause, target, ladder_step=reached, next_step_at=next_at
    )
    escalated = await frame.writes.commit_one(
        EscalatePause(pause.tenant_id, pause.pause_id, asked, now)
    )
    if escalated is None:
        return None
    emit_pause_event(ExecutionEventKind.PAUSE_ESCALATED, escalated.asked, now)
    decided(pause, Outcome.ESCALATED, Decider.DEADLINE, now)
    return escalated.asked


async def _remind(frame: ExecutionFrame, pause: PauseRecord, reminder: int) -> None:
    """Calls the channel's ``remind`` once, in the pause's frame, under its tool's timeout.

    Best-effort, as ``withdraw``: a throw or a timeout is one ``channel.remind-failed`` warning,
    and the step counts as taken (a channel that cannot remind is not called again and again).
    """
    runtime, row = frame.runtime, frame.row
    tool, channel = tool_of(runtime, pause)
    try:
        call = ChannelCall.of(runtime, row, pause, "channel-remind", tool=tool, channel=channel)
        reminded = ChannelReminder(
            pause_id=pause.pause_id,
            value=call.ask,
            reference=pause.sent_reference,
            reminder=reminder,
            asked_at=pause.asked_at,
            expires_at=pause.expires_at,
        )
        with call.traced("channel-remind", reminder=str(reminder)):
            await call.bounded(call.handler.remind(reminded), "remind")
    except Exception as error:
        warn_failed(runtime, row, pause, channel.name, "remind", error)
        return
    emit_pause_event(ExecutionEventKind.PAUSE_REMINDED, pause, runtime.clock.now())
