"""A question's votes: several approvers on one pause (a role's ``approvals=``).

`PauseVotes` is kept on the pause from the moment it is asked (how many approvals it needs,
who may vote) and grows by one `PauseVote` per voter, each committed with its own audit entry;
its `PauseVotes.outcome` is the decision once the quorum is reached or can no longer be.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from agboss.dto import ToolCallApprovalDecisionDto
from agboss.models import Usage
from agboss.records._readings import DecisionReading

__all__ = ["PauseVote", "PauseVotes"]


class PauseVote(BaseModel):
    """One voter's vote on a question.

    Attributes:
        voter: Who voted: the ``answered_by`` (a channel role) or ``owner_id`` (a thread-owner
            role) of the answer.
        approved: Whether they approved the call.
        reason: Why, in their words.
        reply: The free text the vote was read from, when given with ``reply=``.
        voted_at: When, ISO 8601 on the application's Clock.
        usage: What reading the reply cost, when a model read it.
        reading: How ``reply`` was read into the vote.
        cast_by: Who cast it for ``voter``, as their delegate (`App.delegate`); ``None`` when
            the voter cast it. The voter's seat counts once, whoever cast it.
    """

    model_config = ConfigDict(frozen=True)

    voter: str
    approved: bool
    reason: str | None = None
    reply: str | None = None
    voted_at: str
    usage: Usage | None = None
    reading: DecisionReading | None = None
    cast_by: str | None = None

    @property
    def named(self) -> str:
        """The vote as a record names its voter: ``bo for ada`` when a delegate cast it."""
        return self.voter if self.cast_by is None else f"{self.cast_by} for {self.voter}"


class PauseVotes(BaseModel):
    """A question's quorum and the votes cast so far.

    Attributes:
        needed: How many approvals it needs.
        eligible: Who may vote, as named when it was asked; ``None``: anyone its channel
            authenticates.
        rejection_decides: One rejection rejects it at once.
        votes: The votes so far, in the order cast.
    """

    model_config = ConfigDict(frozen=True)

    needed: int
    eligible: tuple[str, ...] | None = None
    rejection_decides: bool = False
    votes: tuple[PauseVote, ...] = ()

    def of(self, voter: str) -> PauseVote | None:
        """The vote ``voter`` cast, if any."""
        return next((vote for vote in self.votes if vote.voter == voter), None)

    def adding(self, vote: PauseVote) -> PauseVotes:
        """These votes and one more."""
        return self.model_copy(update={"votes": (*self.votes, vote)})

    def counts(self, person: str) -> bool:
        """Whether ``person`` is counted already: they voted in their seat, or cast a vote
        for another's as their delegate. A person counts once."""
        return any(person in (vote.voter, vote.cast_by) for vote in self.votes)

    @property
    def approvals(self) -> int:
        """How many voters approved."""
        return sum(1 for vote in self.votes if vote.approved)

    @property
    def rejections(self) -> int:
        """How many voters rejected."""
        return len(self.votes) - self.approvals

    @property
    def waiting_on(self) -> tuple[str, ...] | None:
        """The eligible voters who have not voted yet (``None``: anyone may still vote)."""
        if self.eligible is None:
            return None
        return tuple(voter for voter in self.eligible if self.of(voter) is None)

    @property
    def reached(self) -> bool:
        """Whether enough voters approved."""
        return self.approvals >= self.needed

    @property
    def unreachable(self) -> bool:
        """Whether the approvals can no longer be had: a rejection that decides, or too few
        eligible voters left to reach the count."""
        if self.rejection_decides and self.rejections:
            return True
        waiting = self.waiting_on
        return waiting is not None and self.approvals + len(waiting) < self.needed

    def outcome(self) -> ToolCallApprovalDecisionDto | None:
        """The question's decision once the votes decide it, else ``None``: approved when the
        count is reached, rejected — with each rejection's reason, for the model to read — when
        it can no longer be."""
        if self.reached:
            approving = [vote for vote in self.votes if vote.approved]
            return ToolCallApprovalDecisionDto(
                approved=True,
                reason=f"approved by {self.needed} of the voters: {_said(approving)}",
            )
        if not self.unreachable:
            return None
        rejecting = [vote for vote in self.votes if not vote.approved]
        if self.rejection_decides:
            why = f"rejected by {_said(rejecting[:1])}"
        else:
            why = (
                f"{self.needed} approvals were needed and can no longer be had; "
                f"rejected by {_said(rejecting)}"
            )
        return ToolCallApprovalDecisionDto(approved=False, reason=why)

    def usage(self) -> Usage | None:
        """What reading the votes' replies cost, together (``None``: nothing was read)."""
        costs = [vote.usage for vote in self.votes if vote.usage is not None]
        return sum(costs[1:], costs[0]) if costs else None

    def deciders(self) -> str:
        """Who decided, as the audit entry's responder: the approvers once the count was
        reached, else the voters who rejected."""
        approved = self.reached
        decided = [vote.named for vote in self.votes if vote.approved is approved]
        if self.rejection_decides and not approved:
            decided = decided[:1]
        return ", ".join(decided)


def _said(votes: list[PauseVote]) -> str:
    """Voters with their reasons: ``bob (too much), carol``."""
    return ", ".join(
        vote.voter if vote.reason is None else f"{vote.voter} ({vote.reason})" for vote in votes
    )
