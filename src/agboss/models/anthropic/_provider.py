"""`AnthropicProvider`: models served through the official `anthropic` SDK (Messages API)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import timedelta

import anthropic

from agboss.models._decisions import DecisionModel
from agboss.models._messages import ChatRequest, ChatResponse
from agboss.models._provider import ChatModel
from agboss.models._sdk import provider_error, wire_name
from agboss.models.anthropic._messages import messages_arguments, messages_response

__all__ = ["AnthropicProvider"]


class AnthropicProvider:
    """Serves Claude models through the `anthropic` SDK (``pip install 'agboss[anthropic]'``).

    Retries are the agent's `RetryPolicy`'s, as for `agboss.models.openai.OpenAIProvider`; what
    fails is a `ModelProviderError` with its status, ``retry_after`` and a hint. It serves no
    decision models: the Messages API gives no token log-probabilities to read a yes / no from
    (a reply interpreter on a Claude model is a chat one).

    Args:
        base_url: The API's base; ``None`` for Anthropic's (or ``ANTHROPIC_BASE_URL``).
        api_key: The key; ``None`` reads ``ANTHROPIC_API_KEY``.
        serves: Glob patterns of the model names it serves (``("claude-*",)`` by default).
        model_names: The name to send for a model name the application uses (a ``"*"`` key
            renames every other model), e.g. ``{"anthropic/claude-sonnet": "claude-sonnet-4-5"}``.
        max_tokens: The longest answer a call may write (the API requires one).
        headers: Extra headers for every request.
        timeout: How long one HTTP request may take.
        max_retries: How many times the SDK itself tries a retryable failure again, inside one
            attempt of the agent's `RetryPolicy` (0 by default: the policy retries, durably).
        client: An `anthropic.AsyncAnthropic` of your own (Bedrock, Vertex, a proxy); the
            options above that configure a client are then ignored, and ``aclose`` leaves it
            open.
    """

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        serves: Sequence[str] = ("claude-*",),
        model_names: Mapping[str, str] | None = None,
        max_tokens: int = 4096,
        headers: Mapping[str, str] | None = None,
        timeout: timedelta = timedelta(seconds=120),
        max_retries: int = 0,
        client: anthropic.AsyncAnthropic | None = None,
    ) -> None:
        self._serves = tuple(serves)
        self._model_names = dict(model_names or {})
        self.max_tokens = max_tokens
        self._owned = client is None
        if client is None:
            client = anthropic.AsyncAnthropic(
                api_key=api_key or os.environ.get("ANTHROPIC_API_KEY"),
                base_url=base_url,
                timeout=timeout.total_seconds(),
                max_retries=max_retries,
                default_headers=dict(headers or {}),
            )
        self.client = client
        self._label = f"the model provider at {client.base_url}"

    @property
    def serves(self) -> Sequence[str]:
        return self._serves

    def chat_model(self, model: str) -> ChatModel:
        return _ChatModel(self, wire_name(self._model_names, model))

    def decision_model(self, model: str) -> DecisionModel | None:
        return None

    async def aclose(self) -> None:
        if self._owned:
            await self.client.close()

    async def complete(self, model: str, request: ChatRequest) -> ChatResponse:
        """One Messages API call, its errors as `ModelProviderError`."""
        arguments = messages_arguments(model, request, self.max_tokens)
        on_text = request.on_text
        try:
            if on_text is None:
                message = await self.client.messages.create(**arguments)
            else:
                async with self.client.messages.stream(**arguments) as stream:
                    async for piece in stream.text_stream:
                        on_text(piece)
                    message = await stream.get_final_message()
        # ValueError: a body that is not JSON (or not the API's shape), which the SDK decodes.
        except (anthropic.AnthropicError, ValueError) as error:
            raise provider_error(
                error,
                self._label,
                status_error=anthropic.APIStatusError,
                connection_error=anthropic.APIConnectionError,
            ) from error
        return messages_response(message)


class _ChatModel:
    def __init__(self, provider: AnthropicProvider, model: str) -> None:
        self._provider = provider
        self._model = model

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return await self._provider.complete(self._model, request)
