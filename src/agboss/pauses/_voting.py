"""A vote on a question whose role takes several approvals (``approvals=``).

Each voter's answer is checked as any answer is — the credential, the decision or the reply
read — and then whether they may vote: named among the question's voters, not the thread's
owner under ``distinct_from_owner``. It is recorded with `CastVote`, under the pause row's
lock, with its own audit entry; the vote that reaches the quorum, or makes it unreachable,
resolves the pause in the same commit, and the tree then moves as after any answer. The same
voter again is a repeat (its receipt again) or, voting otherwise, `AlreadyVotedError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from agboss.dto import ToolCallApprovalDecisionDto
from agboss.engine import Interpretation, shows_answers, tool_of
from agboss.enums import PauseAnswerer, PauseStatus
from agboss.errors import (
    AgbossError,
    AlreadyVotedError,
    DtoValidationError,
    NotAnAnswererError,
    NotPausedError,
    StoreOutcomeUnknownError,
    StoreUnavailableError,
)
from agboss.observability import ExecutionEventKind
from agboss.pauses._answers import (
    AnswerReceipt,
    Given,
    Recorded,
    check_not_owner,
    check_owner,
    closed_as,
    expired,
    read_back,
    shown,
    shown_votes,
    tell,
    tell_answered,
    validated,
)
from agboss.records import PauseRecord, PauseVote, PauseVotes, pause_ref, shown_pause_id
from agboss.store.protocol import ExecutionRow, Store
from agboss.store.writes import CastVote, Voted

if TYPE_CHECKING:
    from agboss.engine import Engine

__all__ = ["VoteBallot"]


@dataclass(frozen=True, slots=True)
class VoteBallot:
    """An answer that counts as one vote of several (a `Ballot`); see the module's
    docstring. The tree moves only after the vote that decided its question
    (``Recorded.to_move``), waiting for its lease like an answer that found it held."""

    engine: Engine
    pause: PauseRecord
    row: ExecutionRow
    votes: PauseVotes

    def check(self, given: Given) -> None:
        """Raises `NotAnAnswererError` unless the seat voted in is named among the question's
        voters (the thread's owner alone when a thread-owner role named none), and not the
        owner's under ``distinct_from_owner`` (nor is its delegate the owner); raises
        `AlreadyVotedError` for a person counted already, in their seat or another's."""
        for cast in self.votes.votes:  # their own seat's vote is `again`'s to judge
            if given.on_behalf_of is None and cast.cast_by == given.responder:
                raise AlreadyVotedError(
                    f"{given.responder} already voted on this question for {cast.voter}; a "
                    "person counts once"
                )
        _check_voter(self.engine, self.pause, self.row, self.votes, given.answerer)
        if given.on_behalf_of is not None:
            check_not_owner(self.engine, self.pause, self.row, given.responder)

    def again(self, given: Given, *, repeat_ok: bool) -> AnswerReceipt | None:
        """A voter who voted already: their vote's receipt again when this repeats it (a
        retried webhook, with ``repeat_ok``), else `AlreadyVotedError`."""
        cast = self.votes.of(given.answerer)
        if cast is None:
            return None
        return _again(self.engine, self.pause, self.row, given, cast, self.votes, repeat_ok)

    def check_decision(self, decision: ToolCallApprovalDecisionDto) -> None:
        """A vote approves the call as asked: `DtoValidationError` for ``override_arguments``."""
        if decision.override_arguments is not None:
            raise DtoValidationError(
                "a vote approves or rejects the call as asked; it cannot change its arguments",
                hint="vote without override_arguments (several approvers approve one call)",
            )

    async def record(
        self,
        given: Given,
        decision: ToolCallApprovalDecisionDto,
        read: Interpretation | None,
        *,
        move: bool,
        repeat_ok: bool,
    ) -> Recorded:
        """Casts the vote (`CastVote`, through the engine's door); the one that decides the
        question resolves it in the same commit.

        Raises:
            NotPausedError: The question was closed, or its deadline passed, since it was
                read.
            AlreadyVotedError: The same voter was counted meanwhile, otherwise.
        """
        engine, pause, row = self.engine, self.pause, self.row
        runtime = engine.runtime
        now = runtime.clock.now()
        ballot = PauseVote(
            voter=given.answerer,
            cast_by=None if given.on_behalf_of is None else given.responder,
            approved=decision.approved,
            reason=decision.reason,
            reply=given.reply,
            voted_at=now.isoformat(),
            usage=None if read is None else read.usage,
            reading=None if read is None else read.reading,
        )
        write = CastVote(pause, ballot, now, tell=shows_answers(tool_of(runtime, pause)[1]))
        in_doubt = False
        try:
            voted = await engine.cast_vote(write, move=move)
        except StoreOutcomeUnknownError as unknown:
            voted, in_doubt = await _settled(runtime.store, write, unknown), True
        if voted.votes is None:  # closed, or its deadline passed, since it was read
            current = await runtime.store.pauses.find_by_tenant_id_and_pause_id(
                pause.tenant_id, pause.pause_id
            )
            if current is not None and expired(current, runtime.clock.now()):
                raise NotPausedError("expired")
            raise NotPausedError(closed_as(current) if current else "gone")
        theirs = voted.votes.of(given.answerer)
        if not voted.counted and theirs is not None:  # the same voter, counted meanwhile
            return Recorded(
                _again(engine, pause, row, given, theirs, voted.votes, repeat_ok),
                tenant_id=pause.tenant_id,
            )
        if not voted.counted:  # the delegate was counted meanwhile, in another seat
            raise AlreadyVotedError(
                f"{given.responder} already voted on this question; a person counts once"
            )
        voter = ballot.named
        tell(engine, pause, ExecutionEventKind.PAUSE_VOTED, voter, ballot.approved, now)
        if voted.resolved is not None:
            outcome = voted.votes.outcome()
            assert outcome is not None
            assert voted.resolved.answer is not None
            responder = voted.resolved.answer.responder or voter
            await tell_answered(engine, voted.resolved, row, responder, outcome, now)
        receipt = _receipt(engine, pause, row, voter, decision, voted.votes)
        return Recorded(receipt, None, in_doubt, tenant_id=pause.tenant_id)


def _receipt(
    engine: Engine,
    pause: PauseRecord,
    row: ExecutionRow,
    voter: str,
    decision: ToolCallApprovalDecisionDto,
    votes: PauseVotes,
    *,
    repeated: bool = False,
) -> AnswerReceipt:
    """A vote's receipt: the voter's decision and the votes, masked as a receipt shows them."""
    return AnswerReceipt(
        pause_id=shown_pause_id(pause.pause_id, pause.answered_by),
        pause_ref=pause_ref(pause.pause_id),
        execution_id=pause.root_execution_id,
        thread_id=row.thread_id,
        decision=shown(engine, pause, row, decision),
        responder=voter,
        repeated=repeated,
        votes=shown_votes(engine, pause, row, votes),
    )


def _check_voter(
    engine: Engine, pause: PauseRecord, row: ExecutionRow, votes: PauseVotes, voter: str
) -> None:
    """Whether ``voter`` may vote: named among the question's voters (the thread's owner
    alone when a thread-owner role named none), and not the owner under
    ``distinct_from_owner``; raises otherwise."""
    check_not_owner(engine, pause, row, voter)
    if votes.eligible is None:
        if pause.answered_by is PauseAnswerer.THREAD_OWNER:
            check_owner(pause, row, voter)
    elif voter not in votes.eligible:
        raise NotAnAnswererError(
            f"{voter} is not among the voters named for this question",
            hint="answer as one of the voters its role's Quorum(of=...) named when it was asked",
        )


def _again(
    engine: Engine,
    pause: PauseRecord,
    row: ExecutionRow,
    given: Given,
    cast: PauseVote,
    votes: PauseVotes,
    repeat_ok: bool,
) -> AnswerReceipt:
    """A voter who voted already: their vote's receipt again when this repeats it (a
    retried webhook, with ``repeat_ok``), else `AlreadyVotedError`."""
    if repeat_ok and _repeats(engine, pause, row, given, cast):
        decision = ToolCallApprovalDecisionDto(approved=cast.approved, reason=cast.reason)
        return _receipt(engine, pause, row, given.responder, decision, votes, repeated=True)
    verdict = "approved" if cast.approved else "rejected"
    raise AlreadyVotedError(
        f"{given.responder} already voted on this question ({verdict} it); a vote stands as cast"
    )


def _repeats(
    engine: Engine, pause: PauseRecord, row: ExecutionRow, given: Given, cast: PauseVote
) -> bool:
    """Whether an answer repeats the vote cast: the same words, or the same decision once
    validated."""
    if given.reply is not None:
        return cast.reply == given.reply
    if cast.reply is not None:
        return False
    try:
        valid = validated(engine, given.decision, pause, row)
    except AgbossError:
        return False
    return (
        valid.approved == cast.approved
        and valid.reason == cast.reason
        and valid.override_arguments is None
    )


async def _settled(store: Store, write: CastVote, unknown: StoreOutcomeUnknownError) -> Voted:
    """Whether a vote whose commit's outcome is unknown was recorded, asked of the store once
    more.

    Raises:
        StoreUnavailableError: It was not recorded and the question still waits.
        StoreOutcomeUnknownError: The store cannot be asked either.
    """
    pause = write.pause
    current = await read_back(store, pause, unknown)
    votes = None if current is None else current.votes
    if votes is not None and votes.of(write.vote.voter) == write.vote:
        return Voted(votes, counted=True)
    if current is None or current.status is not PauseStatus.PENDING:
        return Voted(None)
    raise StoreUnavailableError(
        f"the store failed before it recorded the vote: {unknown.message}",
        hint="nothing was recorded and the question still waits: vote again",
    ) from unknown
