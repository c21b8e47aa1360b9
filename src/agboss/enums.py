"""The framework's enumerations: ``StrEnum``s with UPPER_SNAKE members and kebab-case values."""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "DecidedBy",
    "Decider",
    "ExecutionStatus",
    "OnExpiry",
    "OnInterrupted",
    "Outcome",
    "PauseAnswerer",
    "PauseKind",
    "PauseResolution",
    "PauseStatus",
    "StandingScope",
]


class ExecutionStatus(StrEnum):
    """Where an execution stands."""

    RUNNING = "running"
    PAUSED = "paused"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    WAITING = "waiting"
    """Nothing is pending: the tree rests until ``ExecutionOutput.wake_at`` (a retry's wait)."""


class PauseAnswerer(StrEnum):
    """Who may answer a channel role's pauses."""

    THREAD_OWNER = "thread-owner"
    CHANNEL = "channel"


class DecidedBy(StrEnum):
    """What reads a free-text reply: a model, or the interpreter's own code."""

    MODEL = "model"
    CODE = "code"


class OnExpiry(StrEnum):
    """What a question's deadline decides when nobody answered in time (``expires_after=``).

    Attributes:
        REJECT: The call is rejected; the model reads why ("no answer within 2 days").
        APPROVE: The call runs as asked. Only where the channel role says so itself: a tool
            cannot make a role's silence a yes.
        WITHDRAW: The question is withdrawn and the asking agent's step fails with
            `PauseExpiredError`, which ``.on_join_error`` can match.
    """

    REJECT = "reject"
    APPROVE = "approve"
    WITHDRAW = "withdraw"


class OnInterrupted(StrEnum):
    """What happens to a tool's call that may have run but left no result: its process died,
    or its pass lost the tree, after the call's intent was committed and before its result.

    A tool that names none gets ``ASK`` if it has a channel, else ``RERUN``.

    Attributes:
        RERUN: It runs again, with the same ``ExecutionContext.step.idempotency_key``: for
            tools that are idempotent, or deduplicate with their provider by that key. It
            pays nothing (no intent is written), so its ``step.attempt`` stays 1.
        FAIL: The agent's step fails with `ToolInterruptedError` (``tool.interrupted``), which
            ``.on_join_error`` can match: a person checks what happened.
        ASK: The tree pauses on a question to the tool's channel — a pause of its own, of kind
            `PauseKind.INTERRUPTED` — answered like any other: approved, the call runs again
            with the same key (its ``step.attempt`` the next); rejected, the model reads that
            it may have run and was not run again. Needs a channel.
    """

    RERUN = "rerun"
    FAIL = "fail"
    ASK = "ask"


class PauseKind(StrEnum):
    """What a pause asks (``ask.kind``): shown in ``pending``, the inbox, the page, the CLI
    and the audit trail, and given to the channel (``ApprovalAsk.kind``).

    Attributes:
        APPROVAL: May this tool call run? (``override_arguments`` may change its arguments.)
        TOOL_INPUT: A question the tool asked mid-call (an MCP elicitation); the approval's
            ``override_arguments`` is the answer.
        INTERRUPTED: This call may have run already (its process died mid-call): run it
            again? Approved, it runs again as it was (no ``override_arguments``); rejected,
            the model reads that it may have run and was not run again.
    """

    APPROVAL = "approval"
    TOOL_INPUT = "tool-input"
    INTERRUPTED = "interrupted"


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
    EXPIRED = "expired"
    """Nobody answered before its deadline: its role's (or tool's) ``on_expiry`` decided."""
    ESCALATED = "escalated"
    """Nobody answered before an `Escalate` step of its role's ladder: the question was asked
    of another role instead, under a new pause id."""
    REASSIGNED = "reassigned"
    """A person handed the question to another role or person (`App.reassign`): it was asked
    again under a new pause id, and the old id answers nothing."""


class StandingScope(StrEnum):
    """Where a standing decision (`App.allow`) covers a tool's calls.

    Attributes:
        THREAD: One conversation (its ``thread_id``).
        OWNER: Every conversation of one owner (its ``owner_id``).
        TENANT: Every conversation of the tenant.
    """

    THREAD = "thread"
    OWNER = "owner"
    TENANT = "tenant"


class Outcome(StrEnum):
    """How a question ended: the decision log's ``outcome`` and the metrics'
    ``agboss.outcome``."""

    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"
    """Its deadline passed: its ``on_expiry`` decided (approved, rejected or withdrawn)."""
    ESCALATED = "escalated"
    """Asked of another role instead, under a new id."""
    REASSIGNED = "reassigned"
    """Handed by a person to another role or person, under a new id (`App.reassign`)."""
    WITHDRAWN = "withdrawn"
    """Closed unanswered: its branch was dropped (a sibling failed, a group decided)."""
    CANCELLED = "cancelled"
    """Closed unanswered: its tree failed, or its thread was cancelled."""


class Decider(StrEnum):
    """Who decided a question, in kind: the decision log's ``decided_by`` and the metrics'
    ``agboss.decided_by``."""

    PERSON = "person"
    MODEL = "model"
    """A reply interpreter's or a decision model's reading of a person's words."""
    CODE = "code"
    """A reply interpreter of code, or a channel that decided as it was asked."""
    STANDING = "standing"
    """A standing decision (`App.allow`)."""
    DEADLINE = "deadline"
    """Its deadline (``on_expiry``), or its ladder's escalation."""
    FLOW = "flow"
    """The flow, which no longer needed the answer: a branch dropped, a tree failed."""
