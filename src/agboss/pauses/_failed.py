"""Finding what failed: a tenant's failed execution trees, newest first, for an operator's
screen or ``agboss executions failed`` — the ones a fix, or `app.retry`, would take on.

Listed by keyset (an opaque cursor, ``page.next``) from an index (migration step 7); each
entry carries its failure's code, sentence and hint as the error stored them, masked by the
workflow's PII rules like everything that leaves the process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from agboss.engine import Runtime, failure_record
from agboss.pauses._pages import check_limit, execution_keyset, next_cursor
from agboss.store.protocol import ExecutionRow, FailedQuery

__all__ = ["FailedExecution", "FailedPage", "failed_query", "list_failed"]


@dataclass(frozen=True, slots=True)
class FailedExecution:
    """A failed execution tree, as `App.failed` lists it.

    Attributes:
        execution_id: The root execution.
        thread_id: Its thread.
        owner_id: The thread's owner.
        workflow: The workflow's name.
        failed_at: When it failed, on the application's Clock.
        code: The failure's stable code (``agent.failed``, ``tool.interrupted``, …).
        message: What happened, masked by the workflow's PII rules.
        hint: What to do, if the failure said (masked too).
        error_type: The failure's class, as its qualified name.
    """

    execution_id: str
    thread_id: str
    owner_id: str
    workflow: str
    failed_at: datetime
    code: str
    message: str
    hint: str | None
    error_type: str


@dataclass(frozen=True, slots=True)
class FailedPage:
    """One page of failed executions.

    Attributes:
        entries: Newest first.
        next: The cursor of the next page (``after=``), ``None`` on the last.
    """

    entries: list[FailedExecution] = field(default_factory=list)
    next: str | None = None


def failed_query(
    *, tenant_id: str, owner_id: str | None, limit: int = 50, after: str | None = None
) -> FailedQuery:
    """The store's query for `App.failed`; its arguments checked.

    Raises:
        DtoValidationError: ``limit`` is not 1 to 500, or ``after`` not a cursor a page gave.
    """
    check_limit(limit)
    keyset = execution_keyset(after, "a page of failed executions")
    return FailedQuery(tenant_id=tenant_id, owner_id=owner_id, after=keyset, limit=limit)


async def list_failed(runtime: Runtime, query: FailedQuery) -> FailedPage:
    """One page of failed execution trees, masked."""
    found = await runtime.store.executions.list_failed(
        FailedQuery(
            tenant_id=query.tenant_id,
            owner_id=query.owner_id,
            after=query.after,
            limit=query.limit + 1,  # one more: whether there is a next page
        )
    )
    entries = [_entry(runtime, row) for row in found[: query.limit]]
    following = next_cursor(found, query.limit, lambda row: (row.updated_at, row.execution_id))
    return FailedPage(entries=entries, next=following)


def _entry(runtime: Runtime, row: ExecutionRow) -> FailedExecution:
    failure = failure_record(runtime.assembly, row.workflow, row.error_json)
    return FailedExecution(
        execution_id=row.execution_id,
        thread_id=row.thread_id,
        owner_id=row.owner_id,
        workflow=row.workflow,
        failed_at=row.updated_at,
        code=failure.code,
        message=failure.message,
        hint=failure.hint,
        error_type=failure.error_type,
    )
