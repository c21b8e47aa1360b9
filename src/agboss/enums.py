"""The framework's enumerations: ``StrEnum``s with UPPER_SNAKE members and kebab-case values."""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "DecidedBy",
    "ExecutionStatus",
    "PauseAnswerer",
    "PauseResolution",
    "PauseStatus",
]


class ExecutionStatus(StrEnum):
    """Where an execution stands."""

    RUNNING = "running"
    PAUSED = "paused"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


class PauseAnswerer(StrEnum):
    """Who may answer a channel role's pauses."""

    THREAD_OWNER = "thread-owner"
    CHANNEL = "channel"


class DecidedBy(StrEnum):
    """What reads a free-text reply: a model, or the interpreter's own code."""

    MODEL = "model"
    CODE = "code"


class OnInterrupted(StrEnum):
    """What happens to a tool's call that may have run but left no result: its process died,
    or its pass lost the tree, after the call's intent was committed and before its result.

    Attributes:
        RERUN: It runs again, with the same ``ExecutionContext.step.idempotency_key`` (and the
            next ``step.attempt``): for tools that are idempotent, or deduplicate with their
            provider by that key. Today's behaviour, and the default.
        FAIL: The agent's step fails with `ToolInterruptedError` (``tool.interrupted``), which
            ``.on_join_error`` can match: a person checks what happened.
    """

    RERUN = "rerun"
    FAIL = "fail"


class PauseStatus(StrEnum):
    """A pause record's state."""

    PENDING = "pending"
    RESOLVED = "resolved"
    TAKEN = "taken"
    CANCELLED = "cancelled"


class PauseResolution(StrEnum):
    """How a pause was resolved."""

    DECIDED = "decided"
    REPLIED = "replied"
    WITHDRAWN = "withdrawn"
    CANCELLED = "cancelled"
    SEND_FAILED = "send-failed"
    """Closed because its channel's ``send`` raised, timed out or decided an invalid answer:
    nobody was asked (the step failed). An auditor tells it from a cancellation by this."""
