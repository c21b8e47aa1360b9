"""How much of its thread's earlier conversation an agent is sent (``@agent(history=...)``).

A thread is a conversation: an execution on a thread that earlier executions completed on
sends the agents of its workflow the thread's earlier exchanges — each earlier request (the
workflow's start input) as the user's message and its answer (the finish output) as the
agent's — before the new request. This module is the value the decorator takes; the engine
reads the exchanges from the store (`agboss.engine.runs`).
"""

from __future__ import annotations

from dataclasses import dataclass

from agboss.errors import ConfigurationError

__all__ = ["DEFAULT_HISTORY", "History"]


@dataclass(frozen=True, slots=True)
class History:
    """How many of the thread's earlier exchanges an agent is sent.

    Made by `History.all`, `History.last` and `History.none`.

    Attributes:
        turns: The most recent exchanges sent (a request and its answer each); ``None`` for
            every one, ``0`` for none.
    """

    turns: int | None = None

    def __post_init__(self) -> None:
        turns = self.turns
        if turns is not None and (
            not isinstance(turns, int) or isinstance(turns, bool) or turns < 0
        ):
            raise ConfigurationError(
                f"History(turns={turns!r}) must be a whole number of 0 or more, or None",
                hint="use History.all(), History.last(n) or History.none()",
            )

    @classmethod
    def all(cls) -> History:
        """Every earlier exchange of the thread (the default)."""
        return cls(None)

    @classmethod
    def last(cls, turns: int) -> History:
        """The ``turns`` most recent exchanges: a bound on what a long thread costs."""
        if not isinstance(turns, int) or isinstance(turns, bool) or turns < 1:
            raise ConfigurationError(
                f"History.last({turns!r}) needs a whole number of 1 or more",
                hint="History.none() sends no earlier exchange",
            )
        return cls(turns)

    @classmethod
    def none(cls) -> History:
        """No earlier exchange: each execution on the thread starts afresh."""
        return cls(0)


DEFAULT_HISTORY = History.all()
"""An agent's history unless it declares one: every earlier exchange of its thread."""
