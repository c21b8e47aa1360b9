"""Policies over executions: budgets and an agent's history (the values; the engine applies
them)."""

from agboss.policies._budgets import Budget
from agboss.policies._history import History

__all__ = ["Budget", "History"]
