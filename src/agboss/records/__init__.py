"""Execution records and the pause audit trail."""

from agboss.records._model import (
    ChildExecutionRecord,
    ComponentRecord,
    ExecutionRecord,
    LedgerRecord,
    Spend,
    StepRecord,
    ToolCallRecord,
)

__all__ = [
    "ChildExecutionRecord",
    "ComponentRecord",
    "ExecutionRecord",
    "LedgerRecord",
    "Spend",
    "StepRecord",
    "ToolCallRecord",
]
