"""Pauses: asking a channel, answering by id, withdrawing, and the audit trail."""

from agboss.pauses._answering import move_answered, record_answer
from agboss.pauses._answers import AnswerReceipt, Credentials
from agboss.pauses._claiming import ClaimReceipt, claim_pause, release_pause
from agboss.pauses._describing import PauseDescription, describe_pause, pause_id_of
from agboss.pauses._executions import (
    ExecutionPage,
    ExecutionSummary,
    executions_query,
    list_executions,
)
from agboss.pauses._failed import FailedExecution, FailedPage, failed_query, list_failed
from agboss.pauses._inbox import InboxEntry, InboxPage, list_inbox, query_of, with_delegated
from agboss.pauses._prompts import load_prompts
from agboss.pauses._reassigning import Reassigned, reassign_pause
from agboss.pauses._stranded import list_stranded, stranded_of
from agboss.records import (
    ExecutionPauseEvent,
    ExecutionResumeEvent,
    PauseAnswer,
    PauseAnswerRecord,
    PauseRecord,
    PauseVote,
    PauseVotes,
    StrandedExecution,
    StrandedPage,
)

__all__ = [
    "AnswerReceipt",
    "ClaimReceipt",
    "Credentials",
    "ExecutionPage",
    "ExecutionPauseEvent",
    "ExecutionResumeEvent",
    "ExecutionSummary",
    "FailedExecution",
    "FailedPage",
    "InboxEntry",
    "InboxPage",
    "PauseAnswer",
    "PauseAnswerRecord",
    "PauseDescription",
    "PauseRecord",
    "PauseVote",
    "PauseVotes",
    "Reassigned",
    "StrandedExecution",
    "StrandedPage",
    "claim_pause",
    "describe_pause",
    "executions_query",
    "failed_query",
    "list_executions",
    "list_failed",
    "list_inbox",
    "list_stranded",
    "load_prompts",
    "move_answered",
    "pause_id_of",
    "query_of",
    "reassign_pause",
    "record_answer",
    "release_pause",
    "stranded_of",
    "with_delegated",
]
