"""What every answer to a pause shares, whether it decides the pause or is one vote of
several: the shape and credential checks, the decision read as the tool's input gave it, and
the receipt."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

from agboss.assembly import ToolChannel
from agboss.dto import ToolCallApprovalDecisionDto
from agboss.engine import (
    Held,
    Interpretation,
    bound_decision,
    delegated_by,
    emit_pause_event,
    interpret_reply,
    tool_of,
    validate_decision,
)
from agboss.enums import Decider, Outcome, PauseAnswerer, PauseResolution, PauseStatus
from agboss.errors import (
    DtoValidationError,
    NotAnAnswererError,
    NotPausedError,
    PauseAnswererError,
    PauseClaimedError,
    ReplyInterpreterMissingError,
    StoreError,
    StoreOutcomeUnknownError,
    ThreadOwnerError,
)
from agboss.inputs import InputLimits, check_depth, check_text
from agboss.observability import ExecutionEventKind, decided, log_event
from agboss.records import ExecutionResumeEvent, PauseRecord, PauseVotes, shown_pause_id
from agboss.store.protocol import ExecutionRow, Store

if TYPE_CHECKING:
    from agboss.engine import Engine

__all__ = [
    "AnswerReceipt",
    "Ballot",
    "Credentials",
    "Given",
    "Recorded",
    "answering_for",
    "as_owner",
    "check_not_owner",
    "check_owner",
    "check_shape",
    "check_unclaimed",
    "closed_as",
    "credential",
    "expired",
    "others_answer",
    "read_back",
    "read_decision",
    "shown",
    "shown_votes",
    "tell",
    "tell_answered",
    "unmasked",
    "validated",
    "why_not_written",
]


def check_shape(decision: object, reply: object, limits: InputLimits) -> None:
    """Exactly one of a decision and a reply, each within the limits; raises otherwise."""
    if (decision is None) == (reply is None):
        raise DtoValidationError(
            "a resume takes exactly one of decision= or reply=",
            hint="pass decision=ToolCallApprovalDecisionDto(...) or reply='the answer in words'",
        )
    if reply is None:
        # Before anything reads it: the lookup's repeat check, the masks, the validation.
        if isinstance(decision, ToolCallApprovalDecisionDto):
            check_depth(decision.override_arguments, "override_arguments")
        else:
            check_depth(decision, "decision")
        return
    check_text(reply, "reply", limits.reply_length, "reply_length")
    assert isinstance(reply, str)
    if not reply.strip():
        raise DtoValidationError(
            "the reply is empty", hint="pass the person's words, or answer with decision="
        )


def credential(pause: PauseRecord, owner_id: str | None, answered_by: str | None) -> str:
    """Who answers, by the credential the pause takes: ``owner_id`` for a thread-owner
    pause, ``answered_by`` for a channel pause; raises when the other (or neither) is given."""
    if pause.answered_by is PauseAnswerer.THREAD_OWNER:
        if answered_by is not None or owner_id is None:
            instead = ", not answered_by=" if answered_by is not None else ""
            raise PauseAnswererError(
                "this pause is answered by the thread's owner",
                hint=f"pass owner_id=<the thread's owner>{instead}",
            )
        return owner_id
    if owner_id is not None or answered_by is None:
        instead = ", not owner_id=" if owner_id is not None else ""
        raise PauseAnswererError(
            "this pause is answered through its channel",
            hint="pass answered_by=<who answered, as the channel authenticated them>" + instead,
        )
    return answered_by


def check_owner(pause: PauseRecord, row: ExecutionRow, responder: str) -> None:
    """A thread-owner pause's one answerer is the thread's owner; raises otherwise."""
    if pause.answered_by is PauseAnswerer.THREAD_OWNER and responder != row.owner_id:
        raise ThreadOwnerError("owner_id is not the owner of the pause's thread")


def others_answer(channel: ToolChannel) -> bool:
    """Whether the channel's role takes someone else's answer while a question is claimed."""
    role = channel.role
    return role is not None and role.claims.others_answer


def check_unclaimed(engine: Engine, pause: PauseRecord, responder: str) -> None:
    """Raises `PauseClaimedError` if someone else's claim on ``pause`` holds now, and its role
    takes no one else's answer meanwhile."""
    holder = pause.claimant(engine.runtime.clock.now())
    if holder is None or holder == responder:
        return
    _, channel = tool_of(engine.runtime, pause)
    if not others_answer(channel):
        assert pause.claimed_until is not None  # a claim that holds has its end
        raise PauseClaimedError(holder, pause.claimed_until)


