"""A pause's records: the operational `PauseRecord`, its `PauseAnswer`, and the audit entry.

A `PauseRecord` is operational state (removed after retention); a `PauseAnswerRecord` is the
permanent history of who answered what, written once per pause when it is resolved.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from agboss.dto import ToolCallApprovalAskDto, ToolCallApprovalDecisionDto
from agboss.enums import Decider, PauseAnswerer, PauseKind, PauseResolution, PauseStatus
from agboss.models import Usage
from agboss.records._model import StepRecord
from agboss.records._outputs import PendingPause
from agboss.records._readings import DecisionReading
from agboss.records._refs import pause_ref
from agboss.records._votes import PauseVote, PauseVotes

__all__ = [
    "ExecutionPauseEvent",
    "ExecutionResumeEvent",
    "PauseAnswer",
    "PauseAnswerRecord",
    "PauseRecord",
    "Reassignment",
    "new_pause_id",
    "secret_of",
    "shown_pause_id",
]


def new_pause_id() -> str:
    """A pause id: 128 random bits from the operating system's CSPRNG, as hex."""
    return secrets.token_hex(16)


def secret_of(pause: PauseRecord) -> str | None:
    """The pause's id if it is a secret (a channel pause's: only its channel may show it)."""
    return pause.pause_id if pause.answered_by is PauseAnswerer.CHANNEL else None


def shown_pause_id(pause_id: str, answered_by: PauseAnswerer) -> str | None:
    """A pause's id as results, events and records may show it: ``None`` for a
    `PauseAnswerer.CHANNEL` pause, whose id is the right to answer and stays with its channel."""
    return pause_id if answered_by is PauseAnswerer.THREAD_OWNER else None


class PauseAnswer(BaseModel):
    """How a pause was answered.

    Attributes:
        decision: What was decided.
        responder: The ``owner_id`` / ``answered_by`` of `App.resume`; ``None`` when its channel
            decided at once.
        reply: The free text the decision was read from, when answered with ``reply=``.
        usage: What reading the reply cost, when a model read it.
        decided_by: Who decided, in kind (``None``: a person, as answers stored before).
        reading: How ``reply`` was read into the decision.
        on_behalf_of: Whose question ``responder`` answered as their delegate
            (`App.delegate`): "bo for ada"; ``None`` when they answered their own.
    """

    model_config = ConfigDict(frozen=True)

    decision: ToolCallApprovalDecisionDto
    responder: str | None = None
    reply: str | None = None
    usage: Usage | None = None
    decided_by: Decider | None = None
    reading: DecisionReading | None = None
    on_behalf_of: str | None = None


@dataclass(frozen=True, slots=True)
class PauseRecord:
    """A pause, as `PausedExecutionRepository` keeps it.

    Attributes:
        pause_id: The secret id: 128 random bits, hex.
        tenant_id: The tenant of its execution.
        step_key: The waiting step's key in its execution (the record's natural key).
        root_execution_id: The root of its tree.
        execution_id: The execution it waits in.
        seq: The order it was asked in, within its tree.
        status: `PauseStatus`.
        resolution: How it was resolved, once it was.
        is_sent: Whether its channel's ``send`` returned.
        answered_by: Who may answer it.
        channel: The channel asked (a role's name or a concrete channel's).
        agent: The agent whose call waits.
        ask: The question.
        step: The waiting step.
        answer: Its answer, once resolved or decided.
        asked_at: When it was made, on the application's Clock.
        resolved_at: When it was resolved.
        item_index: The item of a per-item launch it waits in.
        child_execution_id: The child execution it waits in, ``None`` in the root.
        path: The launch branches it waits under, from the root: ``/``-ended segments, so
            that a branch's pauses are those whose path starts with the branch's.
        generation: The tree's retry it was asked in (0: before any `App.retry`): a question
            a failure withdrew is asked again, under a new id, in the next generation.
        sent_reference: What its channel keeps of the question it posted (a message's id),
            as its ``send`` gave it (`ChannelOutcome.await_reply`); for its ``withdraw``.
        expires_at: Its deadline, on the application's Clock (``None``: none).
        ladder_step: How many steps of its role's ladder happened.
        next_step_at: When the next step of its role's ladder is due (``None``: no step
            left).
        escalation: How many times its question was escalated before it was asked here (0:
            as first asked).
        votes: Its quorum and the votes cast so far, when its role takes several approvals
            (``None``: the first answer decides).
        claimed_by: Who claimed it (`App.claim`), if anyone did; the claim may have ended
            (`claimant`).
        claimed_until: Until when that claim holds, unless released or answered first.
    """

    pause_id: str
    tenant_id: str
    step_key: str
    root_execution_id: str
    execution_id: str
    seq: int
    status: PauseStatus
    resolution: PauseResolution | None
    is_sent: bool
    answered_by: PauseAnswerer
    channel: str
    agent: str
    ask: ToolCallApprovalAskDto
    step: StepRecord
    answer: PauseAnswer | None
    asked_at: datetime
    resolved_at: datetime | None
    item_index: int | None = None
    child_execution_id: str | None = None
    path: str = ""
    generation: int = 0
    sent_reference: str | None = None
    expires_at: datetime | None = None
    ladder_step: int = 0
    next_step_at: datetime | None = None
    escalation: int = 0
    votes: PauseVotes | None = None
    claimed_by: str | None = None
    claimed_until: datetime | None = None

    def claimant(self, now: datetime) -> str | None:
        """Who handles it at ``now``: its claim's holder while the claim holds, else ``None``."""
        if self.claimed_by is None or self.claimed_until is None or self.claimed_until <= now:
            return None
        return self.claimed_by


