"""`OpenAIProvider`: models served through the official `openai` SDK — OpenAI itself, or any
OpenAI-compatible server by its base URL (OpenRouter, vLLM, Ollama, Moonshot)."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import timedelta
from enum import StrEnum
from fnmatch import fnmatchcase
from typing import Any, TypeVar

import openai

from agboss.models._decisions import DecisionModel, DecisionRequest, DecisionResponse
from agboss.models._messages import ChatRequest, ChatResponse, Usage
from agboss.models._provider import ChatModel
from agboss.models._sdk import provider_error, wire_name
from agboss.models.openai._chat import (
    chat_arguments,
    chat_response,
    p_yes,
    streamed_chat_response,
    usage_of,
)
from agboss.models.openai._responses import (
    responses_arguments,
    responses_response,
    streamed_responses_response,
)

__all__ = ["OpenAIApi", "OpenAICompatibleProvider", "OpenAIProvider"]

T = TypeVar("T")

_NO_KEY = "no-key"
"""Sent where no key is configured (a local server): the SDK always sends one."""


class OpenAIApi(StrEnum):
    """Which of OpenAI's APIs a provider's chat models call."""

    CHAT_COMPLETIONS = "chat-completions"
    """``/chat/completions``: OpenAI and every OpenAI-compatible server."""
    RESPONSES = "responses"
    """``/responses``: OpenAI's newer API (and servers that implement it)."""


