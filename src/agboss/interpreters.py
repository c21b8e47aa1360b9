"""Reply interpreters: code or a model that reads a free-text reply to a pause as an answer."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Generic, TypeVar

from pydantic import BaseModel

from agboss.components import ApprovalAsk
from agboss.dto import ToolCallApprovalDecisionDto

__all__ = ["InterpreterInput", "ReplyInterpretation", "ReplyInterpreterHandler"]

ArgsT = TypeVar("ArgsT", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class InterpreterInput(Generic[ArgsT]):
    """What an interpreter reads: the pause's question and the reply to it."""

    ask: ApprovalAsk[ArgsT]
    reply: str


class ReplyInterpretation:
    """What a code interpreter returns: an understood decision, or why it was not understood."""

    __slots__ = ("decision", "reason")

    def __init__(self, decision: ToolCallApprovalDecisionDto | None, reason: str | None) -> None:
        self.decision = decision
        self.reason = reason

    @classmethod
    def understood(cls, decision: ToolCallApprovalDecisionDto) -> ReplyInterpretation:
        """The reply reads as this decision (validated like any decision)."""
        return cls(decision, None)

    @classmethod
    def not_understood(cls, *, reason: str) -> ReplyInterpretation:
        """The reply cannot be read; the pause stays waiting."""
        return cls(None, reason)

    def __repr__(self) -> str:
        if self.decision is not None:
            return f"ReplyInterpretation.understood({self.decision!r})"
        return f"ReplyInterpretation.not_understood(reason={self.reason!r})"


class ReplyInterpreterHandler(ABC, Generic[ArgsT]):
    """What a ``DecidedBy.CODE`` interpreter implements; ``interpret`` may be sync or async."""

    @abstractmethod
    def interpret(
        self, input: InterpreterInput[ArgsT]
    ) -> ReplyInterpretation | Awaitable[ReplyInterpretation]:
        """Reads one reply."""
