"""What `App.create` learnt of each declared MCP server: its tools, or why it could not list
them. Plain values, so assembly checks them without the SDK."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from agboss.mcp._arguments import McpToolOutput
from agboss.mcp._input import McpReply, McpRound

__all__ = ["ListedTool", "McpCalls", "McpListing"]


@dataclass(frozen=True, slots=True)
class ListedTool:
    """One tool as its server lists it.

    Attributes:
        name: Its name on the server.
        description: What it does, as the server says.
        input_schema: The JSON Schema of its arguments.
    """

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True, slots=True)
class McpListing:
    """A server's tools, or the reason it could not be listed.

    Attributes:
        tools: Its tools, in the server's order.
        failure: Why it could not be reached or listed (then ``tools`` is empty).
    """

    tools: tuple[ListedTool, ...] = ()
    failure: str | None = None


class McpCalls(Protocol):
    """What calls a server's tools: its open connection."""

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        answers: Mapping[str, McpReply] | None = None,
        request_state: str | None = None,
    ) -> McpToolOutput | McpRound:
        """Calls one of the server's tools by its name there (with the answers to what it
        asked, if it asked)."""
        ...
