"""What a chat model is sent and what it answers: messages, tool schemas, tool calls, usage.

These are provider-neutral; a provider translates them to its wire format. Responses are
Pydantic models because the engine journals them: a re-entered step reads the same answer back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = [
    "ChatRequest",
    "ChatResponse",
    "Message",
    "MessageRole",
    "ModelCaller",
    "ToolCall",
    "ToolSchema",
    "Usage",
]


class MessageRole(StrEnum):
    """Who speaks in a message."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class ToolCall(BaseModel):
    """One tool call of a model turn.

    Attributes:
        id: The model's id of the call; a tool message answers it by this id.
        name: The tool's name.
        arguments: The arguments as the model wrote them: JSON text, not yet validated.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str


class Usage(BaseModel):
    """Tokens and cost of one or more model calls.

    Attributes:
        input_tokens: Prompt tokens.
        output_tokens: Completion tokens.
        cost: What the calls cost, in the provider's currency (USD for most); 0 when unknown.
        calls: How many model calls this counts.
    """

    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    calls: int = 0

    @property
    def total_tokens(self) -> int:
        """Input and output tokens together."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage.model_construct(  # sums of valid counters: valid
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cost=self.cost + other.cost,
            calls=self.calls + other.calls,
        )


class ChatResponse(BaseModel):
    """A model's turn: a text, tool calls, or both.

    Attributes:
        content: The text the model wrote, if any.
        tool_calls: The tools it called, all at once.
        usage: What the call cost.
        model: The model that answered, as the provider names it.
    """

    model_config = ConfigDict(frozen=True)

    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage(calls=1)
    model: str | None = None


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a conversation with a model."""

    role: MessageRole
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None

    @property
    def text(self) -> str:
        """The message's text (its ``content``)."""
        return self.content


@dataclass(frozen=True, slots=True)
class ToolSchema:
    """A tool as a model sees it: its name, what it does, and its arguments' JSON schema."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ModelCaller:
    """Who makes a model call: traced with it, and how the test kit routes scripted answers.

    Attributes:
        kind: ``agent`` or ``reply-interpreter``.
        name: The component's name.
        tenant_id: The tenant the call is made for (providers may rate-limit by it).
        execution_id: The execution the call is made in.
    """

    kind: str
    name: str
    tenant_id: str
    execution_id: str

    @property
    def label(self) -> str:
        """``kind:name``, the cost caller of traces and budgets."""
        return f"{self.kind}:{self.name}"


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One model call.

    Attributes:
        model: The model's name as the component names it.
        messages: The conversation so far.
        tools: The tools the model may call.
        caller: The component that calls.
        subject: What the caller reads, by name (an agent's ``input``); the test kit matches
            ``mock_llm(...).when(...)`` scripts against it.
        require_tool: The model must call a tool (it may not answer in plain text).
        on_text: Called with each piece of the model's text as it streams in, where someone
            listens (`App.stream`) and the provider streams; ``None``: the answer is read whole.
    """

    model: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSchema, ...]
    caller: ModelCaller
    subject: Mapping[str, Any] = field(default_factory=dict)
    require_tool: bool = False
    on_text: Callable[[str], None] | None = field(default=None, compare=False)
