"""The inbox: the pauses waiting across executions, for an approvals screen or a reminder job.

Listed oldest first by keyset (an opaque cursor, ``page.next``), from an index; each entry is
masked like ``ExecutionOutput.pending`` (PII rules), and a `PauseAnswerer.CHANNEL` pause is
listed without its id, as everywhere outside its channel.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from agboss.components import LadderStep
from agboss.engine import Runtime
from agboss.errors import DtoValidationError
from agboss.pauses._pages import check_limit, cursor_of, keyset_of
from agboss.records import PendingPause
from agboss.store.protocol import WaitingPause, WaitingQuery

__all__ = ["InboxEntry", "InboxPage", "list_inbox", "request_of", "with_delegated"]


@dataclass(frozen=True, slots=True)
class InboxEntry:
    """A waiting pause, wherever it waits.

    Attributes:
        pause: The pause as ``pending`` lists it (masked; no id for a channel pause).
        execution_id: The root execution it waits in.
        thread_id: Its thread.
        owner_id: The thread's owner.
        asked_at: When it was asked, on the application's Clock.
    """

    pause: PendingPause
    execution_id: str
    thread_id: str
    owner_id: str
    asked_at: datetime
    request: Any = None
    """What was asked of the execution it waits in — its start's input, as JSON, masked by the
    workflow's PII rules — so that a screen shows what the question is for."""
    expires_at: datetime | None = None
    """Its deadline (``expires_after``), on the application's Clock; ``None``: none."""
    next_step: LadderStep | None = None
    """The next step of its role's ladder (`Remind` or `Escalate`), ``None`` when none is
    left."""
    next_step_at: datetime | None = None
    """When that step is due, on the application's Clock."""
    claimed_by: str | None = None
    """Who handles it (`App.claim`) while their claim holds; ``None``: nobody claimed it."""
    claimed_until: datetime | None = None
    """Until when that claim holds, unless released or answered first."""


@dataclass(frozen=True, slots=True)
class InboxPage:
    """One page of the inbox.

    Attributes:
        entries: The waiting pauses, oldest first.
        next: The cursor of the next page (``after=``), ``None`` on the last.
    """

    entries: list[InboxEntry] = field(default_factory=list)
    next: str | None = None


def _keyset(cursor: object) -> tuple[datetime, str, int]:
    at, (root, seq) = keyset_of(cursor, (str, int), "an inbox page")
    return at, str(root), int(seq)


def query_of(
    *,
    tenant_id: str,
    owner_id: str | None,
    channel: str | None,
    asked_before: datetime | None,
    limit: int = 50,
    after: str | None = None,
    expiring_before: datetime | None = None,
    voter: str | None = None,
) -> WaitingQuery:
    """The store's query for an inbox call; its arguments checked.

    Raises:
        DtoValidationError: ``limit`` is not 1 to 500, ``asked_before`` not an aware datetime,
            or ``after`` not a cursor a page gave.
    """
    check_limit(limit)
    for name, moment, example in (
        ("asked_before", asked_before, "app.clock.now() - timedelta(hours=4)"),
        ("expiring_before", expiring_before, "app.clock.now() + timedelta(hours=4)"),
    ):
        if moment is not None and (not isinstance(moment, datetime) or moment.tzinfo is None):
            raise DtoValidationError(
                f"{name} must be a timezone-aware datetime", hint=f"pass e.g. {example}"
            )
    return WaitingQuery(
        tenant_id=tenant_id,
        owner_id=owner_id,
        channel=channel,
        asked_before=asked_before,
        after=None if after is None else _keyset(after),
        limit=limit,
        expiring_before=expiring_before,
        voter=voter,
    )


def request_of(runtime: Runtime, workflow: str, input_json: str | None) -> Any:
    """An execution's input as a screen may show it: masked by its workflow's PII rules (and
    its start DTO's marked fields); ``None`` when there is none or the workflow is gone."""
    assembly = runtime.assembly
    definition = assembly.workflows_by_name.get(workflow)
    if input_json is None or definition is None:
        return None
    value = json.loads(input_json)
    outside = assembly.pii_outside
    return outside.arguments(value, definition.graph.start_node.input, outside.policy(workflow))


def _next_step(runtime: Runtime, waiting: WaitingPause) -> LadderStep | None:
    """The ladder step a waiting pause takes next, as its role declares it."""
    if waiting.next_step_at is None:
        return None
    assembly = runtime.assembly
    tool = assembly.agent_tools.get(waiting.pause.agent, {}).get(waiting.pause.ask.tool)
    channel = None if tool is None else assembly.tool_channels.get(tool[0])
    if channel is None or waiting.ladder_step >= len(channel.ladder):
        return None  # the application no longer declares it
    return channel.ladder[waiting.ladder_step]


def _claim(waiting: WaitingPause, now: datetime) -> dict[str, Any]:
    """Who handles a waiting pause, and until when, if their claim holds at ``now``."""
    until = waiting.claimed_until
    if waiting.claimed_by is None or until is None or until <= now:
        return {}
    return {"claimed_by": waiting.claimed_by, "claimed_until": until}


async def with_delegated(runtime: Runtime, query: WaitingQuery) -> WaitingQuery:
    """A person's inbox (``voter=``) with the questions delegated to them (`App.delegate`)."""
    if query.voter is None:
        return query
    now = runtime.clock.now()
    held = await runtime.store.delegations.held_by(query.tenant_id, query.voter, now)
    return replace(query, delegated=tuple(held))


async def list_inbox(runtime: Runtime, query: WaitingQuery) -> InboxPage:
    """One page of waiting pauses, masked."""
    query = await with_delegated(runtime, query)
    # One more: whether there is a next page.
    found = await runtime.store.pauses.list_waiting(replace(query, limit=query.limit + 1))
    outside = runtime.assembly.pii_outside
    # A tree's pauses share its request: read (and masked) once per tree on the page.
    requests: dict[str, Any] = {}
    for waiting in found[: query.limit]:
        if waiting.root_execution_id not in requests:
            requests[waiting.root_execution_id] = request_of(
                runtime, waiting.workflow, waiting.input_json
            )
    now = runtime.clock.now()
    entries = [
        InboxEntry(
            pause=outside.pending(waiting.pause, outside.policy(waiting.workflow))
            if outside.masks
            else waiting.pause,
            execution_id=waiting.root_execution_id,
            thread_id=waiting.thread_id,
            owner_id=waiting.owner_id,
            asked_at=waiting.asked_at,
            request=requests[waiting.root_execution_id],
            expires_at=waiting.expires_at,
            next_step=_next_step(runtime, waiting),
            next_step_at=waiting.next_step_at,
            **_claim(waiting, now),
        )
        for waiting in found[: query.limit]
    ]
    following = None
    if len(found) > query.limit:
        last = found[query.limit - 1]
        following = cursor_of(last.asked_at, last.root_execution_id, last.seq)
    return InboxPage(entries=entries, next=following)
