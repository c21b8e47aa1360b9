"""Decision models: models that read a state and answer named yes / no decisions with a
probability, instead of writing text. A provider may serve some model names as decision models.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from agboss.models._messages import ModelCaller, Usage

__all__ = ["Decision", "DecisionModel", "DecisionRequest", "DecisionResponse"]


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision a decision model makes about a state.

    Attributes:
        name: The decision's name; its probability comes back under it.
        question: What is asked, as the model reads it.
    """

    name: str
    question: str

    @classmethod
    def noul(cls, name: str, question: str | None = None) -> Decision:
        """A yes / no decision named ``name`` (its probability is P(yes))."""
        return cls(name, question or f"Is the answer '{name}'? Answer yes or no.")


@dataclass(frozen=True, slots=True)
class DecisionRequest:
    """One call of a decision model.

    Attributes:
        model: The model's name.
        instructions: What the model is told before the state.
        state: What it decides about.
        decisions: The decisions to make.
        caller: Who calls (``reply-interpreter:<name>``).
        subject: What the caller reads, by name (the test kit matches scripts against it).
    """

    model: str
    instructions: str
    state: str
    decisions: tuple[Decision, ...]
    caller: ModelCaller
    subject: Mapping[str, Any] = field(default_factory=dict)


class DecisionResponse(BaseModel):
    """A decision model's answer: P(yes) of each decision, by name."""

    model_config = ConfigDict(frozen=True)

    probabilities: dict[str, float]
    usage: Usage = Usage(calls=1)


@runtime_checkable
class DecisionModel(Protocol):
    """A model that answers yes / no decisions with probabilities."""

    async def decide(self, request: DecisionRequest) -> DecisionResponse:
        """Makes the request's decisions."""
        ...
