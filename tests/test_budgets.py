"""Budgets: a tree may spend so many tokens and so much cost on models."""

from __future__ import annotations

import pytest

from agboss import Budget, ConfigurationError
from agboss.models import Usage


def test_a_budget_is_spent_when_its_tokens_are_reached() -> None:
    budget = Budget(tokens=100)
    assert budget.exhausted_by(Usage(input_tokens=60, output_tokens=39)) is None
    assert budget.exhausted_by(Usage(input_tokens=60, output_tokens=40)) == "100 of 100 tokens"


def test_a_budget_is_spent_when_its_cost_is_reached() -> None:
    budget = Budget(cost=0.5)
    assert budget.exhausted_by(Usage(cost=0.49)) is None
    assert budget.exhausted_by(Usage(cost=0.5)) == "0.5000 of 0.5000 in cost"


def test_a_budget_without_limits_is_never_spent() -> None:
    assert Budget().exhausted_by(Usage(input_tokens=10**9, cost=10**6)) is None


def test_a_negative_budget_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="cannot be negative") as caught:
        Budget(tokens=-1)
    assert caught.value.code == "config.invalid"
