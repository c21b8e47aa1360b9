"""A role's ladder: what happens to a question nobody answered yet, before its deadline."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal

__all__ = ["Escalate", "LadderStep", "Remind"]


@dataclass(frozen=True, slots=True)
class Remind:
    """Reminds whoever was asked: the channel's ``remind`` is called, once, ``after`` the
    question was first asked (on the application's Clock).

    Attributes:
        after: How long after the question was first asked.
    """

    after: timedelta

    @property
    def kind(self) -> Literal["remind"]:
        """What the step does, as a listing says it."""
        return "remind"


@dataclass(frozen=True, slots=True)
class Escalate:
    """Asks another channel role instead, ``after`` the question was first asked: the
    question is withdrawn from its channel (`PauseResolution.ESCALATED`) and asked of the
    role ``to`` — its implementation, its answerers — under a new pause id.

    Attributes:
        after: How long after the question was first asked.
        to: The ``@channel_role`` class asked instead; it approves the same DTO.
    """

    after: timedelta
    to: type[Any]

    @property
    def kind(self) -> Literal["escalate"]:
        """What the step does, as a listing says it."""
        return "escalate"


LadderStep = Remind | Escalate
"""A step of a role's ``ladder``."""
