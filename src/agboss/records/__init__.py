"""Execution records and the pause audit trail."""

from agboss.records._model import (
    ChildExecutionRecord,
    ComponentRecord,
    ExecutionRecord,
    FailureRecord,
    LedgerRecord,
    RetryRecord,
    Spend,
    StepRecord,
    ToolCallRecord,
)
from agboss.records._standing import StandingDecision

__all__ = [
    "ChildExecutionRecord",
    "ComponentRecord",
    "ExecutionRecord",
    "FailureRecord",
    "LedgerRecord",
    "RetryRecord",
    "Spend",
    "StandingDecision",
    "StepRecord",
    "ToolCallRecord",
]