def unmasked(
    engine: Engine, decision: object, pause: PauseRecord, row: ExecutionRow, dto: type[BaseModel]
) -> object:
    """The decision with its override arguments handed back as ``pending`` showed them turned
    back into the real values (see `PiiOutside.unmasked`)."""
    if isinstance(decision, ToolCallApprovalDecisionDto):
        overrides: object = decision.override_arguments
    elif isinstance(decision, Mapping):
        overrides = decision.get("override_arguments")
    else:
        return decision
    if not isinstance(overrides, Mapping):
        return decision
    assembly = engine.runtime.assembly
    kept = assembly.pii_outside.unmasked(
        overrides, pause.ask.arguments, dto, assembly.pii_policy(row.workflow)
    )
    if kept is overrides:
        return decision
    if isinstance(decision, ToolCallApprovalDecisionDto):
        return decision.model_copy(update={"override_arguments": kept})
    return {**decision, "override_arguments": kept}


@dataclass(frozen=True, slots=True)
class AnswerReceipt:
    """An answer recorded: what `App.answer` returns at once, before the tree moves.

    Attributes:
        pause_id: The pause answered, as results may show it (``None`` for a channel pause).
        pause_ref: Its reference (`agboss.pause_ref`), for every pause: what may leave the
            server in the id's place.
        execution_id: The root execution it waits in; `App.get` reads where it stands.
        thread_id: Its thread.
        decision: The decision recorded (validated; read from the reply for ``reply=``),
            masked like the audit trail: the tool gets the real values.
        responder: Who answered.
        repeated: This answer repeats one already recorded (a retried webhook: the same
            answerer, the same decision or words); nothing new was recorded.
    """

    pause_id: str | None
    pause_ref: str
    execution_id: str
    thread_id: str
    decision: ToolCallApprovalDecisionDto
    responder: str
    repeated: bool = False
    votes: PauseVotes | None = None
    """For a question that takes several approvals: its votes after this one (this answer
    was a vote; ``votes.outcome()`` is the question's decision once they decided it)."""

    @property
    def decided(self) -> bool:
        """Whether the question is decided: ``False`` for a vote that left it waiting for the
        other voters."""
        return self.votes is None or self.votes.outcome() is not None


@dataclass(frozen=True, slots=True)
class Credentials:
    """Which pause an answer is to, and who gives it, as the caller's door checked them.

    Attributes:
        pause_id: The pause.
        tenant_id: Its tenant (``None``: the default tenant).
        owner_id: The thread's owner, for a thread-owner pause.
        answered_by: Who answered, as the channel authenticated them, for a channel pause.
    """

    pause_id: str
    tenant_id: str | None = None
    owner_id: str | None = None
    answered_by: str | None = None


@dataclass(frozen=True, slots=True)
class Given:
    """An answer as its caller gave it: who answers, and exactly one of a decision and a
    reply.

    Attributes:
        responder: Who answers.
        on_behalf_of: Whose question they answer as a delegate (`App.delegate`), found by
            `answering_for`; ``None``: their own.
    """

    responder: str
    decision: ToolCallApprovalDecisionDto | Mapping[str, Any] | None
    reply: str | None
    on_behalf_of: str | None = None

    @property
    def answerer(self) -> str:
        """Whose answer it counts as: the principal's, given by their delegate; else the
        responder's."""
        return self.on_behalf_of or self.responder


async def answering_for(
    engine: Engine, pause: PauseRecord, row: ExecutionRow, responder: str
) -> str | None:
    """Whose question ``responder`` answers when it is not theirs but someone's who delegated
    it to them (`App.delegate`): a thread-owner question of another owner, a question someone
    else claimed (or was handed), a quorum's seat of a voter named when they are not named
    themselves. ``None`` when they answer as themselves (or may not at all: the checks say
    why)."""
    runtime = engine.runtime
    if pause.votes is not None:
        return await _seat_for(engine, pause, row, pause.votes, responder)
    if pause.answered_by is PauseAnswerer.THREAD_OWNER:
        return await _owner_for(engine, pause, row, responder)
    holder = pause.claimant(runtime.clock.now())
    if holder is not None and holder != responder and not others_answer(tool_of(runtime, pause)[1]):
        return await delegated_by(runtime, pause, responder, (holder,))
    return None


