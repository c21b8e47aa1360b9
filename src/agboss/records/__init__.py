"""Execution records and the pause audit trail."""

from agboss.records.model import (
    ComponentRecord,
    ExecutionRecord,
    Spend,
    StepRecord,
    ToolCallRecord,
)

__all__ = ["ComponentRecord", "ExecutionRecord", "Spend", "StepRecord", "ToolCallRecord"]
