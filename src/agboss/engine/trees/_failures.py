"""A stored failure read back: the error a failed execution failed with, and the failure
records and listings show (masked by the workflow's PII rules)."""

from __future__ import annotations

from collections.abc import Iterable

from agboss.assembly import Assembly
from agboss.errors import AgbossError, AgentFailedError, ExecutionFailedError, RecordedError
from agboss.records import FailureRecord
from agboss.store import decode_failure, qualified_name
from agboss.store.protocol import ExecutionRow

__all__ = ["failure_record", "stored_error"]


def stored_error(row: ExecutionRow, known: Iterable[type[BaseException]] = ()) -> AgbossError:
    """The error a failed execution failed with, as it was stored (as data, never a pickle)."""
    if row.error_json is not None:
        error = decode_failure(row.error_json, known)
        if isinstance(error, AgbossError):
            return error
        failed = ExecutionFailedError(f"execution {row.execution_id} failed: {error}")
        failed.__cause__ = error
        return failed
    return ExecutionFailedError(f"execution {row.execution_id} failed")


def failure_record(assembly: Assembly, workflow: str, error_json: str | None) -> FailureRecord:
    """A stored failure as records and listings show it, masked by the workflow's PII rules."""
    error = decode_failure(error_json or "", assembly.error_classes)
    if isinstance(error, AgbossError):
        code, message, hint = error.code, error.message, error.hint or _retry_hint(error)
    elif isinstance(error, RecordedError):
        code, message, hint = ExecutionFailedError.code, error.message, None
    else:
        code, message, hint = ExecutionFailedError.code, str(error) or type(error).__name__, None
    outside = assembly.pii_policy(workflow).outside
    return FailureRecord(
        code=code,
        message=outside(message),
        hint=None if hint is None else outside(hint),
        error_type=error.type_name
        if isinstance(error, RecordedError)
        else qualified_name(type(error)),
    )


def _retry_hint(error: AgbossError) -> str | None:
    """What to do about a failure that said nothing of it: a step that failed on what passes
    (a provider down, a channel that could not send) is run again by `App.retry`; one its
    journal decided (`AgentFailedError.final`) is not."""
    if isinstance(error, AgentFailedError) and error.final:
        return None
    return (
        "once what failed is back or fixed (a model provider, a channel, a bug), "
        "app.retry(execution_id) runs the tree again from its journal: nothing that ran is "
        "run again (agboss retry ID)"
    )
