"""Handing a waiting question to another role or person (`App.reassign`): who may hand it on
is who may answer it — checked as an answer is — and where it may go is checked against the
application's roles before the engine's door writes it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from agboss.assembly import ToolChannel
from agboss.components import Claims
from agboss.context import DEFAULT_TENANT_ID
from agboss.engine import Handoff, handed_to, tool_of
from agboss.enums import ExecutionStatus, PauseAnswerer, PauseStatus
from agboss.errors import (
    DtoValidationError,
    NotAnAnswererError,
    NotPausedError,
    ReassignTargetError,
    UnknownPauseError,
)
from agboss.pauses._answers import (
    Credentials,
    as_owner,
    check_not_owner,
    check_owner,
    check_unclaimed,
    closed_as,
    credential,
    expired,
    why_not_written,
)
from agboss.records import PauseRecord, pause_ref
from agboss.store.protocol import ExecutionRow

if TYPE_CHECKING:
    from agboss.engine import Engine

__all__ = ["Reassigned", "reassign_pause"]


@dataclass(frozen=True, slots=True)
class Reassigned:
    """A question handed on, as `App.reassign` did it.

    Attributes:
        pause_ref: The new question's reference; its id is its channel's alone (the old id
            answers nothing any more).
        previous_ref: The reference of the question it replaced.
        role: The role (or channel) it is asked of now.
        to: The person it was handed to, who holds a claim on it until ``claimed_until``;
            ``None`` when it was handed to the role.
        claimed_until: Until when that claim holds.
        reassigned_by: Who handed it on.
        status: Where the tree stands after the pass that asked the new question (``paused``
            while it waits; a channel that decides at once may have moved it on).
    """

    pause_ref: str
    previous_ref: str
    role: str
    to: str | None
    claimed_until: datetime | None
    reassigned_by: str
    status: ExecutionStatus


async def reassign_pause(
    engine: Engine,
    credentials: Credentials,
    *,
    role: type[Any] | str | None,
    to: str | None,
    reason: str,
) -> Reassigned:
    """Hands a waiting question to ``role`` or to the person ``to`` (or both: a person of
    another role); see `App.reassign`."""
    runtime = engine.runtime
    tenant = credentials.tenant_id or DEFAULT_TENANT_ID
    found = await runtime.store.pauses.find_with_execution(tenant, credentials.pause_id)
    if found is None:
        raise UnknownPauseError()
    pause, row = found
    tool_of(runtime, pause)  # refused here if this build lacks what answers it
    by = credential(pause, credentials.owner_id, credentials.answered_by)
    check_owner(pause, row, await as_owner(engine, pause, row, by))  # the owner, or a delegate
    check_not_owner(engine, pause, row, by)
    if pause.status is not PauseStatus.PENDING:
        raise NotPausedError(closed_as(pause))
    if expired(pause, runtime.clock.now()):
        raise NotPausedError("expired")
    check_unclaimed(engine, pause, by)
    target = _target(engine, pause, row, role, to)
    lasts = (Claims() if target.role is None else target.role.claims).lasts
    handoff = Handoff(
        tenant_id=pause.tenant_id,
        pause_id=pause.pause_id,
        channel=target,
        to=to,
        claimed_until=None if to is None else runtime.clock.now() + lasts,
        by=by,
        reason=reason,
    )
    handed = await engine.reassign(pause.root_execution_id, handoff)
    if handed is None:  # answered, closed or claimed by someone else since it was read
        raise await why_not_written(engine, pause)
    return Reassigned(
        pause_ref=pause_ref(handed.asked.pause_id),
        previous_ref=pause_ref(pause.pause_id),
        role=target.name,
        to=to,
        claimed_until=handoff.claimed_until,
        reassigned_by=by,
        status=handed.output.status,
    )


def _target(
    engine: Engine,
    pause: PauseRecord,
    row: ExecutionRow,
    role: type[Any] | str | None,
    to: str | None,
) -> ToolChannel:
    """The channel the question goes to; raises where it cannot go."""
    runtime = engine.runtime
    if role is None and to is None:
        raise DtoValidationError(
            "a reassignment names where the question goes: role=, to=, or both",
            hint="pass role=<another role> to hand it to its people, or to=<a person>",
        )
    _, asked_of = tool_of(runtime, pause)
    target = asked_of if role is None else handed_to(runtime, pause, role)
    if target is None:
        name = role if isinstance(role, str) else getattr(role, "__qualname__", repr(role))
        raise ReassignTargetError(
            f"no role {name} of this application approves {pause.ask.tool}'s calls",
            hint="name a @channel_role that approves the same DTO and is implemented in "
            "channels=[...]",
        )
    if to is None:
        if target.name == asked_of.name:
            raise ReassignTargetError(
                f"the question is asked of {target.name} already",
                hint="name another role, or a person with to=",
            )
        return target
    if target.answered_by is PauseAnswerer.THREAD_OWNER:
        raise ReassignTargetError(
            f"{target.name}'s questions are answered by the thread's owner: no one else can "
            "hold one",
            hint="hand it to a role its people answer, without to=",
        )
    if pause.votes is not None or (target.role is not None and target.role.quorum is not None):
        raise ReassignTargetError(
            "a question that takes several approvals is not handed to one person: each voter "
            "answers it",
            hint="hand it to a role, without to=",
        )
    if target.role is not None and target.role.distinct_from_owner and to == row.owner_id:
        raise NotAnAnswererError(
            f"{to} owns the thread whose request asks, and {target.name} takes its answers "
            "from someone else (distinct_from_owner)",
            hint="hand it to another person who may approve it",
        )
    return target
