"""Model providers: what serves a model name, and the chat-model protocol they hand out.

A provider declares the model names it serves with glob patterns (``serves=["moonshotai/*"]``);
a model name resolves to the first provider of the application that serves it.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from fnmatch import fnmatchcase
from typing import Protocol, runtime_checkable

from agboss.errors import ModelProviderError
from agboss.models._decisions import DecisionModel, DecisionRequest, DecisionResponse
from agboss.models._messages import ChatRequest, ChatResponse

__all__ = [
    "MODEL_PROVIDER_MEMBERS",
    "ChatModel",
    "FunctionProvider",
    "ModelProvider",
    "ModelResolver",
    "RefusingProvider",
]


@runtime_checkable
class ChatModel(Protocol):
    """A model that answers a conversation with a text or tool calls."""

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Makes one model call."""
        ...


@runtime_checkable
class ModelProvider(Protocol):
    """Serves the models whose names match its ``serves`` patterns."""

    @property
    def serves(self) -> Sequence[str]:
        """Glob patterns of the model names it serves (``"openai/*"``, ``"*"``)."""
        ...

    def chat_model(self, model: str) -> ChatModel:
        """The chat model for a name this provider serves."""
        ...

    def decision_model(self, model: str) -> DecisionModel | None:
        """The decision model for a name this provider serves as one, else ``None``."""
        ...

    async def aclose(self) -> None:
        """Releases the provider's connections."""
        ...


MODEL_PROVIDER_MEMBERS = ("serves", "chat_model", "decision_model", "aclose")
"""Every member of `ModelProvider`, as `App.create` names one a provider lacks."""


class ModelResolver:
    """Resolves a model name to the first provider whose ``serves`` matches it."""

    def __init__(self, providers: Sequence[ModelProvider]) -> None:
        self._providers = tuple(providers)
        self._cache: dict[str, ChatModel] = {}

    @property
    def providers(self) -> tuple[ModelProvider, ...]:
        """The providers, in the order they are tried."""
        return self._providers

    def provider_for(self, model: str) -> ModelProvider | None:
        """The first provider that serves ``model``, or ``None``."""
        for provider in self._providers:
            if any(fnmatchcase(model, pattern) for pattern in provider.serves):
                return provider
        return None

    def decision_model(self, model: str) -> DecisionModel | None:
        """The decision model ``model`` is, if its provider serves it as one."""
        provider = self.provider_for(model)
        return None if provider is None else provider.decision_model(model)

    def chat_model(self, model: str) -> ChatModel:
        """The chat model for ``model``; assembly has checked that one serves it."""
        cached = self._cache.get(model)
        if cached is None:
            provider = self.provider_for(model)
            if provider is None:
                from agboss.errors import ModelUnservedError

                raise ModelUnservedError(f"no provider serves the model {model!r}")
            cached = self._cache[model] = provider.chat_model(model)
        return cached


ModelFunction = Callable[[ChatRequest], "ChatResponse | Awaitable[ChatResponse]"]
DecisionFunction = Callable[[DecisionRequest], "DecisionResponse | Awaitable[DecisionResponse]"]


class _FunctionModel:
    def __init__(self, function: ModelFunction) -> None:
        self._function = function

    async def complete(self, request: ChatRequest) -> ChatResponse:
        response = self._function(request)
        if inspect.isawaitable(response):
            response = await response
        return response


class _FunctionDecisionModel:
    def __init__(self, function: DecisionFunction) -> None:
        self._function = function

    async def decide(self, request: DecisionRequest) -> DecisionResponse:
        response = self._function(request)
        if inspect.isawaitable(response):
            response = await response
        return response


class RefusingProvider:
    """Serves every model name and refuses every call: for a process that assembles an
    application but runs none of its models (the command line, a deploy check).

    Args:
        message: What a call is refused with (`ModelProviderError`).
        hint: What to do instead.
    """

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self._message = message
        self._hint = hint

    @property
    def serves(self) -> Sequence[str]:
        return ("*",)

    def chat_model(self, model: str) -> ChatModel:
        return self

    def decision_model(self, model: str) -> None:
        return None

    async def complete(self, request: ChatRequest) -> ChatResponse:
        raise ModelProviderError(self._message, hint=self._hint)

    async def aclose(self) -> None:
        return None


class FunctionProvider:
    """A provider whose model is a Python function: for demos, tests and offline runs.

    The function reads the request (its messages, tools and caller) and returns the model's
    turn; a scripted model that needs no network and no key.

    Args:
        function: Called once per model call, plain or ``async``.
        serves: The model names it serves; every name by default.
        decide: Called once per decision-model call, for the names ``decision_models`` matches.
        decision_models: Glob patterns of the names it serves as decision models.
    """

    def __init__(
        self,
        function: ModelFunction,
        *,
        serves: Sequence[str] = ("*",),
        decide: DecisionFunction | None = None,
        decision_models: Sequence[str] = (),
    ) -> None:
        self._model = _FunctionModel(function)
        self._serves = tuple(serves)
        self._decider = None if decide is None else _FunctionDecisionModel(decide)
        self.decision_models = list(decision_models)

    @property
    def serves(self) -> Sequence[str]:
        return self._serves

    def chat_model(self, model: str) -> ChatModel:
        return self._model

    def decision_model(self, model: str) -> DecisionModel | None:
        if self._decider is None:
            return None
        if any(fnmatchcase(model, pattern) for pattern in self.decision_models):
            return self._decider
        return None

    async def aclose(self) -> None:
        return None
