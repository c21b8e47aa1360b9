"""The step machine: how every journaled step runs, in one function (`run_step`).

A step touches the outside world once. In order: **replay** (a step whose key is in the journal
returns the journaled result and runs nothing) → **in doubt** (an attempt begun before, never
ended, may have run: the caller's rule says what happens — run it again, a result instead, or
wait for a person) → **attempts** (each failed attempt journaled, ``<step>/attempt-<n>/failed``,
with when the next is due; a short wait sleeps in the pass, a longer one rests the tree) →
**intent** (a step that must not run twice journals that it is about to, with the commit
before it) → **run** (after the pass committed what it buffered, or checked its lease) →
**journal** (its row in the pass's next commit — at once, with what it implies, for a step that
ran a tool).

What differs between kinds of steps is a frozen `StepPolicy`: when it commits, whether it
writes an intent, its `RetryPolicy`, which of its errors are an attempt's failure, and its tool's
``on_interrupted``. The callers (an agent's run, a launch's join) hand the machine values — a
`Step`, a policy, the rule for a call in doubt — and never the other way round.

A failed attempt's count survives a crash, a restart and a resting tree: a pass that re-enters
the step goes on from the attempt after the last journaled. A wait shorter than a third of the
lease sleeps in the pass, the lease kept; a longer one rests the tree — no lease held, no task
parked — with a wake time stored with it (`Waiting.resting`), which this instance's timer and,
as a backstop, the recovery sweep of any instance honour when it comes due.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Final, Generic, TypeVar

from agboss.engine.trees import (
    ATTEMPT_FAILED,
    ExecutionFrame,
    Waiting,
    attempt_key,
    failed_key,
    intent_of,
)
from agboss.enums import OnInterrupted
from agboss.errors import (
    AgbossError,
    ModelProviderError,
    PassStoppingError,
    PiiRefusedError,
    TestSetupError,
)
from agboss.observability import log_event
from agboss.policies import RetryPolicy
from agboss.records import StepRecord
from agboss.store.protocol import StepEntry
from agboss.store.writes import AppendStep, Write

__all__ = [
    "MODEL_CALL",
    "MODEL_CALL_UNDER_BUDGET",
    "PLAIN_STEP",
    "RUN_AGAIN",
    "RUN_ONCE",
    "TOOL_ROUND",
    "RunAgain",
    "Step",
    "StepPolicy",
    "error_text",
    "run_once",
    "run_step",
]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RunAgain:
    """What the rule for a call in doubt says when the call runs again (``RERUN``, or ``ASK``
    approved): the pauses that said so are buffered for the next attempt's intent."""


RUN_AGAIN: Final = RunAgain()

RUN_ONCE: Final = RetryPolicy.none()
"""A step tried once: what its run raised is the step's failure."""


def error_text(error: BaseException) -> str:
    """An attempt's failure in a sentence, for the step's failure and its journal row."""
    if isinstance(error, AgbossError):
        return f"{error.code}: {error.message}"
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _raised_as_it_is(error: Exception) -> BaseException | None:
    return None


def _as_the_policy_says(policy: RetryPolicy, error: BaseException) -> tuple[bool, timedelta | None]:
    return policy.retries(error), None


def _model_failure(error: Exception) -> BaseException | None:
    """A model call's attempt failed with what it raised — but a PII rule's refusal, made
    before the model is called, is the step's own error and goes on as it is."""
    return None if isinstance(error, PiiRefusedError) else error


def _model_retried(policy: RetryPolicy, error: BaseException) -> tuple[bool, timedelta | None]:
    """What a model call is tried again on: a provider's retryable answer (after what it asked
    to wait), a connection or a timeout that failed, and the types ``policy`` names — never a
    refusal of agboss's own (a budget, a PII rule)."""
    if isinstance(error, ModelProviderError):
        asked = None if error.retry_after is None else timedelta(seconds=error.retry_after)
        return error.retryable, asked
    if isinstance(error, AgbossError):
        return False, None
    return isinstance(error, ConnectionError | TimeoutError) or policy.retries(error), None


