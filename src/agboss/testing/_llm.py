"""Scripted models for tests: `mock_llm` scripts, and the turns they answer with."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from agboss.agents import ANSWER_TOOL
from agboss.components import ToolSpec, spec_of
from agboss.errors import TestSetupError
from agboss.models import (
    ChatRequest,
    ChatResponse,
    DecisionRequest,
    DecisionResponse,
    FunctionProvider,
    ToolCall,
    Usage,
)

__all__ = [
    "LlmScript",
    "ScriptedDecision",
    "ScriptedFailure",
    "ScriptedProvider",
    "ScriptedTurn",
    "ScriptedWhen",
    "call_tools",
    "decide_with",
    "fail_with",
    "reply_with",
    "tool_call",
]


@dataclass(frozen=True, slots=True)
class ScriptedToolCall:
    """A tool call a scripted turn makes: made by `tool_call`."""

    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ScriptedTurn:
    """A scripted model turn: made by `call_tools` or `reply_with`."""

    calls: tuple[ScriptedToolCall, ...] = ()
    content: str | None = None

    def response(self, request: ChatRequest) -> ChatResponse:
        """The turn as a model response to ``request``."""
        calls = tuple(
            ToolCall(id=f"call-{index}", name=call.name, arguments=json.dumps(call.arguments))
            for index, call in enumerate(self.calls)
        )
        sent = sum(len(message.content) for message in request.messages)
        produced = len(self.content or "") + sum(len(call.arguments) for call in calls)
        return ChatResponse(
            content=self.content,
            tool_calls=calls,
            usage=Usage(input_tokens=sent // 4 + 1, output_tokens=produced // 4 + 1, calls=1),
            model=request.model,
        )


@dataclass(frozen=True, slots=True)
class ScriptedDecision:
    """A decision model's scripted answer: made by `decide_with`."""

    probabilities: Mapping[str, float]

    def response(self, request: DecisionRequest) -> DecisionResponse:
        """The answer to ``request``."""
        missing = [d.name for d in request.decisions if d.name not in self.probabilities]
        if missing:
            raise TestSetupError(
                f"decide_with(...) has no probability for {', '.join(missing)}",
                hint=f"script decide_with({missing[0]}=0.9) for {request.caller.name}",
            )
        return DecisionResponse(
            probabilities={d.name: self.probabilities[d.name] for d in request.decisions},
            usage=Usage(input_tokens=len(request.state) // 4 + 1, output_tokens=1, calls=1),
        )


@dataclass(frozen=True, slots=True)
class ScriptedFailure:
    """A model call that fails, as a provider's outage does: made by `fail_with`."""

    error: Exception


def fail_with(error: Exception) -> ScriptedFailure:
    """A model call that raises ``error`` — an outage (``ConnectionError``), a provider's
    `ModelProviderError` — where a turn would have answered: what `App.retry` heals."""
    if not isinstance(error, Exception):
        raise TestSetupError(
            f"fail_with({error!r}) takes an exception instance",
            hint='pass one, as in fail_with(ConnectionError("the provider is down"))',
        )
    return ScriptedFailure(error)


def decide_with(**probabilities: float) -> ScriptedDecision:
    """A decision model's answer: ``decide_with(approved=0.9)`` is P(yes) of ``approved``.

    Raises:
        TestSetupError: A probability is outside 0 … 1.
    """
    for name, value in probabilities.items():
        if not 0.0 <= value <= 1.0:
            raise TestSetupError(f"decide_with({name}={value}): a probability is from 0 to 1")
    return ScriptedDecision(probabilities)


def tool_call(tool: type[Any] | str, /, **arguments: Any) -> ScriptedToolCall:
    """A call of a ``@tool`` class with these arguments (not validated: a test may send bad ones).

    A string names a tool as a model could, even one that does not exist.

    Raises:
        TestSetupError: ``tool`` is a class but not a ``@tool`` class.
    """
    if isinstance(tool, str):
        return ScriptedToolCall(tool, arguments)
    spec = spec_of(tool, ToolSpec)
    if spec is None:
        raise TestSetupError(
            f"tool_call({getattr(tool, '__qualname__', tool)!r}) names no @tool class",
            hint="pass the @tool class the agent lists",
        )
    return ScriptedToolCall(spec.name, arguments)


def call_tools(*calls: ScriptedToolCall) -> ScriptedTurn:
    """A model turn that calls these tools, all at once."""
    return ScriptedTurn(calls=calls)


def reply_with(dto: type[BaseModel], /, **fields: Any) -> ScriptedTurn:
    """A model turn that answers with this DTO (an agent's output, an interpreter's decision).

    Raises:
        TestSetupError: The fields are not a valid ``dto``.
    """
    try:
        value = dto.model_validate(fields)
    except ValidationError as error:
        raise TestSetupError(
            f"reply_with({dto.__name__}, ...) is not a valid {dto.__name__}: {error}",
            hint="script a valid answer; to test an invalid one, use call_tools with raw fields",
        ) from error
    return ScriptedTurn(calls=(ScriptedToolCall(ANSWER_TOOL, value.model_dump(mode="json")),))


def invalid_answer(**fields: Any) -> ScriptedTurn:
    """A model turn that answers through the answer tool with fields that need not validate."""
    return ScriptedTurn(calls=(ScriptedToolCall(ANSWER_TOOL, fields),))


Predicate = Callable[[Mapping[str, Any]], bool]


Scripted = ScriptedTurn | ScriptedDecision | ScriptedFailure


class _Rule:
    def __init__(self, predicate: Predicate | None) -> None:
        self.predicate = predicate
        self.queue: deque[Scripted] = deque()


class ScriptedWhen:
    """Turns scripted only for the calls whose subject matches; made by `LlmScript.when`."""

    def __init__(self, script: LlmScript, rule: _Rule) -> None:
        self._script = script
        self._rule = rule

    def then_return(self, *turns: Scripted) -> ScriptedWhen:
        """Queues turns for the matching calls, in order."""
        self._script.queued(turns)
        self._rule.queue.extend(turns)
        return self


class LlmScript:
    """The scripted model of one component: `env.mock_llm(component)`."""

    def __init__(self, component: str, on_decision: Callable[[], None] | None = None) -> None:
        self.component = component
        self._default = _Rule(None)
        self._rules: list[_Rule] = []
        self._on_decision = on_decision
        self.requests: list[ChatRequest | DecisionRequest] = []
        """What the model was sent, in order."""

    def queued(self, turns: Sequence[Scripted]) -> None:
        """Notes what was queued: a `decide_with` makes the component's model a decision
        model for the scripted provider."""
        if self._on_decision is not None and any(
            isinstance(turn, ScriptedDecision) for turn in turns
        ):
            self._on_decision()

    def then_return(self, *turns: Scripted) -> LlmScript:
        """Queues turns for the component's model calls, in order."""
        self.queued(turns)
        self._default.queue.extend(turns)
        return self

    def when(self, predicate: Predicate | None = None, /, **fields: Any) -> ScriptedWhen:
        """Scripts only the calls whose subject matches.

        An agent's subject is ``{"input": <its input DTO>}``; an interpreter's is
        ``{"ask": ..., "reply": ...}``. Fields match by equality; a predicate gets the subject.
        """
        if predicate is None:

            def predicate(subject: Mapping[str, Any]) -> bool:
                return all(subject.get(key) == value for key, value in fields.items())

        rule = _Rule(predicate)
        self._rules.append(rule)
        return ScriptedWhen(self, rule)

    def next_turn(self, request: ChatRequest | DecisionRequest) -> Scripted:
        """The turn for a call; raises `TestSetupError` when the script ran out."""
        self.requests.append(request)
        for rule in self._rules:
            if rule.queue and rule.predicate is not None and rule.predicate(request.subject):
                return rule.queue.popleft()
        if self._default.queue:
            return self._default.queue.popleft()
        raise TestSetupError(
            f"mock_llm({self.component}) has no scripted answer left for its model call "
            f"#{len(self.requests)}",
            hint=f"queue more with env.mock_llm(...).then_return(...) for {self.component}",
        )


class ScriptedProvider(FunctionProvider):
    """Serves every model name from the test's `mock_llm` scripts, by the calling component.

    Names matching ``decision_models`` are served as decision models (scripted with
    `decide_with`), and so is the model of a component whose script queued a `decide_with`;
    every other name as a chat model.
    """

    def __init__(self, serves: Sequence[str] = ("*",), decision_models: Sequence[str] = ()) -> None:
        super().__init__(
            self._answer, serves=serves, decide=self._decide, decision_models=decision_models
        )
        self.scripts: dict[str, LlmScript] = {}

    def serve_as_decision_model(self, model: str) -> None:
        """Serves ``model`` as a decision model from now on."""
        if model not in self.decision_models:
            self.decision_models.append(model)

    def _script(self, caller: str) -> LlmScript:
        script = self.scripts.get(caller)
        if script is None:
            raise TestSetupError(
                f"{caller} called its model, but no mock_llm script is set for it",
                hint=f"script it with env.mock_llm(<the class of {caller}>).then_return(...)",
            )
        return script

    def _answer(self, request: ChatRequest) -> ChatResponse:
        turn = self._script(request.caller.name).next_turn(request)
        if isinstance(turn, ScriptedFailure):
            raise turn.error
        if not isinstance(turn, ScriptedTurn):
            raise TestSetupError(
                f"{request.caller.name} calls a chat model ({request.model}), but its script "
                "gave decide_with(...)",
                hint="script chat models with call_tools / reply_with; serve the model as a "
                "decision model with test_with(..., decision_models=[...])",
            )
        return turn.response(request)

    def _decide(self, request: DecisionRequest) -> DecisionResponse:
        turn = self._script(request.caller.name).next_turn(request)
        if isinstance(turn, ScriptedFailure):
            raise turn.error
        if not isinstance(turn, ScriptedDecision):
            raise TestSetupError(
                f"{request.caller.name} calls a decision model ({request.model}); script it "
                "with decide_with(...)",
            )
        return turn.response(request)
