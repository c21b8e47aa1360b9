"""Pauses: asking a channel, answering by id, withdrawing, and the audit trail."""

from agboss.records._pauses import (
    ExecutionPauseEvent,
    ExecutionResumeEvent,
    PauseAnswer,
    PauseAnswerRecord,
    PauseRecord,
)

__all__ = [
    "ExecutionPauseEvent",
    "ExecutionResumeEvent",
    "PauseAnswer",
    "PauseAnswerRecord",
    "PauseRecord",
]
