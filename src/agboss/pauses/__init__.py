"""Pauses: asking a channel, answering by id, withdrawing, and the audit trail."""

from agboss.records._pauses import (
    ExecutionPauseEvent,
    ExecutionResumeEvent,
    PauseAnswer,
    PauseAnswerRecord,
    PauseRecord,
)
from agboss.records._votes import PauseVote, PauseVotes

__all__ = [
    "ExecutionPauseEvent",
    "ExecutionResumeEvent",
    "PauseAnswer",
    "PauseAnswerRecord",
    "PauseRecord",
    "PauseVote",
    "PauseVotes",
]
