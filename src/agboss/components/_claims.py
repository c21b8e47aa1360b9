"""How a role's questions are claimed: one of the people who may answer a question takes it
on, and the others see who handles it (`App.claim`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

__all__ = ["Claims"]


@dataclass(frozen=True, slots=True)
class Claims:
    """How a role's questions are claimed: a role's ``claims=``.

    A person who may answer a waiting question claims it (`App.claim`); the inbox, the
    approvals page, Slack and the command line show who handles it. The claim ends when they
    release it (`App.release`), when the question is answered or closed, or ``lasts`` after it
    was made (claiming it again renews it).

    Attributes:
        lasts: How long a claim holds unless released or answered.
        others_answer: Whether someone else's answer is taken while the question is claimed
            (``False``: it is refused with `PauseClaimedError`, and the question keeps
            waiting for its claimant).
    """

    lasts: timedelta = timedelta(hours=1)
    others_answer: bool = False
