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

from agboss.assembly._definitions import ToolChannel
from agboss.components._channels import ChannelReminder
from agboss.components._ladder import LadderStep
from agboss.engine._channels import ChannelCall, shown_error, tool_of
from agboss.engine._frame import ExecutionFrame
from agboss.observability._events import ExecutionEvent, ExecutionEventKind, emit
from agboss.records._pauses import PauseRecord, shown_pause_id
from agboss.store.writes import ClimbLadder

__all__ = ["climb", "first_step_at"]


def first_step_at(ladder: tuple[LadderStep, ...], asked_at: datetime) -> datetime | None:
    """When a question asked at ``asked_at`` takes its ladder's first step."""
    return asked_at + ladder[0].after if ladder else None


async def climb(frame: ExecutionFrame, pause: PauseRecord, channel: ToolChannel) -> PauseRecord:
    """Takes the steps of ``pause``'s ladder that are due (its ``next_step_at`` passed).

    Returns:
        The pause as it is now on its ladder.
    """
    ladder = channel.ladder
    assert pause.next_step_at is not None
    if pause.ladder_step >= len(ladder):  # the role's ladder was shortened since: none left
        return replace(pause, next_step_at=None)
    # The times are from the first asking: the stored next time, less its step's offset.
    origin = pause.next_step_at - ladder[pause.ladder_step].after
    now = frame.runtime.clock.now()
    reached = pause.ladder_step + 1
    while reached < len(ladder) and origin + ladder[reached].after <= now:
        reached += 1
    next_at = origin + ladder[reached].after if reached < len(ladder) else None
    moved = ClimbLadder(pause.tenant_id, pause.pause_id, pause.ladder_step, reached, next_at)
    async with frame.state.reminding:
        await frame.writes.flush()  # the lease is held before the channel is called
        await _remind(frame, pause, reached)
        await frame.writes.commit_one(moved)
    return replace(pause, ladder_step=reached, next_step_at=next_at)


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
        runtime.logger.warning(
            "channel.remind-failed: %s could not remind of a question of execution %s: %s",
            channel.name,
            row.execution_id,
            shown_error(runtime, row.workflow, pause, error),
            extra={
                "event": "channel.remind-failed",
                "execution_id": row.execution_id,
                "tenant_id": row.tenant_id,
                "channel": channel.name,
            },
        )
        return
    emit(
        lambda: ExecutionEvent(
            ExecutionEventKind.PAUSE_REMINDED,
            pause.execution_id,
            runtime.clock.now(),
            agent=pause.agent,
            tool=pause.ask.tool,
            call_id=pause.ask.call_id,
            pause_id=shown_pause_id(pause.pause_id, pause.answered_by),
        )
    )