@dataclass(frozen=True, slots=True)
class StepPolicy:
    """How the step machine runs one kind of step: one frozen value per kind.

    Attributes:
        commit_first: What the pass buffered is committed before the step runs (``False``:
            only the lease is checked — a model call, when no budget reads the ledger back).
        commit: The step's journal row is committed at once, before anything else happens (a
            tool ran: it must not run again for want of its row).
        retry: How its failed attempts are tried again.
        failure_of: The attempt's failure in what its run raised (``None``: not a failure of
            the attempt — a question an MCP tool asks, a PII rule's refusal — which goes on as
            it is).
        retried: Whether a failure is tried again under ``retry``, and how long its source
            asked to wait.
        on_interrupted: What happens to a call whose attempt may have run (a tool's step:
            an attempt with an intent and no result is in doubt, and the caller's rule for it
            runs; ``None`` for a step that writes no intent and is never in doubt).
    """

    commit_first: bool = True
    commit: bool = False
    retry: RetryPolicy = RUN_ONCE
    failure_of: Callable[[Exception], BaseException | None] = field(
        default=_raised_as_it_is, compare=False
    )
    retried: Callable[[RetryPolicy, BaseException], tuple[bool, timedelta | None]] = field(
        default=_as_the_policy_says, compare=False
    )
    on_interrupted: OnInterrupted | None = None

    @property
    def intent(self) -> bool:
        """Whether the step's intent — it is about to run, for the how-many-th time — is
        journaled with the commit before it (``commit_first``), so that a step cut off mid-run
        is known to be in doubt, not taken for one that never began: only a step that must not
        run twice (``on_interrupted`` other than ``RERUN``) pays for it (a commit of its own
        when nothing else is buffered); one that runs again anyway needs none."""
        return self.on_interrupted not in (None, OnInterrupted.RERUN)

    def calling_a_model(self, retry: RetryPolicy) -> StepPolicy:
        """This policy for a model call tried again under ``retry``."""
        return replace(self, retry=retry, failure_of=_model_failure, retried=_model_retried)


PLAIN_STEP: Final = StepPolicy()
"""A step whose result only the pass reads: a join, a rejection read by the model."""

MODEL_CALL: Final = StepPolicy(commit_first=False)
"""A model call: the lease is checked, nothing committed first (its row goes with the next)."""

MODEL_CALL_UNDER_BUDGET: Final = StepPolicy(commit_first=True)
"""A model call of an application with budgets: the ledger it is checked against is committed."""

TOOL_ROUND: Final = StepPolicy(commit=True)
"""What a tool's call answered instead of a result (its questions): committed at once."""


@dataclass(frozen=True, slots=True)
class Step(Generic[T]):
    """One step as the machine runs it.

    Attributes:
        key: The step's key in its execution (its scope loaded).
        record: Its record.
        run: Does the step's work, given which attempt of the step it is (1-based; a step with
            intents counts those too).
        encode: The result as journal text.
        decode: Journal text as the result.
        record_of: The record completed with the result (a model call's usage).
        implies: Writes that belong with the journal row (the pause the step took).
    """

    key: str
    record: StepRecord
    run: Callable[[int], Awaitable[T]]
    encode: Callable[[T], str]
    decode: Callable[[str], T]
    record_of: Callable[[T], StepRecord] | None = None
    implies: Sequence[Write[Any]] = ()


InDoubt = Callable[[int], Awaitable[RunAgain | T | Waiting]]
"""The rule for a call whose attempt (the argument) may have run: `RUN_AGAIN`, a result
instead, or ``None`` while a person is asked."""


def _reraised(error: BaseException, errors: list[str]) -> Exception:
    return error if isinstance(error, Exception) else RuntimeError(error_text(error))


async def run_step(
    frame: ExecutionFrame,
    step: Step[T],
    policy: StepPolicy = PLAIN_STEP,
    *,
    fail: Callable[[BaseException, list[str]], Exception] = _reraised,
    in_doubt: InDoubt[T] | None = None,
    ended: int = 0,
) -> T | Waiting:
    """Runs a step: replay → in doubt → attempts → intent → run → journal.

    Args:
        frame: The execution frame the step runs in.
        step: The step.
        policy: How its kind of step is run.
        fail: The step's failure once its failed attempt is not tried again: from the last
            failure and the errors of every attempt, in order.
        in_doubt: The rule for an attempt begun before and never ended, for a step whose
            policy says what happens then (``on_interrupted``: a tool's call).
        ended: How many of its earlier attempts ended otherwise than in a result (an MCP
            tool's rounds of questions): not in doubt.

    Returns:
        The step's result; what waits while it rests until its next attempt is due, or
        while a person is asked whether a call in doubt runs again.

    Raises:
        agboss.errors.LeaseLostError: The pass lost its lease; the step did not run.
        Exception: ``fail``'s, once the step is not tried again.
    """
    entry = frame.journaled(step.key)
    if entry is not None:
        return step.decode(entry.result_json)
    if policy.on_interrupted is not None:
        assert in_doubt is not None, "a step that may be in doubt needs the rule for it"
        begun = frame.in_doubt(step.key, ended)
        if begun:
            then = await in_doubt(begun)
            if not isinstance(then, RunAgain):
                return then
            step = replace(step, implies=())  # taken with the next attempt's intent
    failures = _failures(frame, step.key)
    errors = [str(failure["error"]) for failure in failures]
    number = len(failures) + 1
    if failures:
        retry_at = failures[-1].get("retry_at")
        due = None if retry_at is None else datetime.fromisoformat(retry_at)
        if due is not None and not await _waited(frame, due):
            return Waiting.resting(due)
    retry = policy.retry
    while True:
        try:
            return await _attempt(frame, step, policy)
        except (PassStoppingError, TestSetupError):
            raise  # not the step's failure: the pass stops, or the test is wrong
        except Exception as raised:
            error = policy.failure_of(raised)
            if error is None:
                raise
            errors.append(error_text(error))
            again, asked = policy.retried(retry, error)
            if not again or number >= retry.max_attempts:
                raise fail(error, errors) from error
        due_at = frame.runtime.clock.now() + retry.interval(number, asked)
        _journal_failure(frame, step, number, errors[-1], due_at)
        if not await _waited(frame, due_at):
            return Waiting.resting(due_at)
        number += 1