class Reassignment(BaseModel):
    """Where a person handed a question (`App.reassign`), and why: what the audit trail and
    the decision log say of a question closed as `PauseResolution.REASSIGNED`.

    Attributes:
        role: The role (or channel) it was asked of instead.
        to: The person it was handed to, as a claim of theirs on the new question; ``None``
            when it was handed to the role.
        reason: Why, in the words of whoever handed it on.
        pause_ref: The new question's reference (`agboss.pause_ref`), never its id.
    """

    model_config = ConfigDict(frozen=True)

    role: str
    to: str | None
    reason: str
    pause_ref: str


class PauseAnswerRecord(BaseModel):
    """One entry of the audit trail, ``record.pauses``.

    Attributes:
        pause_id: Its id; ``None`` for a `PauseAnswerer.CHANNEL` pause (only its channel has it).
        execution_id: The execution it waited in.
        step: The waiting step.
        role: The channel asked.
        answered_by: Who may answer it.
        responder: Who answered; who handed it on (`PauseResolution.REASSIGNED`); ``None``
            when decided at once, withdrawn or cancelled.
        resolution: How it was resolved.
        asked_at: When it was asked, ISO 8601 on the application's Clock.
        resolved_at: When it was resolved, ISO 8601.
        decision: What was decided; ``None`` when withdrawn or cancelled.
        reply: The free text the decision was read from, if any.
        seq: The order it was asked in, within its tree.
        kind: What it asked (`PauseKind`): approve a call, answer a tool's question, or run
            again a call that may have run.
        generation: The tree's retry it was asked in: 0 for a question as first asked, ``n``
            for one the ``n``-th `App.retry` asked again (a failure had withdrawn it).
        escalation: How many times the question was handed on before it was asked of
            ``role`` — by its role's ladder (`Escalate`) or by a person (`App.reassign`): 0 as
            first asked.
        votes: Each vote cast on the question, in the order cast, when its role takes several
            approvals (each kept as its own entry the moment it was cast).
        pause_ref: Its reference (`agboss.pause_ref`), a channel pause's too: what a screen,
            a message or a link showed of it (``None`` in entries stored before references).
        reassigned: To whom and why it was handed on, for `PauseResolution.REASSIGNED`.
        on_behalf_of: Whose question ``responder`` answered as their delegate (`App.delegate`).
    """

    model_config = ConfigDict(frozen=True)

    pause_id: str | None
    execution_id: str
    step: StepRecord
    role: str
    answered_by: PauseAnswerer
    responder: str | None
    resolution: PauseResolution
    asked_at: str
    resolved_at: str
    decision: ToolCallApprovalDecisionDto | None
    reply: str | None = None
    seq: int = 0
    kind: PauseKind = PauseKind.APPROVAL
    generation: int = 0
    escalation: int = 0
    votes: tuple[PauseVote, ...] = ()
    pause_ref: str | None = None
    reassigned: Reassignment | None = None
    on_behalf_of: str | None = None

    @classmethod
    def of(
        cls,
        pause: PauseRecord,
        resolution: PauseResolution,
        resolved_at: datetime,
        answer: PauseAnswer | None,
        *,
        who: str | None = None,
        reassigned: Reassignment | None = None,
    ) -> PauseAnswerRecord:
        """The audit entry of a pause resolved now (``who``: who closed it unanswered, when a
        person did; ``reassigned``: where they handed it)."""
        return cls(
            pause_id=shown_pause_id(pause.pause_id, pause.answered_by),
            pause_ref=pause_ref(pause.pause_id),
            execution_id=pause.execution_id,
            step=pause.step,
            role=pause.channel,
            answered_by=pause.answered_by,
            responder=who if answer is None else answer.responder,
            resolution=resolution,
            asked_at=pause.asked_at.isoformat(),
            resolved_at=resolved_at.isoformat(),
            decision=None if answer is None else answer.decision,
            reply=None if answer is None else answer.reply,
            seq=pause.seq,
            kind=pause.ask.kind,
            generation=pause.generation,
            escalation=pause.escalation,
            reassigned=reassigned,
            on_behalf_of=None if answer is None else answer.on_behalf_of,
        )


@dataclass(frozen=True, slots=True)
class ExecutionPauseEvent:
    """What ``on_execution_pause`` gets: the execution rests, waiting on ``pending``."""

    tenant_id: str
    thread_id: str
    execution_id: str
    pending: list[PendingPause]


@dataclass(frozen=True, slots=True)
class ExecutionResumeEvent:
    """What ``on_execution_resume`` gets: a pause's answer was recorded.

    Attributes:
        pause_id: ``None`` for a `PauseAnswerer.CHANNEL` pause: its id never leaves its channel.
        answered_by: Who answered (the ``owner_id`` or ``answered_by`` of `App.resume`).
    """

    tenant_id: str
    thread_id: str
    execution_id: str
    pause_id: str | None
    answered_by: str
    channel: str
    decision: ToolCallApprovalDecisionDto
