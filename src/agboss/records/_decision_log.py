"""The decision log's entries: every decision, and every outcome that stands for one, of a
tenant — appended by the store in the transaction that records it, chained by hash.

An entry is what an auditor reads: who decided (a person, a model reading their words, a
standing decision, a deadline, the flow), what (the tool, the question's digest, the arguments
as asked), when (asked, decided), why (the reason) and through which role. The store keeps
the real values, as it keeps the audit trail; what leaves it (an export, a report) is masked by
the workflow's PII rules.

Each entry's ``digest`` is SHA-256 over the one before's digest and the entry's JSON as stored
(`chain_digest`); a tenant's first entry follows `chain_genesis`. Editing, removing or
reordering an entry breaks the chain from there on (`agboss.audit.verify_decisions`).
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from agboss.dto import ToolCallApprovalDecisionDto
from agboss.enums import Decider, Outcome, PauseAnswerer, PauseKind, PauseResolution
from agboss.records._pauses import PauseAnswer, PauseAnswerRecord, PauseRecord, Reassignment
from agboss.records._readings import DecisionReading
from agboss.records._refs import pause_ref
from agboss.records._votes import PauseVote

__all__ = [
    "DecisionChain",
    "DecisionEntry",
    "DecisionEvent",
    "LoggedDecision",
    "chain_digest",
    "chain_genesis",
]


class DecisionEvent(StrEnum):
    """What an entry of the decision log records."""

    DECISION = "decision"
    """A question was decided, or closed unanswered."""
    VOTE = "vote"
    """One vote on a question that takes several approvals (its decision is an entry too)."""


_CLOSED: dict[PauseResolution, tuple[Outcome, Decider]] = {
    PauseResolution.EXPIRED: (Outcome.EXPIRED, Decider.DEADLINE),
    PauseResolution.ESCALATED: (Outcome.ESCALATED, Decider.DEADLINE),
    PauseResolution.REASSIGNED: (Outcome.REASSIGNED, Decider.PERSON),
    PauseResolution.WITHDRAWN: (Outcome.WITHDRAWN, Decider.FLOW),
    PauseResolution.CANCELLED: (Outcome.CANCELLED, Decider.FLOW),
    PauseResolution.SEND_FAILED: (Outcome.CANCELLED, Decider.FLOW),
}
"""What an ending other than an answer stands for, and who (in kind) decided it."""


class DecisionEntry(BaseModel):
    """One entry of a tenant's decision log, as it is hashed.

    Attributes:
        event: A decision (or a question closed unanswered), or one vote.
        outcome: How the question ended; a vote's: approved or rejected.
        decided_by: Who decided, in kind.
        who: Who decided, by name: the person (``owner_id`` or ``answered_by``; ``"bo, cy"`` for
            a quorum's deciders), or who closed it (a person cancelling a thread); ``None``
            for a deadline, the flow, a channel that decided at once.
        root_execution_id: The tree the question was asked in.
        execution_id: The execution it waited in.
        pause_ref: The question's reference (`agboss.pause_ref`), never its secret id: one
            per question (an escalated or retried question is asked under a new id).
        kind: What it asked: approve a call, answer a tool's question, run again a call that
            may have run (approved: run again; rejected: it ran, or is not run).
        role: The role (or channel) it was asked of.
        answered_by: Who may answer it.
        agent: The agent whose call it is about.
        tool: The tool whose call it is about.
        digest: The question's digest (`agboss.call_digest`): the call it asked about.
        arguments: The arguments as asked.
        decision: What was decided (its reason, an override and the digests it binds to);
            ``None`` for a question closed unanswered.
        reply: The words the decision was read from, if it was answered in words.
        reading: How those words were read (which interpreter, which model, its
            probabilities).
        asked_at: When it was asked, ISO 8601 on the application's Clock.
        decided_at: When it was decided (a vote: cast), ISO 8601.
        generation: The tree's retry it was asked in.
        escalation: How many times it was handed on (escalated, reassigned) before it was
            asked of ``role``.
        reassigned: To whom and why a person handed it on (`Outcome.REASSIGNED`).
        on_behalf_of: Whose question (or seat of a quorum) ``who`` decided as their delegate
            (`App.delegate`): "bo for ada".
    """

    model_config = ConfigDict(frozen=True)

    event: DecisionEvent
    outcome: Outcome
    decided_by: Decider
    who: str | None
    root_execution_id: str
    execution_id: str
    pause_ref: str
    kind: PauseKind
    role: str
    answered_by: PauseAnswerer
    agent: str
    tool: str
    digest: str | None
    arguments: dict[str, Any]
    decision: ToolCallApprovalDecisionDto | None = None
    reply: str | None = None
    reading: DecisionReading | None = None
    asked_at: str
    decided_at: str
    generation: int = 0
    escalation: int = 0
    reassigned: Reassignment | None = None
    on_behalf_of: str | None = None

    @property
    def source(self) -> str:
        """What it records, once: a question's ending, or one voter's vote on it (by the
        voter's seat, whoever cast it)."""
        if self.event is DecisionEvent.VOTE:
            return f"{self.pause_ref}/vote/{self.on_behalf_of or self.who}"
        return self.pause_ref

    @classmethod
    def of(
        cls,
        pause: PauseRecord,
        resolution: PauseResolution,
        at: datetime,
        answer: PauseAnswer | None,
        *,
        by: Decider | None = None,
        who: str | None = None,
        reassigned: Reassignment | None = None,
    ) -> DecisionEntry:
        """The entry of a question resolved (answered, decided, closed) at ``at``.

        Args:
            by: Who closed it unanswered, in kind, where the ending does not say (a thread
                cancelled by a person or by the application's code).
            who: Who closed it unanswered, by name.
            reassigned: Where a person handed it, and why.
        """
        if resolution in _CLOSED:
            outcome, decider = _CLOSED[resolution]
            decider = by or decider
        else:
            assert answer is not None  # answered or decided: it has its decision
            outcome = Outcome.APPROVED if answer.decision.approved else Outcome.REJECTED
            decider = answer.decided_by or Decider.PERSON
        return cls(
            event=DecisionEvent.DECISION,
            outcome=outcome,
            decided_by=decider,
            who=who if answer is None else answer.responder,
            decision=None if answer is None else answer.decision,
            reply=None if answer is None else answer.reply,
            reading=None if answer is None else answer.reading,
            decided_at=at.isoformat(),
            reassigned=reassigned,
            on_behalf_of=None if answer is None else answer.on_behalf_of,
            **_question(pause),
        )

    @classmethod
    def voted(cls, pause: PauseRecord, vote: PauseVote) -> DecisionEntry:
        """The entry of one vote cast on ``pause``."""
        return cls(
            event=DecisionEvent.VOTE,
            outcome=Outcome.APPROVED if vote.approved else Outcome.REJECTED,
            decided_by=Decider.PERSON,
            who=vote.cast_by or vote.voter,
            on_behalf_of=None if vote.cast_by is None else vote.voter,
            decision=ToolCallApprovalDecisionDto(approved=vote.approved, reason=vote.reason),
            reply=vote.reply,
            decided_at=vote.voted_at,
            **_question(pause),
        )

    @classmethod
    def recorded(cls, root_execution_id: str, entry: PauseAnswerRecord) -> DecisionEntry:
        """The entry of an audit entry saved on its own (`save_pause_answer`)."""
        call = entry.step.tool_call
        decision = entry.decision
        if entry.resolution in _CLOSED:
            outcome, decider = _CLOSED[entry.resolution]
        else:
            outcome = Outcome.APPROVED if decision and decision.approved else Outcome.REJECTED
            decider = Decider.PERSON
        return cls(
            event=DecisionEvent.DECISION,
            outcome=outcome,
            decided_by=decider,
            who=entry.responder,
            root_execution_id=root_execution_id,
            execution_id=entry.execution_id,
            pause_ref=entry.pause_ref or f"{root_execution_id}/{entry.seq}",
            kind=entry.kind,
            role=entry.role,
            answered_by=entry.answered_by,
            agent=entry.step.agent.name,
            tool="" if call is None else call.tool,
            digest=None if decision is None else decision.digest,
            arguments={} if call is None or call.arguments is None else dict(call.arguments),
            decision=decision,
            reply=entry.reply,
            asked_at=entry.asked_at,
            decided_at=entry.resolved_at,
            generation=entry.generation,
            escalation=entry.escalation,
            reassigned=entry.reassigned,
            on_behalf_of=entry.on_behalf_of,
        )


def _question(pause: PauseRecord) -> dict[str, Any]:
    """What an entry says of the question itself."""
    return {
        "root_execution_id": pause.root_execution_id,
        "execution_id": pause.execution_id,
        "pause_ref": pause_ref(pause.pause_id),
        "kind": pause.ask.kind,
        "role": pause.channel,
        "answered_by": pause.answered_by,
        "agent": pause.agent,
        "tool": pause.ask.tool,
        "digest": pause.ask.digest,
        "arguments": dict(pause.ask.arguments),
        "asked_at": pause.asked_at.isoformat(),
        "generation": pause.generation,
        "escalation": pause.escalation,
    }


class LoggedDecision(BaseModel):
    """An entry as the log holds it: its place in the tenant's chain and its hashes.

    Attributes:
        tenant_id: Whose log.
        seq: Its place in the chain, from 1 (entries before a retention cut are gone).
        previous: The digest of the entry before it (the chain's genesis for the first).
        digest: SHA-256 over ``previous`` and ``entry_json`` (`chain_digest`).
        entry_json: The entry exactly as hashed.
    """

    model_config = ConfigDict(frozen=True)

    tenant_id: str
    seq: int
    previous: str
    digest: str
    entry_json: str

    @property
    def entry(self) -> DecisionEntry:
        """The entry, read."""
        return DecisionEntry.model_validate_json(self.entry_json)


class DecisionChain(BaseModel):
    """A tenant's chain as its head row keeps it.

    Attributes:
        tenant_id: Whose log.
        seq: The last entry's place (0: none yet).
        head: The last entry's digest (the genesis when there is none).
        cut_seq: Where retention cut the chain: the place of the last entry removed (0: none
            removed).
        cut_digest: That entry's digest, which the first entry kept follows (``None``: none
            removed; the first entry follows the genesis).
    """

    model_config = ConfigDict(frozen=True)

    tenant_id: str
    seq: int
    head: str
    cut_seq: int = 0
    cut_digest: str | None = None


def chain_genesis(tenant_id: str) -> str:
    """What a tenant's first entry follows: a digest of the tenant's name."""
    return hashlib.sha256(f"agboss decision log {tenant_id}".encode()).hexdigest()


def chain_digest(previous: str, entry_json: str) -> str:
    """An entry's digest: SHA-256, as hex, over the one before's digest and its JSON."""
    return hashlib.sha256((previous + entry_json).encode()).hexdigest()
