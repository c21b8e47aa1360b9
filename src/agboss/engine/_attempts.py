"""A step tried again on failure (`RetryPolicy`): its attempts, the waits between them, and a
tree that rests until the next one is due.

Each failed attempt is journaled (``<step>/attempt-<n>/failed``: its error and when the next is
due) before the wait, so a crash, a restart or a resting tree does not reset the count: a pass
that re-enters the step goes on from the attempt after the last journaled. A wait shorter than
a third of the lease sleeps in the pass, the lease kept; a longer one rests the tree — no lease
held, no task parked — with a wake time stored with it (`PassState.wake`), which this instance's
timer and, as a backstop, the recovery sweep of any instance honour when it comes due.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final, TypeVar

from agboss.engine._frame import ATTEMPT_FAILED, ExecutionFrame, failed_key
from agboss.errors import (
    AgbossError,
    ModelProviderError,
    PassStoppingError,
    PiiRefusedError,
    TestSetupError,
)
from agboss.policies._retries import RetryPolicy
from agboss.records._model import StepRecord
from agboss.store.protocol import StepEntry
from agboss.store.writes import AppendStep

__all__ = [
    "RESTING",
    "Attempts",
    "Resting",
    "attempted",
    "error_text",
    "model_failure",
    "model_retried",
]

T = TypeVar("T")


class Resting:
    """What a step returns while it rests until its next attempt is due."""

    def __repr__(self) -> str:
        return "RESTING"


RESTING: Final = Resting()


def error_text(error: BaseException) -> str:
    """An attempt's failure in a sentence, for the step's failure and its journal row."""
    if isinstance(error, AgbossError):
        return f"{error.code}: {error.message}"
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def model_failure(error: Exception) -> BaseException | None:
    """A model call's attempt failed with what it raised — but a PII rule's refusal, made
    before the model is called, is the step's own error and goes on as it is."""
    return None if isinstance(error, PiiRefusedError) else error


def model_retried(policy: RetryPolicy) -> Callable[[BaseException], tuple[bool, timedelta | None]]:
    """What a model call is tried again on: a provider's retryable answer (after what it asked
    to wait), a connection or a timeout that failed, and the types ``policy`` names — never a
    refusal of agboss's own (a budget, a PII rule)."""

    def retried(error: BaseException) -> tuple[bool, timedelta | None]:
        if isinstance(error, ModelProviderError):
            asked = None if error.retry_after is None else timedelta(seconds=error.retry_after)
            return error.retryable, asked
        if isinstance(error, AgbossError):
            return False, None
        return isinstance(error, ConnectionError | TimeoutError) or policy.retries(error), None

    return retried


@dataclass(frozen=True, slots=True)
class Attempts:
    """How one step is tried again.

    Attributes:
        policy: Its retry policy.
        failure_of: The attempt's failure in what its run raised (``None``: not a failure of
            the attempt — a question an MCP tool asks — which goes on as it is).
        retried: Whether a failure is tried again, and how long its source asked to wait.
        fail: The step's failure once it is not tried again: from the last failure and the
            errors of every attempt, in order.
    """

    policy: RetryPolicy
    failure_of: Callable[[Exception], BaseException | None]
    retried: Callable[[BaseException], tuple[bool, timedelta | None]]
    fail: Callable[[BaseException, list[str]], Exception]


def _failures(frame: ExecutionFrame, key: str) -> list[dict[str, str | None]]:
    """The step's journaled failed attempts, in order (their scope loaded)."""
    found: list[dict[str, str | None]] = []
    while (entry := frame.journaled(failed_key(key, len(found) + 1))) is not None:
        found.append(json.loads(entry.result_json))
    return found


async def attempted(
    frame: ExecutionFrame,
    key: str,
    record: StepRecord,
    attempts: Attempts,
    attempt: Callable[[int], Awaitable[T]],
) -> T | Resting:
    """Runs a step's attempts (``attempt(n)`` runs the ``n``-th, 1-based) until one succeeds,
    its failure is not tried again, or the attempts run out.

    Returns:
        The step's result, or `RESTING` when the tree rests until the next attempt is due
        (`PassState.wake`; the failed attempt is journaled with the pass's next commit).

    Raises:
        Exception: ``attempts.fail``'s, once the step is not tried again.
    """
    if frame.journaled(key) is not None:
        return await attempt(0)  # it ran: replayed from the journal
    runtime = frame.runtime
    failures = _failures(frame, key)
    errors = [str(failure["error"]) for failure in failures]
    number = len(failures) + 1
    if failures:
        due = failures[-1].get("retry_at")
        if due is not None and not await _waited(frame, datetime.fromisoformat(due)):
            return RESTING
    policy = attempts.policy
    while True:
        try:
            return await attempt(number)
        except (PassStoppingError, TestSetupError):
            raise  # not the step's failure: the pass stops, or the test is wrong
        except Exception as raised:
            error = attempts.failure_of(raised)
            if error is None:
                raise
            errors.append(error_text(error))
            again, asked = attempts.retried(error)
            if not again or number >= policy.max_attempts:
                raise attempts.fail(error, errors) from error
        wait = policy.interval(number, asked)
        due_at = runtime.clock.now() + wait
        failed = StepEntry(
            key=failed_key(key, number),
            kind=ATTEMPT_FAILED,
            result_json=json.dumps(
                {"attempt": number, "error": errors[-1], "retry_at": due_at.isoformat()}
            ),
            record_json=record.model_dump_json(),
        )
        frame.writes.add(AppendStep(frame.row.execution_id, failed, runtime.clock.now()))
        frame.journal[failed.key] = failed
        if not await _waited(frame, due_at):
            return RESTING
        number += 1


async def _waited(frame: ExecutionFrame, due: datetime) -> bool:
    """Waits in the pass until ``due`` (the lease kept) when that is soon — after committing
    what the pass buffered, so that the failed attempts are durable before the wait — and says
    so; ``False`` for a longer wait: the tree rests until it is due (`PassState.wake`)."""
    runtime = frame.runtime
    clock = runtime.clock
    wait = due - clock.now()
    if wait > runtime.lease_ttl / 3:
        frame.state.wake(due)  # no lease held, no task parked: the tree wakes when it is due
        return False
    if wait > timedelta(0):
        await frame.writes.flush()
        await clock.sleep(wait)
    return True
