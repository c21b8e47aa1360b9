"""agboss's model calls in Anthropic's Messages API, with tool use."""

from __future__ import annotations

import json
from typing import Any

from agboss.errors import ModelProviderError
from agboss.models._messages import ChatRequest, ChatResponse, Message, MessageRole, ToolCall, Usage

__all__ = ["messages_arguments", "messages_response"]


def _input_of(call: ToolCall) -> Any:
    """A tool call's arguments as the object Anthropic sends and takes back."""
    try:
        value = json.loads(call.arguments)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message.role is MessageRole.TOOL:
        return [
            {"type": "tool_result", "tool_use_id": message.tool_call_id, "content": message.content}
        ]
    blocks: list[dict[str, Any]] = []
    if message.content:  # Anthropic refuses an empty text block
        blocks.append({"type": "text", "text": message.content})
    blocks.extend(
        {"type": "tool_use", "id": call.id, "name": call.name, "input": _input_of(call)}
        for call in message.tool_calls
    )
    return blocks


def _turns(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """The conversation as alternating user / assistant turns: a tool's result is a block of
    the user's next turn, and the results of one model turn's calls share it."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role is MessageRole.SYSTEM:
            continue
        role = "assistant" if message.role is MessageRole.ASSISTANT else "user"
        blocks = _blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return turns


def messages_arguments(model: str, request: ChatRequest, max_tokens: int) -> dict[str, Any]:
    """The keyword arguments of ``messages.create`` for one model call; the tenant goes as
    ``metadata.user_id``, by which Anthropic may watch for abuse."""
    arguments: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "messages": _turns(request.messages),
        "metadata": {"user_id": request.caller.tenant_id},
    }
    system = "\n\n".join(m.content for m in request.messages if m.role is MessageRole.SYSTEM)
    if system:
        arguments["system"] = system
    if request.tools:
        arguments["tools"] = [
            {
                "name": schema.name,
                "description": schema.description,
                "input_schema": dict(schema.parameters),
            }
            for schema in request.tools
        ]
        arguments["tool_choice"] = {"type": "any" if request.require_tool else "auto"}
    return arguments


def messages_response(message: Any) -> ChatResponse:
    """A message's content blocks as a model turn."""
    content = getattr(message, "content", None)
    if not isinstance(content, list):
        raise ModelProviderError(
            "the provider answered without content blocks",
            hint="check that the base URL points at Anthropic's Messages API",
        )
    texts = [str(block.text) for block in content if getattr(block, "type", None) == "text"]
    calls = tuple(
        ToolCall(id=str(block.id), name=str(block.name), arguments=json.dumps(block.input))
        for block in content
        if getattr(block, "type", None) == "tool_use"
    )
    usage = getattr(message, "usage", None)
    return ChatResponse(
        content="".join(texts) if texts else None,
        tool_calls=calls,
        usage=Usage(
            input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
            calls=1,
        ),
        model=getattr(message, "model", None),
    )
