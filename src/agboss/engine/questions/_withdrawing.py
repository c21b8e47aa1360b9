"""Telling channels how their questions closed: without an answer (`withdraw`), or answered
(`answered`, for a channel that shows answers).

A pause closed after its ``send`` returned is marked in the same commit as owing its channel a
withdraw (``withdrawal = 'due'``) — an answered one too when its channel shows answers — and
marked told once the channel's method returned, failed or timed out (best-effort: one
``channel.withdraw-failed`` warning). Whoever closed it tells the channel while holding the
tree's lease; one cut off before is found by the recovery sweep, which tells it then — so every
channel is told, and told once per pass that closed its pause.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from agboss.assembly import ToolChannel
from agboss.components import ChannelAnswered, ChannelWithdrawal, ToolSpec
from agboss.engine.instance import Runtime
from agboss.engine.questions._channels import ChannelCall, tool_of, warn_failed
from agboss.engine.trees import acquire_lease
from agboss.enums import PauseResolution
from agboss.records import PauseAnswerRecord, PauseRecord
from agboss.store.protocol import ExecutionRow
from agboss.store.writes import (
    MarkWithdrawn,
)

__all__ = ["mark_shown", "tell_owed_withdrawals", "withdraw", "withdraw_closed"]


async def withdraw(
    runtime: Runtime, row: ExecutionRow, pause: PauseRecord, resolution: PauseResolution
) -> None:
    """Calls the channel's ``withdraw`` once, in the pause's frame, under its tool's timeout.

    Best-effort: a throw or a timeout is one ``channel.withdraw-failed`` warning, nothing else.
    """
    tool, channel = tool_of(runtime, pause)
    if resolution is PauseResolution.REPLIED:
        await _answered(runtime, row, pause, tool, channel)
        return
    try:
        call = ChannelCall.of(runtime, row, pause, "channel-withdraw", tool=tool, channel=channel)
        withdrawal = ChannelWithdrawal(
            pause_id=pause.pause_id,
            value=call.ask,
            resolution=resolution,
            reference=pause.sent_reference,
        )
        with call.traced("channel-withdraw", resolution=resolution.value):
            await call.bounded(call.handler.withdraw(withdrawal), "withdraw")
    except Exception as error:
        warn_failed(runtime, row, pause, channel.name, "withdraw", error)


async def _answered(
    runtime: Runtime, row: ExecutionRow, pause: PauseRecord, tool: ToolSpec, channel: ToolChannel
) -> None:
    """Calls the channel's ``answered`` once, with the answer masked as the audit trail shows
    it; best-effort, as ``withdraw``."""
    if pause.answer is None or pause.resolved_at is None:
        return
    try:
        call = ChannelCall.of(runtime, row, pause, "channel-answered", tool=tool, channel=channel)
        outside = runtime.assembly.pii_outside
        entry = outside.answer(
            PauseAnswerRecord.of(pause, PauseResolution.REPLIED, pause.resolved_at, pause.answer),
            outside.policy(row.workflow),
            outside.input_values(row.workflow, row.input_json),
        )
        if entry.decision is None:
            return
        answered = ChannelAnswered(
            pause_id=pause.pause_id,
            value=call.ask,
            reference=pause.sent_reference,
            decision=entry.decision,
            responder=entry.responder,
            resolved_at=pause.resolved_at,
            channel=pause.channel,
            agent=pause.agent,
            reply=entry.reply,
        )
        with call.traced("channel-answered"):
            await call.bounded(call.handler.answered(answered), "answered")
    except Exception as error:
        warn_failed(runtime, row, pause, channel.name, "answered", error)


async def withdraw_closed(
    runtime: Runtime,
    row: ExecutionRow,
    pauses: list[PauseRecord],
    told: Callable[[MarkWithdrawn], Awaitable[object]],
    resolution: PauseResolution | None = None,
) -> None:
    """Calls ``withdraw`` for each closed pause (in its own execution's frame), and ``told``
    with the write that marks it told — committed before the next channel is called, so that a
    crash can make a channel hear of one pause twice, never of every pause twice."""
    rows = {row.execution_id: row}
    for pause in pauses:
        found = rows.get(pause.execution_id)
        if found is None:
            found = await runtime.store.executions.find_by_id(pause.execution_id) or row
            rows[pause.execution_id] = found
        how = resolution or pause.resolution or PauseResolution.CANCELLED
        await withdraw(runtime, found, pause, how)
        await told(MarkWithdrawn(pause.tenant_id, pause.pause_id))


async def mark_shown(runtime: Runtime, tenant_id: str, pause_id: str) -> None:
    """A door that showed an answer on its channel's message itself (Slack's route) marks the
    word the channel is owed as said: no instance tells the channel again."""
    await runtime.store.write([MarkWithdrawn(tenant_id, pause_id)])


async def tell_owed_withdrawals(runtime: Runtime, root_execution_id: str) -> None:
    """Tells the channels a tree still owes a withdraw, holding the tree's lease (if another
    instance holds it, that instance — or a later sweep — does it)."""
    store = runtime.store
    held = await acquire_lease(runtime, root_execution_id)
    if held is None:
        return
    lease = held.lease

    async def told(write: MarkWithdrawn) -> None:
        await store.write([write], fence=lease.fence)

    try:
        # Renewed while the channels are told: a withdraw that runs past the lease's time is
        # not started again by a sweep (this instance's or another's) while this one is alive.
        async with lease.kept():
            due = await store.pauses.find_due_withdrawals(root_execution_id)
            root = await store.executions.find_by_id(root_execution_id)
            if due and root is not None:
                await lease.ensure()
                await withdraw_closed(runtime, root, due, told)
    finally:
        await held.release()
