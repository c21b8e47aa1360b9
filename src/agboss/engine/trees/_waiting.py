"""Not now: what a step, a tool call, an agent's visit, a branch or a flow returns while it
cannot finish in this pass — it waits for an answer, or rests until its next attempt is due.

One value says both, with when what waits moves by itself; the values of the calls of a turn
and of the branches of a launch are joined where they join (the earliest time wins), and the
pass rests its tree on the flow's (`Pass`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Final

__all__ = ["WAITING", "Waiting", "earliest"]


def earliest(*times: datetime | None) -> datetime | None:
    """The earliest of the times given, if any."""
    given = [time for time in times if time is not None]
    return min(given) if given else None


@dataclass(frozen=True, slots=True)
class Waiting:
    """What cannot finish in this pass, and when it moves by itself.

    Attributes:
        wake_at: When the earliest of what waits moves by itself: a question's deadline or
            its ladder's next step, or a resting step's next attempt; ``None`` while only an
            answer moves it.
        resting_until: When the earliest resting step's next attempt is due (in ``wake_at``
            too): what a woken pass re-enters its branches for.
        resting_paths: The branch paths of the resting steps (the agent's visit that makes
            the step says where it is): the branches a pass woken by them enters.
    """

    wake_at: datetime | None = None
    resting_until: datetime | None = None
    resting_paths: frozenset[str] = frozenset()

    @classmethod
    def on_question(cls, *times: datetime | None) -> Waiting:
        """A question waits for its answer, moving by itself at the earliest of ``times``
        (its deadline, its ladder's next step)."""
        return cls(wake_at=earliest(*times))

    @classmethod
    def resting(cls, due: datetime) -> Waiting:
        """A step rests until its next attempt is due."""
        return cls(wake_at=due, resting_until=due)

    @classmethod
    def joined(cls, waits: Iterable[Waiting]) -> Waiting:
        """What waits where several wait (the calls of a turn, the branches of a launch):
        moving by itself at the earliest of their times."""
        wake_at: datetime | None = None
        resting_until: datetime | None = None
        resting_paths: set[str] = set()
        for wait in waits:
            wake_at = earliest(wake_at, wait.wake_at)
            resting_until = earliest(resting_until, wait.resting_until)
            resting_paths.update(wait.resting_paths)
        return cls(wake_at, resting_until, frozenset(resting_paths))

    def at(self, path: str) -> Waiting:
        """What waits, its resting steps said to be in the branch at ``path``."""
        if self.resting_until is None:
            return self
        return Waiting(self.wake_at, self.resting_until, frozenset({path}))


WAITING: Final = Waiting()
"""What waits and never moves by itself (only an answer moves it)."""
