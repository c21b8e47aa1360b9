"""Policies over executions: budgets (the values; the engine enforces them)."""

from agboss.policies._budgets import Budget

__all__ = ["Budget"]
