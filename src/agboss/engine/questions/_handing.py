"""A question asked again under a new id, of another role or person: what an escalation (its
role's ladder) and a reassignment (`App.reassign`) share."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from agboss.assembly import ToolChannel
from agboss.components import ApprovalAsk
from agboss.engine.instance import Runtime
from agboss.engine.questions._channels import tool_of
from agboss.engine.questions._quorums import votes_for
from agboss.enums import PauseKind, PauseStatus
from agboss.records import PauseRecord, call_digest, new_pause_id
from agboss.store.protocol import ExecutionRow

__all__ = ["asked_instead"]


async def asked_instead(
    runtime: Runtime,
    row: ExecutionRow,
    pause: PauseRecord,
    target: ToolChannel,
    *,
    ladder_step: int,
    next_step_at: datetime | None,
    claimed_by: str | None = None,
    claimed_until: datetime | None = None,
) -> PauseRecord:
    """``pause``'s question as asked of ``target`` now, under a new id, not sent yet.

    It keeps its step, its deadline and what the deadline decides; it is on its ladder at
    ``ladder_step``; it counts the votes ``target``'s role takes from none; it is claimed for
    ``claimed_by`` when given (handed to a person). The right to answer is the new channel's
    alone: the digest is keyed by the new id.

    Raises:
        AgentFailedError: ``target``'s quorum could not name its voters (`votes_for`).
    """
    now = runtime.clock.now()
    votes = None
    if pause.ask.kind is not PauseKind.TOOL_INPUT:
        tool, _ = tool_of(runtime, pause)
        arguments = tool.input.model_validate(pause.ask.arguments)
        ask = ApprovalAsk(pause.ask.tool, pause.ask.call_id, arguments, pause.ask.kind)
        votes = await votes_for(target, row, ask, agent=pause.agent, node_id=None)
    pause_id = new_pause_id()
    digest = pause.ask.digest and call_digest(  # keyed by the id it is asked under
        pause_id,
        pause.ask.tool,
        runtime.assembly.tool_definition(pause.ask.tool),
        pause.ask.arguments,
    )
    return replace(
        pause,
        pause_id=pause_id,
        ask=pause.ask.model_copy(update={"digest": digest}),
        status=PauseStatus.PENDING,
        resolution=None,
        is_sent=False,
        answered_by=target.answered_by,
        channel=target.name,
        answer=None,
        asked_at=now,
        resolved_at=None,
        sent_reference=None,
        ladder_step=ladder_step,
        next_step_at=next_step_at,
        escalation=pause.escalation + 1,
        votes=votes,
        claimed_by=claimed_by,
        claimed_until=claimed_until,
    )
