"""How a person's words were read into a decision: kept with the answer and the vote, and in
the decision log."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from agboss.enums import Decider

__all__ = ["DecisionReading"]


class DecisionReading(BaseModel):
    """How a person's words were read into a decision.

    Attributes:
        interpreter: The reply interpreter that read them.
        model: The model it asked (``None``: the interpreter's own code read them).
        probabilities: What a decision model answered, by decision (``{"approved": P(yes)}``);
            ``None`` for a chat model or code.
    """

    model_config = ConfigDict(frozen=True)

    interpreter: str
    model: str | None = None
    probabilities: dict[str, float] | None = None

    @property
    def decider(self) -> Decider:
        """Who decided, in kind: the model, or the interpreter's code."""
        return Decider.CODE if self.model is None else Decider.MODEL
