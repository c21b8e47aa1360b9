"""A tool's call as a journaled step: what it runs (`ToolStep`), and what it journals — the
text the model reads, and whether it is a tool error (`ToolResult`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from agboss.components._specs import ToolSpec
from agboss.context import StepContext
from agboss.records._model import StepRecord
from agboss.store.writes import TakePause

__all__ = ["ToolRaised", "ToolResult", "ToolStep", "tool_raised"]


@dataclass(frozen=True, slots=True)
class ToolStep:
    """One call of a tool, as the step that runs it.

    Attributes:
        key: The step's key in its execution (its idempotency key's last part).
        record: Its step record (the arguments as approved).
        tool_cls: The tool's class.
        spec: Its spec.
        args: The arguments it runs with.
        step: Its `StepContext`.
        taken: The resolved pauses its journal row takes (its approval), if any.
    """

    key: str
    record: StepRecord
    tool_cls: type[Any]
    spec: ToolSpec
    args: BaseModel
    step: StepContext
    taken: tuple[TakePause, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool call's outcome as the model reads it.

    Attributes:
        content: The tool's output DTO as JSON, or ``Tool error: …``.
        error: Whether it is a tool error.
    """

    content: str
    error: bool

    def encode(self) -> str:
        """As journal text."""
        return json.dumps({"content": self.content, "error": self.error})

    @staticmethod
    def decode(text: str) -> ToolResult:
        """From journal text."""
        data = json.loads(text)
        return ToolResult(str(data["content"]), bool(data["error"]))


class ToolRaised(Exception):
    """What a tool's run raised (not a refusal the model reads), on its way to the step's
    attempts: tried again if the tool's `RetryPolicy` names it, else the step's failure. It
    never leaves the step."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def tool_raised(error: Exception) -> BaseException | None:
    """A tool's attempt failed with what its run raised (``None``: not a failure of the run,
    such as an MCP tool's questions, which go on as they are)."""
    return error.error if isinstance(error, ToolRaised) else None
