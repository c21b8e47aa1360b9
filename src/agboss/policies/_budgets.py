"""Budgets: how many tokens and how much cost an execution tree may spend on models.

A budget is declared on the application (it bounds every tree) and on a workflow (it bounds
the trees of that workflow). This module is the value the decorators take; the engine checks
it before every model call of a tree and counts each call in the tree's ledger
(`agboss.engine.trees`).
"""

from __future__ import annotations

from dataclasses import dataclass

from agboss.errors import ConfigurationError
from agboss.models import Usage

__all__ = ["Budget"]


@dataclass(frozen=True, slots=True)
class Budget:
    """The most an execution tree may spend on models.

    Attributes:
        tokens: Input and output tokens together; ``None`` for no limit.
        cost: Cost in the providers' currency; ``None`` for no limit.
    """

    tokens: int | None = None
    cost: float | None = None

    def __post_init__(self) -> None:
        for field_name in ("tokens", "cost"):
            value = getattr(self, field_name)
            if value is not None and value < 0:
                raise ConfigurationError(
                    f"Budget({field_name}={value}) cannot be negative",
                    hint="give a limit of 0 or more, or None for no limit",
                )

    def exhausted_by(self, spent: Usage) -> str | None:
        """What is spent, if the budget is; ``None`` while some is left."""
        if self.tokens is not None and spent.total_tokens >= self.tokens:
            return f"{spent.total_tokens} of {self.tokens} tokens"
        if self.cost is not None and spent.cost >= self.cost:
            return f"{spent.cost:.4f} of {self.cost:.4f} in cost"
        return None
