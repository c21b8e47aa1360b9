"""The flow DSL: ``start(S).returns(Dto).to_agent(A)….to_finish(F)``.

A chain only records what it was told; `App.create` compiles it into a graph and checks that
each node takes what the node before it returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

__all__ = ["Flow", "FlowChain", "FlowStart", "FlowStep", "StepKind", "start"]


class StepKind(StrEnum):
    """What a step of a chain runs."""

    START = "start"
    AGENT = "agent"
    FINISH = "finish"


@dataclass(frozen=True, slots=True)
class FlowStep:
    """One step of a chain: its kind and the component it runs."""

    kind: StepKind
    component: type[Any]


@dataclass(frozen=True, slots=True)
class Flow:
    """A finished chain, from a ``@workflow_start`` to a ``@workflow_finish``."""

    steps: tuple[FlowStep, ...]
    returns: type[BaseModel] | None


@dataclass(frozen=True, slots=True)
class FlowChain:
    """A chain being built; end it with `to_finish`."""

    steps: tuple[FlowStep, ...]
    returns: type[BaseModel] | None

    def to_agent(self, agent: type[Any]) -> FlowChain:
        """Runs an ``@agent`` on what the chain has so far; it hands on its answer."""
        return FlowChain((*self.steps, FlowStep(StepKind.AGENT, agent)), self.returns)

    def to_finish(self, finish: type[Any]) -> Flow:
        """Ends the chain at a ``@workflow_finish``, which returns what it is handed."""
        return Flow((*self.steps, FlowStep(StepKind.FINISH, finish)), self.returns)


@dataclass(frozen=True, slots=True)
class FlowStart:
    """The start of a chain; say what it returns with `returns`."""

    component: type[Any]

    def returns(self, dto: type[BaseModel]) -> FlowChain:
        """The DTO the start hands to the next node: the workflow's input DTO."""
        return FlowChain((FlowStep(StepKind.START, self.component),), dto)


def start(component: type[Any]) -> FlowStart:
    """Begins a flow at a ``@workflow_start``."""
    return FlowStart(component)
