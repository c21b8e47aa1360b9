"""A tenant's execution trees by status — waiting, paused, running, failed, completed — for an
operator's screen, ``agboss executions list`` and ``GET /executions``: newest change first, by
keyset from an index (migration step 27), each with what it waits on, masked like the inbox."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agboss.engine import Runtime
from agboss.enums import ExecutionStatus
from agboss.errors import DtoValidationError
from agboss.pauses._inbox import request_of
from agboss.pauses._pages import check_limit, execution_keyset, next_cursor
from agboss.records import PendingPause
from agboss.store.protocol import ExecutionRow, ExecutionsQuery

__all__ = ["ExecutionPage", "ExecutionSummary", "executions_query", "list_executions"]


@dataclass(frozen=True, slots=True)
class ExecutionSummary:
    """An execution tree, as `App.executions` lists it.

    Attributes:
        execution_id: The root execution.
        thread_id: Its thread.
        owner_id: The thread's owner.
        workflow: The workflow's name.
        workflow_version: The version it runs under.
        status: Where it stands.
        began_at: When it began, on the application's Clock.
        changed_at: When it last changed.
        request: What was asked of it — its start's input, masked by the workflow's PII rules.
        waiting_on: The questions a paused tree waits on (masked; a channel's without its id).
        wakes_at: When a tree that rests (`ExecutionStatus.WAITING`, a retry's wait) moves by
            itself.
    """

    execution_id: str
    thread_id: str
    owner_id: str
    workflow: str
    workflow_version: str
    status: ExecutionStatus
    began_at: datetime
    changed_at: datetime
    request: Any = None
    waiting_on: list[PendingPause] = field(default_factory=list)
    wakes_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class ExecutionPage:
    """One page of execution trees.

    Attributes:
        entries: Newest change first.
        next: The cursor of the next page (``after=``), ``None`` on the last.
    """

    entries: list[ExecutionSummary] = field(default_factory=list)
    next: str | None = None


def executions_query(
    *,
    tenant_id: str,
    status: ExecutionStatus | str | None,
    owner_id: str | None,
    workflow: str | None,
    since: datetime | None,
    limit: int = 50,
    after: str | None = None,
) -> ExecutionsQuery:
    """The store's query for `App.executions`; its arguments checked.

    Raises:
        DtoValidationError: ``status`` is not an execution's status, ``since`` not an aware
            datetime, ``limit`` not 1 to 500, or ``after`` not a cursor a page gave.
    """
    check_limit(limit)
    wanted: ExecutionStatus | None = None
    if status is not None:
        try:
            wanted = ExecutionStatus(status)
        except ValueError as error:
            raise DtoValidationError(
                f"status={status!r} is not an execution's status",
                hint="one of " + ", ".join(member.value for member in ExecutionStatus),
            ) from error
    if since is not None and (not isinstance(since, datetime) or since.tzinfo is None):
        raise DtoValidationError(
            "since must be a timezone-aware datetime",
            hint="pass e.g. app.clock.now() - timedelta(days=1)",
        )
    return ExecutionsQuery(
        tenant_id=tenant_id,
        status=wanted,
        owner_id=owner_id,
        workflow=workflow,
        since=since,
        after=execution_keyset(after, "a page of executions"),
        limit=limit,
    )


async def list_executions(runtime: Runtime, query: ExecutionsQuery) -> ExecutionPage:
    """One page of execution trees, each with what it waits on, masked."""
    more = ExecutionsQuery(**{**_fields(query), "limit": query.limit + 1})
    found = await runtime.store.executions.list_roots(more)
    entries = [await _summary(runtime, row) for row in found[: query.limit]]
    following = next_cursor(found, query.limit, lambda row: (row.updated_at, row.execution_id))
    return ExecutionPage(entries=entries, next=following)


def _fields(query: ExecutionsQuery) -> dict[str, Any]:
    return {name: getattr(query, name) for name in ExecutionsQuery.__dataclass_fields__}


async def _summary(runtime: Runtime, row: ExecutionRow) -> ExecutionSummary:
    waiting: list[PendingPause] = []
    if row.status is ExecutionStatus.PAUSED:
        outside = runtime.assembly.pii_outside
        policy = outside.policy(row.workflow)
        pending = await runtime.store.pauses.list_pending(row.execution_id)
        waiting = [outside.pending(pause, policy) for pause in pending]
    return ExecutionSummary(
        execution_id=row.execution_id,
        thread_id=row.thread_id,
        owner_id=row.owner_id,
        workflow=row.workflow,
        workflow_version=row.workflow_version,
        status=row.status,
        began_at=row.created_at,
        changed_at=row.updated_at,
        request=request_of(runtime, row.workflow, row.input_json),
        waiting_on=waiting,
        wakes_at=row.wake_at if row.status is ExecutionStatus.WAITING else None,
    )
