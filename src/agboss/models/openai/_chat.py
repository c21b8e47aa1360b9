"""agboss's model calls in the Chat Completions API (``/chat/completions``): what OpenAI and
every OpenAI-compatible server speak."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from agboss.errors import ModelProviderError
from agboss.models._messages import ChatRequest, ChatResponse, Message, ToolCall, Usage

__all__ = ["chat_arguments", "chat_response", "p_yes", "streamed_chat_response", "usage_of"]


def _message(message: Message) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": message.role.value, "content": message.content}
    if message.tool_calls:
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in message.tool_calls
        ]
        if not message.content:
            wire["content"] = None
    if message.tool_call_id is not None:
        wire["tool_call_id"] = message.tool_call_id
    return wire


def chat_arguments(model: str, request: ChatRequest) -> dict[str, Any]:
    """The keyword arguments of ``chat.completions.create`` for one model call: the
    conversation, the tools (the answer tool among them), and the tenant as ``user``, by which
    a provider may rate-limit and watch for abuse."""
    arguments: dict[str, Any] = {
        "model": model,
        "messages": [_message(message) for message in request.messages],
        "user": request.caller.tenant_id,
    }
    if request.tools:
        arguments["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": schema.name,
                    "description": schema.description,
                    "parameters": dict(schema.parameters),
                },
            }
            for schema in request.tools
        ]
        arguments["tool_choice"] = "required" if request.require_tool else "auto"
    return arguments


def usage_of(completion: Any) -> Usage:
    """Tokens, and the cost where the server says it (OpenRouter's ``usage.cost``)."""
    usage = getattr(completion, "usage", None)
    if usage is None:
        return Usage(calls=1)
    extra = getattr(usage, "model_extra", None) or {}
    return Usage(
        input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        cost=float(extra.get("cost") or 0.0),
        calls=1,
    )


def _arguments_text(arguments: object) -> str:
    # Some servers send the arguments as an object rather than as JSON text.
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments if arguments is not None else {})


def _first_choice(completion: Any) -> Any:
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise ModelProviderError(
            "the provider answered without choices",
            hint="check that the base URL points at an OpenAI-compatible /chat/completions API",
        )
    return choices[0]


def chat_response(completion: Any) -> ChatResponse:
    """A completion as a model turn: its text, its tool calls, what it cost."""
    message = getattr(_first_choice(completion), "message", None)
    calls = tuple(
        ToolCall(
            id=str(call.id or f"call-{index}"),
            name=str(call.function.name),
            arguments=_arguments_text(call.function.arguments),
        )
        for index, call in enumerate(getattr(message, "tool_calls", None) or ())
    )
    return ChatResponse(
        content=getattr(message, "content", None),
        tool_calls=calls,
        usage=usage_of(completion),
        model=getattr(completion, "model", None),
    )


_YES = frozenset({"yes", "y"})
_NO = frozenset({"no", "n"})


def p_yes(completion: Any) -> float:
    """P(yes) of a one-token answer, from the first token's top log-probabilities (or, where
    the server gives none, from the word itself)."""
    choice = _first_choice(completion)
    logprobs = getattr(choice, "logprobs", None)
    content = getattr(logprobs, "content", None) or []
    yes = no = 0.0
    if content:
        for candidate in content[0].top_logprobs or [content[0]]:
            word = str(candidate.token).strip().lower()
            chance = math.exp(float(candidate.logprob))
            if word in _YES:
                yes += chance
            elif word in _NO:
                no += chance
    if yes + no > 0:
        return yes / (yes + no)
    text = str(getattr(choice.message, "content", None) or "").strip().lower().rstrip(".!")
    if text in _YES:
        return 1.0
    if text in _NO:
        return 0.0
    raise ModelProviderError(
        f"the decision model answered neither yes nor no ({text[:80]!r})",
        hint="serve a model that returns token log-probabilities (logprobs) as a decision model",
    )


async def streamed_chat_response(chunks: Any, on_text: Callable[[str], None]) -> ChatResponse:
    """A streamed completion's chunks as one model turn, each piece of text handed to
    ``on_text`` as it comes: the text joined, the tool calls assembled by their index, the
    usage from the last chunk (``stream_options.include_usage``)."""
    texts: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    usage: Usage | None = None
    model: str | None = None
    async for chunk in chunks:
        model = getattr(chunk, "model", None) or model
        if getattr(chunk, "usage", None) is not None:
            usage = usage_of(chunk)
        for choice in getattr(chunk, "choices", None) or ():
            delta = choice.delta
            if delta.content:
                texts.append(delta.content)
                on_text(delta.content)
            for part in delta.tool_calls or ():
                call = calls.setdefault(part.index, {"id": "", "name": "", "arguments": ""})
                call["id"] = part.id or call["id"]
                if part.function is not None:
                    call["name"] += part.function.name or ""
                    call["arguments"] += part.function.arguments or ""
    return ChatResponse(
        content="".join(texts) if texts else None,
        tool_calls=tuple(
            ToolCall(
                id=call["id"] or f"call-{index}", name=call["name"], arguments=call["arguments"]
            )
            for index, call in sorted(calls.items())
        ),
        usage=usage or Usage(calls=1),
        model=model,
    )