async def run_once(frame: ExecutionFrame, step: Step[T], policy: StepPolicy = PLAIN_STEP) -> T:
    """Runs a step that is tried once and never in doubt (a join, a refusal, a round of
    questions): `run_step`, whose result is then always the step's."""
    assert policy.retry.max_attempts == 1, policy
    assert policy.on_interrupted is None, policy
    result = await run_step(frame, step, policy)
    assert not isinstance(result, Waiting)
    return result


async def _attempt(frame: ExecutionFrame, step: Step[T], policy: StepPolicy) -> T:
    """One attempt: its intent (a step that must not run twice), the commit before it, the run,
    and its journal row (committed at once under ``policy.commit``)."""
    key, record = step.key, step.record
    writes = frame.writes
    attempt = frame.next_attempt(key)
    # An intent written for this pass with its lease (the answer's commit) is its own.
    if policy.intent and attempt_key(key, attempt) not in frame.state.begun:
        intent = intent_of(key, attempt, record)
        writes.add(AppendStep(frame.row.execution_id, intent, frame.runtime.clock.now()))
        frame.journal[intent.key] = intent
    if policy.commit_first:
        await writes.flush()  # the lease is held, and what came before is durable
    else:
        await writes.lease.ensure()
    result = await step.run(attempt)
    final_record = step.record_of(result) if step.record_of is not None else record
    log_event(
        frame.runtime.logger,
        logging.DEBUG,
        "run.step",
        "execution %(execution_id)s ran a %(kind)s step at %(node_id)s",
        execution_id=frame.row.execution_id,
        kind=final_record.kind,
        node_id=final_record.node_id,
        tool=None if final_record.tool_call is None else final_record.tool_call.tool,
    )
    entry = StepEntry(
        key=key,
        kind=final_record.kind,
        result_json=step.encode(result),
        record_json=final_record.model_dump_json(),
        usage=final_record.usage,
    )
    writes.add(AppendStep(frame.row.execution_id, entry, frame.runtime.clock.now()), *step.implies)
    frame.journal[key] = entry
    if policy.commit:
        await writes.send()  # awaited before anything else that cannot be taken back
    return result


def _failures(frame: ExecutionFrame, key: str) -> list[dict[str, str | None]]:
    """The step's journaled failed attempts, in order (their scope loaded)."""
    found: list[dict[str, str | None]] = []
    while (entry := frame.journaled(failed_key(key, len(found) + 1))) is not None:
        found.append(json.loads(entry.result_json))
    return found


def _journal_failure(
    frame: ExecutionFrame, step: Step[Any], number: int, error: str, due_at: datetime
) -> None:
    """The failed attempt, with when the next is due: in the pass's next commit."""
    failed = StepEntry(
        key=failed_key(step.key, number),
        kind=ATTEMPT_FAILED,
        result_json=json.dumps({"attempt": number, "error": error, "retry_at": due_at.isoformat()}),
        record_json=step.record.model_dump_json(),
    )
    frame.writes.add(AppendStep(frame.row.execution_id, failed, frame.runtime.clock.now()))
    frame.journal[failed.key] = failed


async def _waited(frame: ExecutionFrame, due: datetime) -> bool:
    """Waits in the pass until ``due`` (the lease kept) when that is soon — after committing
    what the pass buffered, so that the failed attempts are durable before the wait — and says
    so; ``False`` for a longer wait: the tree rests until it is due (`Waiting.resting`)."""
    runtime = frame.runtime
    clock = runtime.clock
    wait = due - clock.now()
    if wait > runtime.lease_ttl / 3:
        return False  # no lease held, no task parked: the tree wakes when it is due
    if wait > timedelta(0):
        await frame.writes.flush()
        await clock.sleep(wait)
    return True
