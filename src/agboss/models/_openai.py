"""A provider for any OpenAI-compatible Chat Completions API: OpenRouter, vLLM, Ollama, Moonshot.

It speaks the wire format with httpx directly (no SDK): one POST per model call. Network
failures and the answers a retry can fix (408, 409, 429, 5xx) are retried with exponential
backoff, honouring ``Retry-After``; any other error fails the step with `ModelProviderError`.
Backoff waits are wall-clock time: they wait for a remote service, not for the application.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import random
from collections.abc import Mapping, Sequence
from datetime import timedelta
from fnmatch import fnmatchcase
from typing import Any

import httpx

from agboss.errors import ModelProviderError
from agboss.models._decisions import DecisionModel, DecisionRequest, DecisionResponse
from agboss.models._messages import ChatRequest, ChatResponse, Message, ToolCall, Usage
from agboss.models._provider import ChatModel

__all__ = ["OpenAICompatibleProvider"]

_RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


def _wire_message(message: Message) -> dict[str, Any]:
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


def _wire_request(model: str, request: ChatRequest) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model,
        "messages": [_wire_message(message) for message in request.messages],
    }
    if request.tools:
        body["tools"] = [
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
        body["tool_choice"] = "required" if request.require_tool else "auto"
    return body


def _parse_response(payload: Mapping[str, Any]) -> ChatResponse:
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ModelProviderError(
            "the provider answered without choices",
            hint="check that the base URL points at an OpenAI-compatible /chat/completions API",
        )
    message = choices[0].get("message") or {}
    calls = tuple(
        ToolCall(
            id=str(call.get("id") or f"call-{index}"),
            name=str(call["function"]["name"]),
            arguments=_arguments_text(call["function"].get("arguments")),
        )
        for index, call in enumerate(message.get("tool_calls") or ())
    )
    return ChatResponse(
        content=message.get("content"),
        tool_calls=calls,
        usage=_parse_usage(payload),
        model=payload.get("model"),
    )


def _parse_usage(payload: Mapping[str, Any]) -> Usage:
    usage = payload.get("usage") or {}
    return Usage(
        input_tokens=int(usage.get("prompt_tokens") or 0),
        output_tokens=int(usage.get("completion_tokens") or 0),
        cost=float(usage.get("cost") or 0.0),
        calls=1,
    )


def _arguments_text(arguments: object) -> str:
    # Some servers send the arguments as an object rather than as JSON text.
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments if arguments is not None else {})


_YES = frozenset({"yes", "y"})
_NO = frozenset({"no", "n"})


def _p_yes(payload: Mapping[str, Any]) -> float:
    """P(yes) of a one-token answer, from the first token's top log-probabilities."""
    choice = (payload.get("choices") or [{}])[0]
    content = ((choice.get("logprobs") or {}).get("content")) or []
    yes = no = 0.0
    if content:
        for candidate in content[0].get("top_logprobs") or [content[0]]:
            word = str(candidate.get("token", "")).strip().lower()
            chance = math.exp(float(candidate.get("logprob", -math.inf)))
            if word in _YES:
                yes += chance
            elif word in _NO:
                no += chance
    if yes + no > 0:
        return yes / (yes + no)
    text = str((choice.get("message") or {}).get("content") or "").strip().lower().rstrip(".!")
    if text in _YES:
        return 1.0
    if text in _NO:
        return 0.0
    raise ModelProviderError(
        f"the decision model answered neither yes nor no ({text[:80]!r})",
        hint="serve a model that returns token log-probabilities (logprobs) as a decision model",
    )


class _OpenAIDecisionModel:
    """A chat model asked for one word, yes or no, read from its token log-probabilities."""

    def __init__(self, provider: OpenAICompatibleProvider, model: str) -> None:
        self._provider = provider
        self._model = provider.wire_model_name(model)

    async def decide(self, request: DecisionRequest) -> DecisionResponse:
        probabilities: dict[str, float] = {}
        usage = Usage()
        for decision in request.decisions:
            body = {
                "model": self._model,
                "messages": [
                    {
                        "role": "system",
                        "content": f"{decision.question}\n\n{request.instructions}".strip(),
                    },
                    {"role": "user", "content": request.state},
                ],
                "max_tokens": 1,
                "temperature": 0,
                "logprobs": True,
                "top_logprobs": 20,
            }
            payload = await self._provider.post_json(body)
            probabilities[decision.name] = _p_yes(payload)
            usage = usage + _parse_usage(payload)
        return DecisionResponse(probabilities=probabilities, usage=usage)


class _OpenAIChatModel:
    def __init__(self, provider: OpenAICompatibleProvider, model: str) -> None:
        self._provider = provider
        self._model = provider.wire_model_name(model)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return await self._provider.post_chat(_wire_request(self._model, request))


