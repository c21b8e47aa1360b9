"""Execution records and the pause audit trail."""

from agboss.records.model import (
    ComponentRecord,
    ExecutionRecord,
    LedgerRecord,
    Spend,
    StepRecord,
    ToolCallRecord,
)

__all__ = [
    "ComponentRecord",
    "ExecutionRecord",
    "LedgerRecord",
    "Spend",
    "StepRecord",
    "ToolCallRecord",
]