async def as_owner(engine: Engine, pause: PauseRecord, row: ExecutionRow, person: str) -> str:
    """Who ``person`` stands in for on a thread-owner question (a claim, a reassignment):
    the thread's owner when the owner delegated it to them, else themselves."""
    if pause.answered_by is not PauseAnswerer.THREAD_OWNER:
        return person
    return await _owner_for(engine, pause, row, person) or person


async def _owner_for(
    engine: Engine, pause: PauseRecord, row: ExecutionRow, person: str
) -> str | None:
    """The thread's owner, when ``person`` is not them and the owner delegated the question
    to them; else ``None``."""
    if person == row.owner_id:
        return None
    return await delegated_by(engine.runtime, pause, person, (row.owner_id,))


async def _seat_for(
    engine: Engine, pause: PauseRecord, row: ExecutionRow, votes: PauseVotes, responder: str
) -> str | None:
    """The seat a delegate votes in: one of a principal who has not voted, when the
    responder has no seat of their own. A person counts once: one who voted (or cast a vote
    for another) is given none."""
    eligible = votes.eligible
    if eligible is None:  # no voters named: the thread's owner, on a thread-owner role
        seats: tuple[str, ...] = (
            (row.owner_id,) if pause.answered_by is PauseAnswerer.THREAD_OWNER else ()
        )
    else:
        seats = tuple(eligible)
    if responder in seats or any(vote.cast_by == responder for vote in votes.votes):
        return None  # their own seat, or counted already: a person counts once
    open_seats = tuple(seat for seat in seats if votes.of(seat) is None)
    return await delegated_by(engine.runtime, pause, responder, open_seats)


class Ballot(Protocol):
    """How an answer to one pause counts: alone, deciding it, or as one vote of several
    (``approvals=``). The one path every answer takes (`record_answer`) asks it at each of
    its steps, in order: who may answer, an answer given before, the decision, the record."""

    def check(self, given: Given) -> None:
        """Raises unless ``given``'s responder may answer this pause (for its principal)."""
        ...

    def again(self, given: Given, *, repeat_ok: bool) -> AnswerReceipt | None:
        """The receipt of an answer this one repeats (``repeat_ok``: a retried webhook); or
        raises when the answerer may not answer twice."""
        ...

    def check_decision(self, decision: ToolCallApprovalDecisionDto) -> None:
        """Raises unless this kind of answer may decide ``decision``."""
        ...

    async def record(
        self,
        given: Given,
        decision: ToolCallApprovalDecisionDto,
        read: Interpretation | None,
        *,
        move: bool,
        repeat_ok: bool,
    ) -> Recorded:
        """Records the answer through the engine's door, and what the caller is told
        (``read``: how a reply was read into ``decision``)."""
        ...


@dataclass(frozen=True, slots=True)
class Recorded:
    """What the first phase of an answer recorded, and the tree's lease it took for the
    second (``None``: not acquired — held elsewhere, not asked for, or nothing to move)."""

    receipt: AnswerReceipt
    held: Held | None = None
    in_doubt: bool = False
    """The commit's outcome was learnt by reading the pause back: whether it also took the
    tree's lease is not known, so this call does not move the tree (the recovery sweep does,
    once a lease it may hold expired)."""
    tenant_id: str | None = None
    """The tenant of the pause, when a vote left it waiting, or when the tree is left to
    another build: its tree is read, not moved."""
    left: bool = False
    """This build does not serve the tree's version: the answer was announced for a build
    that does, and its tree is read, not moved."""

    @property
    def undecided(self) -> bool:
        """The answer was a vote that left its question waiting: there is nothing to move."""
        return not self.receipt.decided

    @property
    def to_move(self) -> bool:
        """Whether this call moves the tree: a new answer whose commit is known, that decided
        its question."""
        return not (self.receipt.repeated or self.in_doubt or self.undecided or self.left)


