"""agboss's model calls in OpenAI's Responses API (``/responses``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agboss.errors import ModelProviderError
from agboss.models._messages import ChatRequest, ChatResponse, Message, MessageRole, ToolCall, Usage

__all__ = ["responses_arguments", "responses_response", "streamed_responses_response"]


def _items(message: Message) -> list[dict[str, Any]]:
    """A message as the Responses API's input items: a tool's result, the calls a model made
    (each an item of its own), or a message."""
    if message.role is MessageRole.TOOL:
        return [
            {
                "type": "function_call_output",
                "call_id": message.tool_call_id,
                "output": message.content,
            }
        ]
    items: list[dict[str, Any]] = []
    if message.content or not message.tool_calls:
        items.append({"role": message.role.value, "content": message.content})
    items.extend(
        {
            "type": "function_call",
            "call_id": call.id,
            "name": call.name,
            "arguments": call.arguments,
        }
        for call in message.tool_calls
    )
    return items


def responses_arguments(model: str, request: ChatRequest) -> dict[str, Any]:
    """The keyword arguments of ``responses.create`` for one model call; nothing is stored on
    OpenAI's side (``store=False``): the conversation is agboss's, sent whole each time."""
    system = [m.content for m in request.messages if m.role is MessageRole.SYSTEM]
    arguments: dict[str, Any] = {
        "model": model,
        "input": [
            item
            for message in request.messages
            if message.role is not MessageRole.SYSTEM
            for item in _items(message)
        ],
        "store": False,
        "user": request.caller.tenant_id,
    }
    if system:
        arguments["instructions"] = "\n\n".join(system)
    if request.tools:
        arguments["tools"] = [
            {
                "type": "function",
                "name": schema.name,
                "description": schema.description,
                "parameters": dict(schema.parameters),
                "strict": False,
            }
            for schema in request.tools
        ]
        arguments["tool_choice"] = "required" if request.require_tool else "auto"
    return arguments


def responses_response(response: Any) -> ChatResponse:
    """A response's output items as a model turn."""
    output = getattr(response, "output", None)
    if not isinstance(output, list):
        raise ModelProviderError(
            "the provider answered without output items",
            hint="check that the base URL points at an API that serves /responses",
        )
    texts: list[str] = []
    calls: list[ToolCall] = []
    for item in output:
        kind = getattr(item, "type", None)
        if kind == "function_call":
            calls.append(
                ToolCall(id=str(item.call_id), name=str(item.name), arguments=str(item.arguments))
            )
        elif kind == "message":
            texts.extend(
                str(part.text)
                for part in item.content or ()
                if getattr(part, "type", None) == "output_text"
            )
    usage = getattr(response, "usage", None)
    return ChatResponse(
        content="".join(texts) if texts else None,
        tool_calls=tuple(calls),
        usage=Usage(
            input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
            calls=1,
        ),
        model=getattr(response, "model", None),
    )


async def streamed_responses_response(events: Any, on_text: Callable[[str], None]) -> ChatResponse:
    """A streamed response's events as one model turn: each text delta handed to ``on_text``,
    the turn read from the completed response."""
    async for event in events:
        kind = getattr(event, "type", None)
        if kind == "response.output_text.delta":
            on_text(str(event.delta))
        elif kind == "response.completed":
            return responses_response(event.response)
    raise ModelProviderError(
        "the provider's stream ended before the response completed",
        hint="check that the server streams the Responses API (response.completed)",
    )
