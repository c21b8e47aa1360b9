"""A role's quorum: how many approvals one question needs, and who may give them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from agboss.components._channels import ApprovalAsk

__all__ = ["Quorum", "QuorumAsk", "Voters"]

ArgsT = TypeVar("ArgsT", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class QuorumAsk(Generic[ArgsT]):
    """What a quorum's ``of`` function gets when a question is asked: enough to name who may
    vote on it (the finance team of the tenant, the owner's managers, by the amount).

    Attributes:
        tenant_id: The tenant of the execution.
        thread_id: Its thread.
        owner_id: The thread's owner (the person who asked, for separation of duties).
        value: The tool call, its arguments as the tool's input DTO.
    """

    tenant_id: str
    thread_id: str
    owner_id: str
    value: ApprovalAsk[ArgsT]


Voters = Sequence[str] | Callable[[QuorumAsk[Any]], Iterable[str] | Awaitable[Iterable[str]]]
"""Who may vote: a fixed list, or a function (plain or ``async``) of the question."""


@dataclass(frozen=True, slots=True)
class Quorum:
    """Several approvers on one question: a role's ``approvals=``.

    The question resolves as approved once ``needed`` voters approved it, and as rejected
    once that can no longer happen — every voter named by ``of`` voted, or enough of them
    rejected it — or at once on a rejection with ``rejection_decides``. Each vote is recorded
    on the same pause, with its own audit entry; the same voter twice is a repeat, not a
    second vote.

    Attributes:
        needed: How many approvals the question needs.
        of: Who may vote, named when the question is asked (kept with it): a list of
            answerer ids, or a function of the `QuorumAsk` that returns them. ``None``: anyone
            the role's channel authenticates (a channel role only) — the question then waits
            for ``needed`` approvals, or for a rejection with ``rejection_decides``, or its
            deadline.
        rejection_decides: One rejection rejects the call at once (a veto), instead of only
            once the approvals can no longer be had.
    """

    needed: int
    of: Voters | None = None
    rejection_decides: bool = False

    def __post_init__(self) -> None:
        # A list is kept as a tuple: a spec is frozen through and through.
        if isinstance(self.of, list):
            object.__setattr__(self, "of", tuple(self.of))
