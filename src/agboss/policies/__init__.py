"""Policies over executions: budgets, an agent's history and retries (the values; the engine
applies them)."""

from agboss.policies._budgets import Budget
from agboss.policies._history import History
from agboss.policies._retries import RetryPolicy

__all__ = ["Budget", "History", "RetryPolicy"]