def closed_as(pause: PauseRecord) -> str:
    """How a closed pause is said to a late answer: ``expired`` when its deadline decided
    (whatever it decided, and on any instance), ``escalated`` or ``reassigned`` for a question
    asked of another role or person (under a new id), else its status."""
    if pause.resolution in _SAID:
        return pause.resolution.value
    return pause.status.value


_SAID = (PauseResolution.EXPIRED, PauseResolution.ESCALATED, PauseResolution.REASSIGNED)
"""The endings a late answer is told by name, not by the status they left."""


async def why_not_written(engine: Engine, pause: PauseRecord) -> NotPausedError | PauseClaimedError:
    """Why a write on a waiting question (a claim, a reassignment) changed nothing: it
    closed, its deadline came, or someone else's claim holds — as the store has it now."""
    runtime = engine.runtime
    current = await runtime.store.pauses.find_by_tenant_id_and_pause_id(
        pause.tenant_id, pause.pause_id
    )
    if current is None:
        return NotPausedError("gone")
    now = runtime.clock.now()
    holder = current.claimant(now)
    if current.status is PauseStatus.PENDING and holder is not None:
        assert current.claimed_until is not None  # a claim that holds has its end
        return PauseClaimedError(holder, current.claimed_until)
    if expired(current, now):
        return NotPausedError("expired")
    return NotPausedError(closed_as(current))


def expired(pause: PauseRecord, now: datetime) -> bool:
    """Whether a waiting pause's deadline has passed: no answer is taken after it."""
    return (
        pause.status is PauseStatus.PENDING
        and pause.expires_at is not None
        and pause.expires_at <= now
    )


def shown(
    engine: Engine, pause: PauseRecord, row: ExecutionRow, decision: ToolCallApprovalDecisionDto
) -> ToolCallApprovalDecisionDto:
    """The decision as a receipt may show it: masked like the audit trail (a receipt leaves
    the process, to a webhook's caller or a page)."""
    outside = engine.runtime.assembly.pii_outside
    return outside.decision(
        decision,
        pause.agent,
        pause.ask.tool,
        pause.ask.arguments,
        outside.policy(row.workflow),
        outside.input_values(row.workflow, row.input_json),
    )


async def read_back(
    store: Store, pause: PauseRecord, unknown: StoreOutcomeUnknownError
) -> PauseRecord | None:
    """A pause as the store has it now, after a commit whose outcome is unknown.

    Raises:
        StoreOutcomeUnknownError: The store cannot be asked either.
    """
    try:
        return await store.pauses.find_by_tenant_id_and_pause_id(pause.tenant_id, pause.pause_id)
    except StoreError as error:
        raise unknown from error


def validated(
    engine: Engine,
    decision: ToolCallApprovalDecisionDto | Mapping[str, Any] | None,
    pause: PauseRecord,
    row: ExecutionRow,
) -> ToolCallApprovalDecisionDto:
    """A decision given with ``decision=``, validated as the pause's tool takes it (masked
    override arguments turned back into the real values first), and bound to the question it
    decides (`bound`)."""
    tool_spec, _ = tool_of(engine.runtime, pause)
    given = unmasked(engine, decision, pause, row, tool_spec.input)
    valid = validate_decision(
        given, tool_spec.name, tool_spec.input, engine.runtime.assembly.spec.limits, pause.ask.kind
    )
    return bound(engine, valid, pause, tool_spec.input)


def bound(
    engine: Engine,
    decision: ToolCallApprovalDecisionDto,
    pause: PauseRecord,
    tool_input: type[BaseModel],
) -> ToolCallApprovalDecisionDto:
    """A valid decision bound to the question it decides, as it is recorded: the question's
    digest, and the digest of the call its override makes (`bound_decision`)."""
    definition = engine.runtime.assembly.tool_definition(pause.ask.tool)
    return bound_decision(decision, pause, tool_input, definition)


