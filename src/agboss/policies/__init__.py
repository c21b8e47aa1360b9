"""Policies over executions: budgets, an agent's history and retries (the values; the engine
applies them)."""

from agboss.policies._budgets import Budget
from agboss.policies._history import DEFAULT_HISTORY, History
from agboss.policies._retries import DEFAULT_MODEL_RETRY, RetryPolicy

__all__ = [
    "DEFAULT_HISTORY",
    "DEFAULT_MODEL_RETRY",
    "Budget",
    "History",
    "RetryPolicy",
]
