"""What a tool's step journals: the text the model reads, and whether it is a tool error."""

from __future__ import annotations

import json
from dataclasses import dataclass

__all__ = ["ToolResult"]


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
