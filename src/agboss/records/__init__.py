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

__all__ = [
    "ChildExecutionRecord",
    "ComponentRecord",
    "ExecutionRecord",
    "FailureRecord",
    "LedgerRecord",
    "RetryRecord",
    "Spend",
    "StepRecord",
    "ToolCallRecord",
]
