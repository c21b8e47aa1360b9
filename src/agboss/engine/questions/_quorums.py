"""A question's quorum when it is asked: how many approvals it needs and who may give them,
named once and kept with the pause (a later change of the team does not move its votes)."""

from __future__ import annotations

import inspect
from collections.abc import Iterable

from pydantic import BaseModel

from agboss.assembly import ToolChannel
from agboss.components import ApprovalAsk, Quorum, QuorumAsk
from agboss.enums import PauseKind
from agboss.errors import AgentFailedError
from agboss.records import PauseVotes
from agboss.store.protocol import ExecutionRow

__all__ = ["votes_for"]


async def votes_for(
    channel: ToolChannel,
    row: ExecutionRow,
    ask: ApprovalAsk[BaseModel],
    *,
    agent: str,
    node_id: str | None,
) -> PauseVotes | None:
    """The votes a question asked of ``channel`` starts with, or ``None`` when one answer
    decides it: its role takes no ``approvals=``, or the question is a tool's own (answered
    with data, not approved).

    Raises:
        AgentFailedError: The quorum's ``of`` raised, returned something that is not answerer
            ids, or named fewer voters than the approvals it needs (without the thread's owner
            under ``distinct_from_owner``): no answer could ever approve the call.
    """
    role = channel.role
    quorum = None if role is None else role.quorum
    if role is None or quorum is None or ask.kind is PauseKind.TOOL_INPUT:
        return None
    eligible = await _eligible(quorum, row, ask, role.name, agent=agent, node_id=node_id)
    if eligible is not None and role.distinct_from_owner:
        eligible = tuple(voter for voter in eligible if voter != row.owner_id)
    if eligible is not None and len(eligible) < quorum.needed:
        raise AgentFailedError(
            f"its channel {role.name} needs {quorum.needed} approvals of {ask.tool}, but its "
            f"quorum named {len(eligible)} voter(s) who may give them"
            + (" (the thread's owner may not)" if role.distinct_from_owner else ""),
            agent=agent,
            node_id=node_id,
            hint="make the role's Quorum(of=...) name enough voters for this question",
        )
    return PauseVotes(
        needed=quorum.needed, eligible=eligible, rejection_decides=quorum.rejection_decides
    )


async def _eligible(
    quorum: Quorum,
    row: ExecutionRow,
    ask: ApprovalAsk[BaseModel],
    role: str,
    *,
    agent: str,
    node_id: str | None,
) -> tuple[str, ...] | None:
    """Who may vote, in the order named, each once (``None``: anyone)."""
    voters = quorum.of
    if voters is None:
        return None
    if callable(voters):
        try:
            named: object = voters(QuorumAsk(row.tenant_id, row.thread_id, row.owner_id, ask))
            if inspect.isawaitable(named):
                named = await named
        except Exception as raised:
            raise AgentFailedError(
                f"the quorum of its channel {role} failed to name the voters on {ask.tool}: "
                f"{type(raised).__name__}: {raised}",
                agent=agent,
                node_id=node_id,
                hint="fix the role's Quorum(of=...) function",
            ) from raised
    else:
        named = voters
    if isinstance(named, str | bytes) or not isinstance(named, Iterable):
        named = [named]  # reported below: not a list of ids
    listed = list(named)
    if not all(isinstance(voter, str) and voter.strip() for voter in listed):
        raise AgentFailedError(
            f"the quorum of its channel {role} named voters on {ask.tool} that are not "
            f"answerer ids (non-blank strings): {listed!r}",
            agent=agent,
            node_id=node_id,
            hint="make the role's Quorum(of=...) return the voters' ids, as strings",
        )
    return tuple(dict.fromkeys(listed))
