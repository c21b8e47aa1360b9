"""Pauses: asking a channel, answering by id, withdrawing, and the audit trail."""

from agboss.records import (
    ExecutionPauseEvent,
    ExecutionResumeEvent,
    PauseAnswer,
    PauseAnswerRecord,
    PauseRecord,
    PauseVote,
    PauseVotes,
)

__all__ = [
    "ExecutionPauseEvent",
    "ExecutionResumeEvent",
    "PauseAnswer",
    "PauseAnswerRecord",
    "PauseRecord",
    "PauseVote",
    "PauseVotes",
]
