"""Handing a waiting question to another role or person (`App.reassign`): the engine's door.

Under the tree's lease — so that no pass moves the question meanwhile, and its place on its
ladder is read as it is — one fenced commit closes it as reassigned (its audit and decision
log entries say who handed it on, where and why) and asks it again under a new id, claimed
for the person it was handed to. Its channel is then told it was taken back, and a pass sends
the new question. A crash after the commit loses nothing: the tree is due at once, and the
recovery sweep's pass sends it (and tells the first channel).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime

from agboss.assembly import ToolChannel
from agboss.engine.instance import Runtime
from agboss.engine.questions._channels import emit_pause_event
from agboss.engine.questions._handing import asked_instead
from agboss.engine.questions._withdrawing import withdraw_closed
from agboss.engine.trees import Held, PassStart, Wakeups, acquire_lease
from agboss.enums import Decider, Outcome, PauseStatus
from agboss.observability import ExecutionEventKind, decided, log_event
from agboss.records import ExecutionOutput, PauseRecord, Reassignment, pause_ref
from agboss.store.protocol import ExecutionRow
from agboss.store.writes import MarkWithdrawn, ReassignPause

__all__ = ["Handed", "Handoff", "reassign_question"]

Move = Callable[[PassStart], Awaitable[ExecutionOutput]]
"""Runs a pass on a tree whose lease is held (`Engine`'s)."""


@dataclass(frozen=True, slots=True)
class Handoff:
    """A waiting question to hand on.

    Attributes:
        tenant_id: Its tenant.
        pause_id: Its id.
        channel: The channel it is asked through instead (its own, handed to a person).
        to: The person it is handed to, as a claim of theirs until ``claimed_until``;
            ``None``: to ``channel``'s role.
        claimed_until: Until when that claim holds.
        by: Who hands it on.
        reason: Why.
    """

    tenant_id: str
    pause_id: str
    channel: ToolChannel
    to: str | None
    claimed_until: datetime | None
    by: str
    reason: str


@dataclass(frozen=True, slots=True)
class Handed:
    """A question handed on: the one closed, the one asked instead, and the tree after the
    pass that sent it."""

    closed: PauseRecord
    asked: PauseRecord
    output: ExecutionOutput


async def reassign_question(
    runtime: Runtime, wakeups: Wakeups, move: Move, root_execution_id: str, handoff: Handoff
) -> Handed | None:
    """Hands a waiting question on (see the module); ``None`` when it no longer waits, its
    deadline has come, or someone other than ``handoff.by`` holds a claim on it.

    Raises:
        LeaseBusyError: Another instance's pass held the tree past ``resume_timeout``: nothing
            was reassigned.
        AgentFailedError: The role it is handed to could not name its voters: nothing was
            reassigned.
    """
    held = await acquire_lease(runtime, root_execution_id) or await wakeups.acquire_when_free(
        root_execution_id,
        "nothing was reassigned",
        "reassign it again once that pass ends; app.describe_pause(...) says where it stands",
    )
    try:
        handed = await _commit(runtime, held, handoff)
    except BaseException:
        await held.release()
        raise
    if handed is None:
        await held.release()
        return None
    (closed, asked), row = handed
    now = runtime.clock.now()
    emit_pause_event(ExecutionEventKind.PAUSE_REASSIGNED, asked, now, answered_by=handoff.by)
    decided(closed, Outcome.REASSIGNED, Decider.PERSON, now)
    log_event(
        runtime.logger,
        logging.INFO,
        "run.reassigned",
        "%(by)s reassigned the question on %(tool)s from %(channel)s to %(to)s in execution "
        "%(execution_id)s",
        by=handoff.by,
        tool=closed.ask.tool,
        channel=closed.channel,
        to=handoff.to or asked.channel,
        execution_id=root_execution_id,
        tenant_id=closed.tenant_id,
    )
    if closed.is_sent:  # its channel takes it back before the new one is asked
        try:
            await _take_back(runtime, held, row, closed)
        except BaseException:
            await held.release()  # the sweep tells the channel, and sends the new question
            raise
    start = PassStart.held(held)
    output = await move(replace(start, due=(*start.due, asked)))
    return Handed(closed, asked, output)


async def _take_back(runtime: Runtime, held: Held, row: ExecutionRow, closed: PauseRecord) -> None:
    """Tells ``closed``'s channel it was taken back (``withdraw``), under the lease."""
    lease = held.lease

    async def told(write: MarkWithdrawn) -> None:
        await runtime.store.write([write], fence=lease.fence)

    async with lease.kept():  # renewed while the channel is told
        await lease.ensure()
        await withdraw_closed(runtime, row, [closed], told)


async def _commit(
    runtime: Runtime, held: Held, handoff: Handoff
) -> tuple[tuple[PauseRecord, PauseRecord], ExecutionRow] | None:
    """The reassignment's one commit, from the question as it is under the lease."""
    store = runtime.store
    found = await store.pauses.find_with_execution(handoff.tenant_id, handoff.pause_id)
    if found is None or found[0].status is not PauseStatus.PENDING:
        return None
    pause, row = found
    asked = await asked_instead(
        runtime,
        row,
        pause,
        handoff.channel,
        ladder_step=pause.ladder_step,
        next_step_at=pause.next_step_at,
        claimed_by=handoff.to,
        claimed_until=handoff.claimed_until,
    )
    reassigned = Reassignment(
        role=handoff.channel.name,
        to=handoff.to,
        reason=handoff.reason,
        pause_ref=pause_ref(asked.pause_id),
    )
    now = runtime.clock.now()
    write = ReassignPause(pause.tenant_id, pause.pause_id, asked, now, handoff.by, reassigned)
    result = (await store.write([write], fence=held.lease.fence))[write]
    return None if result is None else ((result.closed, result.asked), row)