class OpenAICompatibleProvider:
    """Serves models through an OpenAI-compatible ``/chat/completions`` endpoint.

    Args:
        base_url: The API's base, e.g. ``https://openrouter.ai/api/v1`` or
            ``http://localhost:11434/v1``.
        api_key: Sent as a bearer token; ``None`` sends none (a local server).
        serves: Glob patterns of the model names it serves.
        decision_models: Glob patterns of the served names that are decision models: asked
            for one word, yes or no, and read from its token log-probabilities (the server
            must support ``logprobs`` / ``top_logprobs``).
        model_names: The name to send for a model name the application uses, when the server
            knows it by another (``{"moonshotai/kimi-k2.6": "llama3.2"}``); a ``"*"`` key
            renames every other model.
        headers: Extra headers for every request.
        timeout: How long one HTTP request may take.
        max_retries: How many times a retryable failure is tried again.
        backoff: The first retry's wait; each retry doubles it (with jitter).
        max_backoff: The longest single wait, ``Retry-After`` included.
    """

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None = None,
        serves: Sequence[str] = ("*",),
        decision_models: Sequence[str] = (),
        model_names: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: timedelta = timedelta(seconds=120),
        max_retries: int = 3,
        backoff: timedelta = timedelta(milliseconds=500),
        max_backoff: timedelta = timedelta(seconds=30),
    ) -> None:
        self._serves = tuple(serves)
        self._decision_models = tuple(decision_models)
        self._model_names = dict(model_names or {})
        self._max_retries = max_retries
        self._backoff = backoff.total_seconds()
        self._max_backoff = max_backoff.total_seconds()
        all_headers = {"content-type": "application/json", **(headers or {})}
        if api_key:
            all_headers["authorization"] = f"Bearer {api_key}"
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers=all_headers,
            timeout=timeout.total_seconds(),
        )

    @classmethod
    def from_env(
        cls, *, serves: Sequence[str] = ("*",), prefix: str = "AGBOSS_MODEL"
    ) -> OpenAICompatibleProvider | None:
        """A provider configured by environment variables, if they are set.

        ``{prefix}_BASE_URL`` (required), ``{prefix}_API_KEY`` and ``{prefix}_NAME`` (the
        model name every served model is sent as, e.g. a local server's ``llama3.2``).

        Returns:
            The provider, or ``None`` when no base URL is set.
        """
        base_url = os.environ.get(f"{prefix}_BASE_URL")
        if not base_url:
            return None
        name = os.environ.get(f"{prefix}_NAME")
        return cls(
            base_url=base_url,
            api_key=os.environ.get(f"{prefix}_API_KEY"),
            serves=serves,
            model_names={"*": name} if name else None,
        )

    @property
    def serves(self) -> Sequence[str]:
        return self._serves

    def chat_model(self, model: str) -> ChatModel:
        return _OpenAIChatModel(self, model)

    def decision_model(self, model: str) -> DecisionModel | None:
        if any(fnmatchcase(model, pattern) for pattern in self._decision_models):
            return _OpenAIDecisionModel(self, model)
        return None

    def wire_model_name(self, model: str) -> str:
        """The model name as the server knows it."""
        return self._model_names.get(model, self._model_names.get("*", model))

    async def aclose(self) -> None:
        await self._client.aclose()

    async def post_chat(self, body: dict[str, Any]) -> ChatResponse:
        """POSTs one chat completion and reads it as a model turn."""
        return _parse_response(await self.post_json(body))

    async def post_json(self, body: dict[str, Any]) -> Mapping[str, Any]:
        """POSTs one chat completion, retrying what a retry can fix; the JSON answer."""
        attempt = 0
        while True:
            try:
                response = await self._client.post("/chat/completions", json=body)
            except httpx.TransportError as error:
                if attempt >= self._max_retries:
                    raise ModelProviderError(
                        f"the model provider could not be reached after {attempt + 1} "
                        f"attempts: {error!r}",
                        retryable=True,
                        hint="check the provider's base URL and that it is up",
                    ) from error
                await asyncio.sleep(self._delay(attempt, None))
                attempt += 1
                continue
            if response.status_code < 400:
                try:
                    payload: Mapping[str, Any] = response.json()
                except ValueError as error:
                    raise ModelProviderError(
                        "the model provider answered with something that is not JSON",
                        status=response.status_code,
                    ) from error
                return payload
            retryable = response.status_code in _RETRYABLE_STATUS
            if not retryable or attempt >= self._max_retries:
                raise ModelProviderError(
                    f"the model provider answered {response.status_code}: {response.text[:500]}",
                    status=response.status_code,
                    retryable=retryable,
                    hint=_hint_for(response.status_code),
                )
            await asyncio.sleep(self._delay(attempt, response.headers.get("retry-after")))
            attempt += 1

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after is not None:
            try:
                return min(float(retry_after), self._max_backoff)
            except ValueError:
                pass
        base = self._backoff * (2**attempt)
        return float(min(base * (0.5 + random.random()), self._max_backoff))


def _hint_for(status: int) -> str:
    if status in (401, 403):
        return "check the provider's API key"
    if status == 404:
        return "check the model name and the provider's base URL"
    if status in _RETRYABLE_STATUS:
        return "the provider kept failing; try again later or raise max_retries"
    return "the request was refused; the message above says why"