async def read_decision(
    engine: Engine,
    pause: PauseRecord,
    row: ExecutionRow,
    decision: ToolCallApprovalDecisionDto | Mapping[str, Any] | None,
    reply: str | None,
) -> tuple[ToolCallApprovalDecisionDto, Interpretation | None]:
    """The decision an answer gives — validated, or read from a reply by the role's reply
    interpreter — and, for a reply, how it was read and what that cost.

    Raises:
        ReplyInterpreterMissingError: A reply for a role without a reply interpreter.
    """
    if reply is None:
        return validated(engine, decision, pause, row), None
    tool_spec, channel = tool_of(engine.runtime, pause)
    if channel.role is None or channel.role.reply_interpreter is None:
        raise ReplyInterpreterMissingError(
            f"{channel.name} has no reply interpreter to read a free-text reply",
            hint="answer with decision=, or name a reply_interpreter= on the channel role",
        )
    interpretation = await interpret_reply(engine.runtime, pause, row, reply)
    return bound(engine, interpretation.decision, pause, tool_spec.input), interpretation


def check_not_owner(engine: Engine, pause: PauseRecord, row: ExecutionRow, responder: str) -> None:
    """Under its role's ``distinct_from_owner``, the thread's owner may not answer; raises."""
    _, channel = tool_of(engine.runtime, pause)
    if channel.role is not None and channel.role.distinct_from_owner and responder == row.owner_id:
        raise NotAnAnswererError(
            f"{responder} owns the thread whose request asks, and {channel.name} takes its "
            "answers from someone else (distinct_from_owner)",
            hint="answer as another person who may approve it",
        )


_TOLD = {
    ExecutionEventKind.PAUSE_ANSWERED: (
        "run.answered",
        "the question on %(tool)s through %(channel)s of execution %(execution_id)s was "
        "answered by %(answered_by)s: %(verdict)s",
    ),
    ExecutionEventKind.PAUSE_VOTED: (
        "run.voted",
        "%(answered_by)s voted on the question on %(tool)s through %(channel)s of execution "
        "%(execution_id)s: %(verdict)s",
    ),
}
"""The log line of each event an answer emits."""


def tell(
    engine: Engine,
    pause: PauseRecord,
    kind: ExecutionEventKind,
    responder: str,
    approved: bool,
    now: datetime,
) -> None:
    """Says that a question was answered (or voted on): its log line and its event."""
    event, message = _TOLD[kind]
    log_event(
        engine.runtime.logger,
        logging.INFO,
        event,
        message,
        execution_id=pause.root_execution_id,
        tenant_id=pause.tenant_id,
        tool=pause.ask.tool,
        channel=pause.channel,
        answered_by=responder,
        verdict="approved" if approved else "rejected",
    )
    emit_pause_event(kind, pause, now, answered_by=responder, approved=approved)


async def tell_answered(
    engine: Engine,
    resolved: PauseRecord,
    row: ExecutionRow,
    responder: str,
    decision: ToolCallApprovalDecisionDto,
    now: datetime,
) -> None:
    """Says that a question was answered: the log, the event, the metrics, the ``on_resume``
    hook."""
    tell(engine, resolved, ExecutionEventKind.PAUSE_ANSWERED, responder, decision.approved, now)
    outcome = Outcome.APPROVED if decision.approved else Outcome.REJECTED
    decided(resolved, outcome, _decider(resolved), now)
    await engine.hooks.on_resume(
        ExecutionResumeEvent(
            tenant_id=resolved.tenant_id,
            thread_id=row.thread_id,
            execution_id=resolved.root_execution_id,
            pause_id=shown_pause_id(resolved.pause_id, resolved.answered_by),
            answered_by=responder,
            channel=resolved.channel,
            decision=decision,
        )
    )


def shown_votes(
    engine: Engine, pause: PauseRecord, row: ExecutionRow, votes: PauseVotes
) -> PauseVotes:
    """A question's votes as a receipt may show them: masked like the audit trail."""
    outside = engine.runtime.assembly.pii_outside
    return outside.votes(
        votes,
        pause.agent,
        pause.ask.tool,
        pause.ask.arguments,
        outside.policy(row.workflow),
        outside.input_values(row.workflow, row.input_json),
    )


def _decider(pause: PauseRecord) -> Decider:
    """Who decided an answered question: a person, or the reply interpreter that read their
    words (a model, or code)."""
    return Decider.PERSON if pause.answer is None else pause.answer.decided_by or Decider.PERSON
