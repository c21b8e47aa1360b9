"""One pause by its id, wherever it stands: what an answering screen or ``agboss pauses show``
reads.

Masked like everything that leaves the process (the question's arguments, the decision's
reason and override arguments, a reply); a `PauseAnswerer.CHANNEL` pause is shown without its
id, as everywhere outside its channel — whoever asks already holds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from agboss.dto import ToolCallApprovalDecisionDto
from agboss.engine import Runtime, delegated_by
from agboss.enums import PauseResolution, PauseStatus
from agboss.errors import UnknownPauseError
from agboss.records import PauseAnswerRecord, PendingPause
from agboss.store import pending_pause

__all__ = ["PauseDescription", "describe_pause", "pause_id_of"]


@dataclass(frozen=True, slots=True)
class PauseDescription:
    """A pause as `App.describe_pause` shows it.

    Attributes:
        pause: The question, as ``pending`` lists it (masked; no id for a channel pause).
        status: Where it stands.
        resolution: How it was resolved, once it was.
        execution_id: The root execution it waits (or waited) in.
        thread_id: Its thread.
        owner_id: The thread's owner.
        asked_at: When it was asked, on the application's Clock.
        resolved_at: When it was resolved (answered, decided at once, withdrawn, cancelled).
        responder: Who answered; ``None`` while it waits, or when its channel decided at once,
            it was withdrawn or cancelled.
        decision: What was decided (masked); ``None`` while it waits, withdrawn or cancelled.
        reply: The words the decision was read from (masked), for an answer in words.
        claimed_by: Who handles it (`App.claim`) while it waits and their claim holds.
        claimed_until: Until when that claim holds.
    """

    pause: PendingPause
    status: PauseStatus
    resolution: PauseResolution | None
    execution_id: str
    thread_id: str
    owner_id: str
    asked_at: datetime
    resolved_at: datetime | None
    responder: str | None
    decision: ToolCallApprovalDecisionDto | None
    reply: str | None
    claimed_by: str | None = None
    claimed_until: datetime | None = None


async def describe_pause(runtime: Runtime, tenant_id: str, pause_id: str) -> PauseDescription:
    """The pause, masked; see `App.describe_pause`.

    Raises:
        UnknownPauseError: No pause has this id in this tenant (or its record expired).
    """
    store = runtime.store
    found = await store.pauses.find_with_execution(tenant_id, pause_id)
    if found is None:
        raise UnknownPauseError()
    pause, row = found
    outside = runtime.assembly.pii_outside
    known = outside.input_values(row.workflow, row.input_json)
    if row.execution_id != pause.root_execution_id:  # a child's: masked by its root's rules
        row = await store.executions.find_by_id(pause.root_execution_id) or row
        known += outside.input_values(row.workflow, row.input_json)
    policy = outside.policy(row.workflow)
    answer = pause.answer
    if pause.resolution is not None and pause.resolved_at is not None:
        entry = outside.answer(
            PauseAnswerRecord.of(pause, pause.resolution, pause.resolved_at, answer),
            policy,
            known,
        )
        decision, reply = entry.decision, entry.reply
    else:
        decision, reply = None, None
    waits = pause.status is PauseStatus.PENDING
    claimant = pause.claimant(runtime.clock.now()) if waits else None
    return PauseDescription(
        pause=outside.pending(pending_pause(pause), policy),
        status=pause.status,
        resolution=pause.resolution,
        execution_id=pause.root_execution_id,
        thread_id=row.thread_id,
        owner_id=row.owner_id,
        asked_at=pause.asked_at,
        resolved_at=pause.resolved_at,
        responder=None if answer is None else answer.responder,
        decision=decision,
        reply=reply,
        claimed_by=claimant,
        claimed_until=None if claimant is None else pause.claimed_until,
    )


async def pause_id_of(
    runtime: Runtime, tenant_id: str, pause_ref: str, owner_id: str | None
) -> str:
    """The id of the pause a reference names; see `App.pause_id_of`.

    Raises:
        UnknownPauseError: No pause of this tenant has this reference — or, with
            ``owner_id``, none that is that person's to see: the same error, so that a door
            says no the same way for "not yours" and "not there".
    """
    found = await runtime.store.pauses.find_with_execution_by_ref(tenant_id, pause_ref)
    if found is None:
        raise UnknownPauseError()
    pause, row = found
    if owner_id is None:  # a channel's own door, which authenticated its caller itself
        return pause.pause_id
    voters = () if pause.votes is None else pause.votes.eligible or ()
    if owner_id == row.owner_id or owner_id in voters:
        return pause.pause_id
    # A delegate's: a question of someone who delegated it to them (`App.delegate`).
    if await delegated_by(runtime, pause, owner_id, (row.owner_id, *voters)) is None:
        raise UnknownPauseError()
    return pause.pause_id
