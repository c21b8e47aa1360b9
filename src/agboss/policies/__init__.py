"""Policies over executions: budgets (and, later, PII)."""

from agboss.policies.budgets import Budget, check_budgets, count_spend

__all__ = ["Budget", "check_budgets", "count_spend"]
