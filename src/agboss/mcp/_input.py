"""A question an MCP tool asks mid-call (MCP elicitation), as agboss holds it across a pause.

On protocol 2026-07-28 a server that needs the person's input answers ``tools/call`` with an
``InputRequiredResult``: its questions, and an opaque ``request_state`` the client sends back
with the answers when it calls again. Nothing waits on either side, so the question can wait as
long as a pause does: the round (`McpRound`) is journaled, each question is a pause of the
tool's channel (its ask is an `McpInputRequest`), and the answers (`McpReply`) go back with the
next call.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from agboss.mcp._arguments import McpArguments, arguments_model

__all__ = [
    "McpAnswer",
    "McpInputRequest",
    "McpQuestion",
    "McpReply",
    "McpRound",
    "answer_model",
]


class McpInputRequest(McpArguments):
    """What a channel is asked when an MCP tool asks the person a question (its ``send``
    gets it as ``ask.value.arguments``; a call's own arguments are any other `McpArguments`).

    The answer is a decision: approved with ``override_arguments`` holding the answer (valid
    for ``requested_schema``), or rejected (the server reads "declined").

    Attributes:
        elicitation: The server's question, in its words.
        requested_schema: The JSON Schema of the answer it wants (a flat object).
    """

    elicitation: str
    requested_schema: dict[str, Any]

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The question's own shape (not a server's tool's)."""
        return BaseModel.model_json_schema.__func__(cls, *args, **kwargs)  # type: ignore[attr-defined,no-any-return]

    @classmethod
    def of(cls, ask_arguments: dict[str, Any]) -> McpInputRequest | None:
        """The question a pause's ask holds, if it holds one."""
        if set(ask_arguments) != {"elicitation", "requested_schema"}:
            return None
        return cls.model_validate(ask_arguments)


class McpAnswer(McpArguments):
    """The answer to one `McpInputRequest`: what its ``requested_schema`` accepts (a subclass
    per question sets it). An approval without ``override_arguments`` answers ``{}``."""

    answer_required: ClassVar[bool] = True


def answer_model(label: str, schema: dict[str, Any]) -> type[McpAnswer]:
    """The `McpAnswer` subclass that validates answers to a question of this schema."""
    made = arguments_model(label, schema, base=McpAnswer)
    assert issubclass(made, McpAnswer)
    return made


class McpQuestion(BaseModel):
    """One question of a round, as its server asked it.

    Attributes:
        key: The server's key for it (its answer goes back under it).
        message: The question.
        requested_schema: The answer's JSON Schema.
    """

    model_config = ConfigDict(frozen=True)

    key: str
    message: str
    requested_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})


class McpRound(BaseModel):
    """A call the server answered with questions instead of a result (journaled).

    Attributes:
        questions: What it asks, in order.
        request_state: What it wants back with the answers, as it sent it.
        unsupported: What else it asked that agboss does not provide (sampling, roots, a URL
            to open), when it did: the call ends with a tool error instead.
    """

    model_config = ConfigDict(frozen=True)

    questions: tuple[McpQuestion, ...] = ()
    request_state: str | None = None
    unsupported: str | None = None


class McpReply(BaseModel):
    """The answer to one question, as the server gets it.

    Attributes:
        action: ``accept`` (with ``content``) or ``decline``.
        content: The answer, valid for the question's schema.
    """

    model_config = ConfigDict(frozen=True)

    action: Literal["accept", "decline"]
    content: dict[str, Any] | None = None
