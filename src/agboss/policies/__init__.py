"""Policies over executions: budgets (the values; the engine enforces them)."""

from agboss.policies.budgets import Budget

__all__ = ["Budget"]