class OpenAIProvider:
    """Serves models through the `openai` SDK (``pip install 'agboss[openai]'``).

    What fails is a `ModelProviderError` with its status, whether a later attempt may fix it
    (408, 409, 429, 5xx, a lost connection) and the ``Retry-After`` it asked for: the agent's
    `RetryPolicy` tries the call again (one policy, one loop: the SDK's own retries are off
    unless ``max_retries`` turns them on), and what still fails fails the agent's step.

    Args:
        base_url: The API's base: ``None`` for OpenAI's (or ``OPENAI_BASE_URL``), else e.g.
            ``https://openrouter.ai/api/v1`` or ``http://localhost:11434/v1``.
        api_key: The key; ``None`` reads ``OPENAI_API_KEY``, and sends a placeholder where
            that is not set either (a local server wants none).
        api: The API its chat models call.
        serves: Glob patterns of the model names it serves.
        decision_models: Glob patterns of the served names that are decision models: asked
            for one word, yes or no, read from its token log-probabilities (Chat Completions
            with ``logprobs``, whatever ``api`` is).
        model_names: The name to send for a model name the application uses, when the server
            knows it by another (``{"moonshotai/kimi-k2.6": "llama3.2"}``); a ``"*"`` key
            renames every other model.
        headers: Extra headers for every request.
        timeout: How long one HTTP request may take.
        max_retries: How many times the SDK itself tries a retryable failure again, inside one
            attempt of the agent's `RetryPolicy` (0 by default: the policy retries, durably).
        client: An `openai.AsyncOpenAI` of your own (Azure, a proxy, custom transport); the
            options above that configure a client are then ignored, and ``aclose`` leaves it
            open.
    """

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api: OpenAIApi = OpenAIApi.CHAT_COMPLETIONS,
        serves: Sequence[str] = ("*",),
        decision_models: Sequence[str] = (),
        model_names: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: timedelta = timedelta(seconds=120),
        max_retries: int = 0,
        client: openai.AsyncOpenAI | None = None,
    ) -> None:
        self.api = OpenAIApi(api)
        self._serves = tuple(serves)
        self._decision_models = tuple(decision_models)
        self._model_names = dict(model_names or {})
        self._owned = client is None
        if client is None:
            client = openai.AsyncOpenAI(
                api_key=api_key or os.environ.get("OPENAI_API_KEY") or _NO_KEY,
                base_url=base_url,
                timeout=timeout.total_seconds(),
                max_retries=max_retries,
                default_headers=dict(headers or {}),
            )
        self.client = client
        self._label = f"the model provider at {client.base_url}"

    @classmethod
    def from_env(
        cls, *, serves: Sequence[str] = ("*",), prefix: str = "AGBOSS_MODEL"
    ) -> OpenAIProvider | None:
        """A provider configured by environment variables, if they are set.

        ``{prefix}_BASE_URL`` (required), ``{prefix}_API_KEY``, ``{prefix}_NAME`` (the model
        name every served model is sent as, e.g. a local server's ``llama3.2``) and
        ``{prefix}_API`` (``chat-completions``, the default, or ``responses``).

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
            api=OpenAIApi(os.environ.get(f"{prefix}_API") or OpenAIApi.CHAT_COMPLETIONS),
            serves=serves,
            model_names={"*": name} if name else None,
        )

    @property
    def serves(self) -> Sequence[str]:
        return self._serves

    def chat_model(self, model: str) -> ChatModel:
        return _ChatModel(self, self.wire_model_name(model))

    def decision_model(self, model: str) -> DecisionModel | None:
        if any(fnmatchcase(model, pattern) for pattern in self._decision_models):
            return _DecisionModel(self, self.wire_model_name(model))
        return None

    def wire_model_name(self, model: str) -> str:
        """The model name as the server knows it."""
        return wire_name(self._model_names, model)

    async def aclose(self) -> None:
        if self._owned:
            await self.client.close()

    async def call(self, make: Callable[[], Awaitable[T]]) -> T:
        """One SDK call, its errors as `ModelProviderError`."""
        try:
            return await make()
        # ValueError: a body that is not JSON (or not the API's shape), which the SDK decodes.
        except (openai.OpenAIError, ValueError) as error:
            raise provider_error(
                error,
                self._label,
                status_error=openai.APIStatusError,
                connection_error=openai.APIConnectionError,
            ) from error


class OpenAICompatibleProvider(OpenAIProvider):
    """An `OpenAIProvider` for an OpenAI-compatible server's Chat Completions: the base URL is
    required, the rest as `OpenAIProvider` takes it."""

    def __init__(self, *, base_url: str, **options: Any) -> None:
        super().__init__(base_url=base_url, **options)


class _ChatModel:
    def __init__(self, provider: OpenAIProvider, model: str) -> None:
        self._provider = provider
        self._model = model

    async def complete(self, request: ChatRequest) -> ChatResponse:
        provider, client = self._provider, self._provider.client
        on_text = request.on_text
        if provider.api is OpenAIApi.RESPONSES:
            arguments = responses_arguments(self._model, request)
            if on_text is None:
                answer = await provider.call(lambda: client.responses.create(**arguments))
                return responses_response(answer)

            async def streamed_response() -> ChatResponse:
                events = await client.responses.create(**arguments, stream=True)
                return await streamed_responses_response(events, on_text)

            return await provider.call(streamed_response)
        arguments = chat_arguments(self._model, request)
        if on_text is None:
            completion = await provider.call(lambda: client.chat.completions.create(**arguments))
            return chat_response(completion)

        async def streamed() -> ChatResponse:
            chunks = await client.chat.completions.create(
                **arguments, stream=True, stream_options={"include_usage": True}
            )
            return await streamed_chat_response(chunks, on_text)

        return await provider.call(streamed)


class _DecisionModel:
    """A chat model asked for one word, yes or no, read from its token log-probabilities."""

    def __init__(self, provider: OpenAIProvider, model: str) -> None:
        self._provider = provider
        self._model = model

    async def decide(self, request: DecisionRequest) -> DecisionResponse:
        client = self._provider.client
        probabilities: dict[str, float] = {}
        usage = Usage()
        for decision in request.decisions:
            question = f"{decision.question}\n\n{request.instructions}".strip()
            arguments: dict[str, Any] = {
                "model": self._model,
                "messages": [
                    {"role": "system", "content": question},
                    {"role": "user", "content": request.state},
                ],
                "max_tokens": 1,
                "temperature": 0,
                "logprobs": True,
                "top_logprobs": 20,
            }

            async def ask(arguments: dict[str, Any] = arguments) -> Any:
                return await client.chat.completions.create(**arguments)

            completion = await self._provider.call(ask)
            probabilities[decision.name] = p_yes(completion)
            usage = usage + usage_of(completion)
        return DecisionResponse(probabilities=probabilities, usage=usage)
