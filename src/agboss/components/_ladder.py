"""A role's ladder: what happens to a question nobody answered yet, before its deadline."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

__all__ = ["LadderStep", "Remind"]


@dataclass(frozen=True, slots=True)
class Remind:
    """Reminds whoever was asked: the channel's ``remind`` is called, once, ``after`` the
    question was first asked (on the application's Clock).

    Attributes:
        after: How long after the question was asked.
    """

    after: timedelta

    @property
    def kind(self) -> Literal["remind"]:
        """What the step does, as a listing says it."""
        return "remind"


LadderStep = Remind
"""A step of a role's ``ladder``."""
