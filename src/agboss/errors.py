"""The error family: every error a user can cause is an `AgbossError` with a stable `code`.

Each error renders as ``[code] message`` followed by a hint that says what to do. Every error is
picklable (it may cross a pause or a process boundary) whatever its constructor looks like:
`__reduce__` rebuilds it from its state, not by calling ``__init__`` again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

__all__ = [
    "AgbossError",
    "AgentFailedError",
    "AlreadyVotedError",
    "AnswerNotMovedError",
    "AssemblyError",
    "AssemblyViolation",
    "BudgetExceededError",
    "ConfigurationError",
    "ContinuationFailedError",
    "DefinitionChangedError",
    "DtoValidationError",
    "ExecutionFailedError",
    "FinalFailureError",
    "JoinDeadlineError",
    "LeaseBusyError",
    "LeaseLostError",
    "McpCallError",
    "ModelProviderError",
    "ModelUnservedError",
    "NotAnAnswererError",
    "NotFailedError",
    "NotPausedError",
    "PassStoppingError",
    "PauseAnswererError",
    "PauseClaimedError",
    "PauseExpiredError",
    "PiiRefusedError",
    "QuestionChangedError",
    "ReassignTargetError",
    "RecordedError",
    "ReplyInterpreterMissingError",
    "StepFailedError",
    "StoreBusyError",
    "StoreError",
    "StoreOutcomeUnknownError",
    "StoreSchemaError",
    "StoreUnavailableError",
    "StoreValueError",
    "TestSetupError",
    "ThreadOwnerError",
    "ToolError",
    "ToolInterruptedError",
    "UninterpretableReplyError",
    "UnknownDelegationError",
    "UnknownExecutionError",
    "UnknownPauseError",
    "UnknownStandingDecisionError",
    "UnknownThreadError",
    "UnknownWorkflowError",
    "VersionNotServedError",
]


def _restore(cls: type[AgbossError], args: tuple[Any, ...], state: dict[str, Any]) -> AgbossError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class AgbossError(Exception):
    """The base of every error agboss raises on purpose.

    Attributes:
        code: A stable, dotted identifier (``pause.unknown``); match on it, not on the text.
        message: One sentence that says what happened.
        hint: What to do about it, when there is something to do.
    """

    code: ClassVar[str] = "agboss.error"
    default_message: ClassVar[str] = "agboss failed"
    default_hint: ClassVar[str | None] = None

    def __init__(self, message: str | None = None, *, hint: str | None = None) -> None:
        self.message = message if message is not None else self.default_message
        self.hint = hint if hint is not None else self.default_hint
        super().__init__(self._render())

    def _render(self) -> str:
        text = f"[{self.code}] {self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore, (type(self), self.args, dict(self.__dict__)))


@dataclass(frozen=True, slots=True)
class AssemblyViolation:
    """One broken rule of an application, found by `App.create`.

    Attributes:
        rule: The rule id, as the docs name it (``name.kind-suffix``).
        component: The component that breaks it (its name, or its class's name).
        message: A sentence that says what is wrong and how to fix it.
    """

    rule: str
    component: str
    message: str

    def __str__(self) -> str:
        return f"[{self.rule}] {self.component}: {self.message}"


class AssemblyError(AgbossError):
    """An application breaks one or more assembly rules; every violation is listed at once."""

    code = "assembly.invalid"

    def __init__(self, application: str, violations: Sequence[AssemblyViolation]) -> None:
        self.application = application
        self.violations = list(violations)
        lines = "\n".join(f"  - {violation}" for violation in self.violations)
        count = len(self.violations)
        super().__init__(
            f"{application} cannot be assembled: {count} rule"
            f"{'s are' if count != 1 else ' is'} broken:\n{lines}",
            hint="fix every listed component; App.create checks them all again at once",
        )

    @property
    def rules(self) -> list[str]:
        """The rule ids of the violations, in order."""
        return [violation.rule for violation in self.violations]


class DtoValidationError(AgbossError):
    """A value does not validate against the DTO it must be."""

    code = "dto.invalid"

    default_message = "a value is not valid for the DTO it must be"

    def __init__(
        self, message: str | None = None, *, errors: Sequence[str] = (), hint: str | None = None
    ) -> None:
        self.errors = list(errors)
        message = message if message is not None else self.default_message
        detail = "".join(f"\n  - {error}" for error in self.errors)
        super().__init__(message + detail, hint=hint)


class StepFailedError(AgbossError):
    """A step of an execution failed; `__cause__` is what it failed with."""

    code = "step.failed"

    default_message = "a step of the execution failed"

    def __init__(
        self, message: str | None = None, *, node_id: str | None = None, hint: str | None = None
    ) -> None:
        self.node_id = node_id
        super().__init__(message, hint=hint)


class AgentFailedError(StepFailedError):
    """An agent's step failed: its model, its answer or its loop could not finish it.

    Attributes:
        agent: The agent's name.
        final: Whether the journal decided it (its answers stayed invalid, its turns ran
            out, a call was cut off under ``OnInterrupted.FAIL``): running it again replays
            the same steps into the same failure, so `App.retry` refuses it.
        attempts: What each attempt of the failed step failed with, in order (`RetryPolicy`:
            several when it was tried again; empty when the step was not a model call or a
            tool's run).
    """

    code = "agent.failed"
    final: bool = False
    attempts: Sequence[str] = ()

    def __init__(
        self,
        message: str = "its step failed",
        *,
        agent: str = "an agent",
        node_id: str | None = None,
        hint: str | None = None,
        final: bool = False,
        attempts: Sequence[str] = (),
    ) -> None:
        self.agent = agent
        self.final = final
        self.attempts = list(attempts)  # a list, as a stored failure is read back
        super().__init__(f"{agent}: {message}", node_id=node_id, hint=hint)


class ToolInterruptedError(AgentFailedError):
    """A tool's call may have run, but left no result: its process died (or its pass lost the
    tree) after the call's intent was committed and before its result was. Raised for a tool
    declared ``on_interrupted=OnInterrupted.FAIL`` instead of running it again.

    Attributes:
        tool: The tool's name.
        attempt: How many times the call was begun.
    """

    code = "tool.interrupted"

    def __init__(
        self,
        message: str = "a tool's call was interrupted",
        *,
        agent: str = "an agent",
        node_id: str | None = None,
        hint: str | None = None,
        tool: str = "",
        attempt: int = 1,
    ) -> None:
        self.tool = tool
        self.attempt = attempt
        super().__init__(message, agent=agent, node_id=node_id, hint=hint, final=True)


class PauseExpiredError(AgentFailedError):
    """A question's deadline passed with no answer, and its ``on_expiry`` is
    `OnExpiry.WITHDRAW`: the asking agent's step fails with this (``.on_join_error`` matches
    it); `App.retry` asks the question again.

    Attributes:
        tool: The tool whose call waited.
        channel: The channel that was asked.
    """

    code = "pause.expired"

    def __init__(
        self,
        message: str = "a question expired with no answer",
        *,
        agent: str = "an agent",
        node_id: str | None = None,
        hint: str | None = None,
        tool: str = "",
        channel: str = "",
    ) -> None:
        self.tool = tool
        self.channel = channel
        super().__init__(message, agent=agent, node_id=node_id, hint=hint)


class JoinDeadlineError(StepFailedError):
    """A join's deadline passed (elapsed time on the application's Clock, pauses included)
    before its branches came back."""

    code = "join.deadline"
    default_message = "a join's deadline passed"


class ExecutionFailedError(AgbossError):
    """An execution failed earlier; its stored error is re-raised as this when it is read."""

    code = "run.failed"
    default_message = "the execution failed"


class ModelProviderError(AgbossError):
    """A model provider answered with an error that retrying cannot fix, or kept failing.

    Attributes:
        status: The HTTP status it answered with, if it answered.
        retryable: Whether a later attempt may succeed (a rate limit, a server error, a
            connection that failed).
        retry_after: How long the provider asked to wait before the next attempt, in seconds
            (its ``Retry-After``), if it said.
    """

    code = "model.provider-error"
    default_message = "the model provider failed"

    def __init__(
        self,
        message: str | None = None,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        hint: str | None = None,
    ) -> None:
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        super().__init__(message, hint=hint)


class ModelUnservedError(AgbossError):
    """No provider of the application serves a model name."""

    code = "model.unserved"
    default_message = "no provider serves the model"
    default_hint = "pass a provider whose serves= patterns match the model to App.create"


class UnknownWorkflowError(AgbossError):
    """A workflow that is not part of the application was asked to run."""

    code = "workflow.unknown"
    default_message = "the workflow is not part of the application"
    default_hint = "list the workflow in @application(workflows=[...])"


class UnknownExecutionError(AgbossError):
    """No execution has this id for this tenant."""

    code = "run.unknown"
    default_message = "no execution has this id for this tenant"


class UnknownPauseError(AgbossError):
    """No pause has this id for this tenant (or its record is past retention)."""

    code = "pause.unknown"

    def __init__(self) -> None:
        super().__init__(
            "no pause with this id is known for this tenant: the id is wrong, or its record "
            "expired (answered or withdrawn longer ago than pause_record_retention)",
            hint="check the pause_id the channel was sent (or result.pending lists) and the "
            "tenant the execution ran as; an expired question needs no answer any more",
        )


class UnknownStandingDecisionError(AgbossError):
    """No standing decision has this id for this tenant."""

    code = "standing.unknown"
    default_message = "no standing decision has this id for this tenant"
    default_hint = "list them with app.standing() (or `agboss standing list`) for their ids"


class UnknownDelegationError(AgbossError):
    """No delegation has this id for this tenant (or none of the caller's)."""

    code = "delegation.unknown"
    default_message = "no delegation has this id for this tenant"
    default_hint = "list them with app.delegations() (or `agboss delegations list`) for their ids"


class NotPausedError(AgbossError):
    """The pause is no longer waiting: it was answered, decided, withdrawn or cancelled."""

    code = "run.not-paused"

    def __init__(self, status: str = "no longer pending") -> None:
        self.status = status
        super().__init__(
            f"the pause is not waiting for an answer (it is {status})",
            hint="nothing to do: an answer was already taken, or the question was withdrawn",
        )


class QuestionChangedError(AgbossError):
    """An answer says it decides a question (its ``digest``) that the pause no longer asks:
    what was shown is not what waits. Nothing is recorded; the pause keeps waiting."""

    code = "pause.question-changed"
    default_message = "the question changed since it was shown: the answer decides another one"
    default_hint = "read the question again (app.describe_pause) and answer what it asks now"


class PauseClaimedError(AgbossError):
    """Someone else claimed the question (`App.claim`), and its role takes no one else's
    answer while the claim holds: nothing is recorded, the question keeps waiting.

    Attributes:
        claimed_by: Who handles it.
        claimed_until: Until when the claim holds, unless released or answered first.
    """

    code = "pause.claimed"

    def __init__(
        self, claimed_by: str = "someone else", claimed_until: datetime | None = None
    ) -> None:
        self.claimed_by = claimed_by
        self.claimed_until = claimed_until
        until = (
            ""
            if claimed_until is None
            else (f" (claimed until {claimed_until.isoformat(timespec='minutes')})")
        )
        super().__init__(
            f"{claimed_by} handles this question{until}",
            hint=f"leave it to {claimed_by}, ask them to release it, or answer once the claim ends",
        )


class ReassignTargetError(AgbossError):
    """`App.reassign` was asked to hand a question where it cannot go: no other role of the
    application by that name approves the tool's calls, or one person cannot hold it alone
    (several approve it, or its thread's owner answers it). Nothing changed: the question
    keeps waiting where it was."""

    code = "pause.reassign-target"


class NotFailedError(AgbossError):
    """`App.retry` of an execution that did not fail: it completed, was cancelled, or is still
    running or waiting — there is nothing to retry.

    Attributes:
        status: Where its tree stands (``completed``, ``cancelled``, ``running``, ``paused``).
    """

    code = "run.not-failed"

    def __init__(self, status: str = "not failed", *, execution_id: str = "") -> None:
        self.status = status
        self.execution_id = execution_id
        what = {
            "completed": "it completed: read its output with app.get(...)",
            "cancelled": "a cancelled conversation stays cancelled: start a new execution",
            "paused": "it waits for answers: answer its pending pauses",
        }.get(status, "it is still moving: read where it stands with app.get(...)")
        super().__init__(
            f"execution tree {execution_id} did not fail (it is {status}): nothing to retry",
            hint=what,
        )


class FinalFailureError(AgbossError):
    """`App.retry` of a failure its journal decided (an agent's answers invalid after its
    validation attempts, its turns run out, a call cut off under ``OnInterrupted.FAIL``):
    running it again would replay the same journaled steps into the same failure.

    Attributes:
        failure_code: The code of the failure that cannot be retried.
    """

    code = "run.failure-final"

    def __init__(
        self, failure_code: str = "agent.failed", *, execution_id: str = "", cut_off: bool = False
    ) -> None:
        self.failure_code = failure_code
        self.execution_id = execution_id
        super().__init__(
            f"execution tree {execution_id} failed on what its journal decided "
            f"({failure_code}): a retry would replay the same steps and fail the same way",
            hint="check whether the call took effect, then say so: app.retry(execution_id, "
            "retried_by=…, call_ran=True, call_result='what it did') — or call_ran=False to "
            "run it once more with the same idempotency key (agboss retry ID --by … "
            "--call-ran '…' or --call-not-run)"
            if cut_off
            else "start a new execution (with a clearer prompt or higher limits); "
            "app.failed() lists the failure with its sentence",
        )


class PiiRefusedError(AgbossError):
    """A model call would have read a value a ``block_with_refusal()`` PII rule covers."""

    code = "pii.refused"
    default_message = "a model call would read personal data a PII rule refuses"


class ToolError(AgbossError):
    """A tool's refusal in words the model reads: raise it from ``run`` to tell the model the
    call did not work and why (``Tool error: <message>``), so that it can correct the call.

    Only this, a validation error (pydantic's or `DtoValidationError`) and the tool's timeout
    become text for the model. Any other exception from a tool is a bug or a domain failure:
    it fails the agent's step (`AgentFailedError`, the exception as its cause).
    """

    code = "tool.refused"
    default_message = "the tool refused the call"


class McpCallError(AgbossError):
    """An MCP server could not be reached, or broke off a call of one of its tools.

    Not a refusal the model can correct (that is a `ToolError`): the agent's step fails with
    it as the cause, and the connection is opened again at the next call.

    Attributes:
        server: The declared server's name.
    """

    code = "mcp.call-failed"
    default_message = "the MCP server could not be reached"
    default_hint = "check that the server runs (its command, or its URL) and retry the execution"

    def __init__(
        self, message: str | None = None, *, hint: str | None = None, server: str = ""
    ) -> None:
        self.server = server
        super().__init__(message, hint=hint)


class UnknownThreadError(AgbossError):
    """No thread has this id for this tenant (where the caller meant an existing one)."""

    code = "thread.unknown"
    default_message = "no thread has this id for this tenant"
    default_hint = "pass the thread_id an ExecutionOutput gave, under the same tenant"


class ThreadOwnerError(AgbossError):
    """The caller is not the owner of the thread it acts on."""

    code = "thread.wrong-owner"
    default_message = "the caller is not the owner of the thread"
    default_hint = "pass the owner_id of the execution that opened the thread"


class PauseAnswererError(AgbossError):
    """The credential given does not fit who may answer the pause."""

    code = "pause.wrong-answerer"
    default_message = "the credential does not fit who may answer the pause"


class NotAnAnswererError(PauseAnswererError):
    """The answerer may not answer this question, nor vote on it: the thread's owner under
    its role's ``distinct_from_owner``, or not among the voters its quorum named when it was
    asked."""

    code = "pause.not-an-answerer"
    default_message = "the answerer may not answer this question"


class AlreadyVotedError(AgbossError):
    """The voter already voted on this question, otherwise: a vote is not changed."""

    code = "pause.already-voted"
    default_message = "the voter already voted on this question"
    default_hint = (
        "a vote stands as cast; the question waits for the other voters (app.get or the "
        "inbox shows the votes so far)"
    )


class ReplyInterpreterMissingError(AgbossError):
    """A free-text reply was given for a channel role that has no reply interpreter."""

    code = "pause.no-reply-interpreter"
    default_message = "the pause's channel role has no reply interpreter"


class UninterpretableReplyError(AgbossError):
    """The pause's reply interpreter could not read the reply as a valid answer."""

    code = "pause.uninterpretable-reply"

    def __init__(
        self, reason: str = "the reply could not be read", *, cause: BaseException | None = None
    ) -> None:
        self.reason = reason
        self.cause = cause
        super().__init__(
            f"the reply could not be read as an answer: {reason}",
            hint="the pause is still waiting: ask for a clearer answer, or answer with a decision",
        )


class BudgetExceededError(AgbossError):
    """A budget of the execution tree is spent."""

    code = "budget.exceeded"
    default_message = "a budget of the execution tree is spent"


class ConfigurationError(AgbossError):
    """A value given to a decorator or a constructor cannot work."""

    code = "config.invalid"
    default_message = "a given value cannot work"


class PassStoppingError(AgbossError):
    """An error that is not the tree's failure but stops the work on it: the store failing
    (`StoreError`), or another instance holding the tree now (`LeaseLostError`).

    A pass that meets one stops and lets go; whoever holds the tree next carries on from what
    is stored. No tool loop, join handler or retry takes it for a step's failure: the engine
    catches this class, not its members one by one.
    """

    code = "run.stopped"
    default_message = "the work on the execution tree stopped: the store or the lease failed"


class StoreError(PassStoppingError):
    """The store cannot be opened or used as configured."""

    code = "store.invalid"
    default_message = "the store cannot be opened or used"


class StoreBusyError(StoreError):
    """The store stayed locked by another writer past the store's bounded wait."""

    code = "store.busy"
    default_message = "the store is busy: another writer held it past the wait"
    default_hint = "retry; if it persists, look for a process holding a long write transaction"


class StoreUnavailableError(StoreError):
    """The store cannot be reached, or it went away (a restart, a lost connection)."""

    code = "store.unavailable"
    default_message = "the store cannot be reached"
    default_hint = "check that the database server is up and reachable, then retry"


class StoreOutcomeUnknownError(StoreUnavailableError):
    """The store went away while a transaction committed: it may or may not have been
    recorded, and the store could not be asked which since."""

    code = "store.outcome-unknown"
    default_message = "the store went away while it committed: the write may have been recorded"
    default_hint = (
        "once the store is back, app.describe_pause(pause_id) says whether the answer was "
        "recorded; app.answer(...) with the same answer is safe to retry (a repeat of the "
        "recorded answer gets its receipt again)"
    )


class StoreValueError(StoreError):
    """A value the store cannot keep (a NUL byte, a key longer than an index allows)."""

    code = "store.value-rejected"
    default_message = "the store cannot keep a value it was given"
    default_hint = "pass shorter ids and text without NUL characters"


class StoreSchemaError(StoreError):
    """The store's schema is not the one this version of agboss works with."""

    code = "store.schema"
    default_message = "the store's schema does not match this version of agboss"


class LeaseBusyError(AgbossError):
    """Another instance's pass held the tree past the wait; what was asked is recorded."""

    code = "run.busy"
    default_message = "another instance is moving the execution tree"
    default_hint = "the tree moves when that pass ends, or with the recovery sweep"


class AnswerNotMovedError(AgbossError):
    """The answer was recorded, but the store failed while the tree was moved on.

    Not a refusal: the decision is durable and the tree moves without another answer — a pass
    of any instance takes it, at the latest the recovery sweep once the store is back.

    Attributes:
        execution_id: The root execution of the answered pause's tree.
    """

    code = "run.not-moved"
    default_message = "the answer was recorded, but the tree could not be moved on now"
    default_hint = (
        "do not answer again: the tree moves on its own once the store is back (the recovery "
        "sweep takes a recorded answer); app.get(execution_id) reads where it stands"
    )

    def __init__(
        self, message: str | None = None, *, hint: str | None = None, execution_id: str = ""
    ) -> None:
        self.execution_id = execution_id
        super().__init__(message, hint=hint)


class LeaseLostError(PassStoppingError):
    """This process no longer holds the execution tree's lease; another holder took it over."""

    code = "run.lease-lost"
    default_message = "this instance lost the execution tree's lease"


class DefinitionChangedError(PassStoppingError):
    """A waiting tree needs what this build of the application does not have: its workflow, an
    agent, a tool — renamed or removed by a deploy since the tree began.

    Nothing is recorded and nothing fails: an answer is refused and its pause keeps waiting, a
    pass stops and lets go (the tree stays as it was, for a build that has what it needs), and
    the recovery sweep leaves it alone with one warning per tree.
    """

    code = "definition.changed"
    default_message = "the waiting execution tree needs what this build of the application lacks"
    default_hint = (
        "run a build that still has it (the one the tree began on) for this tree, or restore "
        "it in this one; the tree keeps waiting meanwhile"
    )


class VersionNotServedError(DefinitionChangedError):
    """A tree whose workflow's version this build does not serve: neither its own version nor
    one it continues (``@workflow(continues=[...])``). Nothing is recorded and nothing fails;
    a build that serves the version moves it (docs/deploying.md)."""

    code = "definition.version-not-served"
    default_message = "this build of the application does not serve the execution tree's version"
    default_hint = (
        "run it on a build that serves its version (the one it began on, or one whose "
        "workflow continues it: @workflow(continues=[...])); app.stranded() lists the trees "
        "no running build serves"
    )


class ContinuationFailedError(DefinitionChangedError):
    """A workflow's continuation (``@workflow(continuation=...)``) could not map a waiting
    tree's call to this build: it raised, or named a tool the agent lacks or asks no one
    about, or gave arguments the tool does not take. Nothing is written and nothing fails:
    the tree keeps waiting as it was, for a build that serves it (docs/deploying.md)."""

    code = "definition.continuation-failed"
    default_message = "the workflow's continuation could not map a waiting call to this build"
    default_hint = (
        "fix the continuation (agboss deploy-check runs it on every waiting call) and deploy "
        "again, or let the build that began the tree finish it"
    )


class RecordedError(Exception):
    """A stored failure of a class this process does not rebuild (see `agboss.store._failures`).

    Failures are stored as data, never as pickles; one whose class is not an `AgbossError` nor
    one the application names (``.on_join_error(...)``) is read back as this, keeping what it
    was: ``.on_join_error(PaymentDeclinedError, …)`` matches it by ``type_names``.

    Attributes:
        type_name: The qualified name of the original class (``module.QualName``).
        type_names: It and its base classes' qualified names.
        message: The original error's text.
    """

    def __init__(self, type_name: str, type_names: Sequence[str], message: str) -> None:
        super().__init__(type_name, list(type_names), message)
        self.type_name = type_name
        self.type_names = list(type_names)
        self.message = message

    def __str__(self) -> str:
        short = self.type_name.rsplit(".", 1)[-1]
        return f"{short}: {self.message}" if self.message else short


class TestSetupError(AgbossError):
    """The test kit was set up in a way that cannot work."""

    default_message = "the test kit was set up in a way that cannot work"

    __test__ = False
    code = "testing.setup"
