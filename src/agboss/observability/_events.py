"""What an execution does as it happens, for `App.stream`: model turns, tool runs, pauses
asked and answered, the end — the events a chat UI or a progress bar shows.

A stream is a view, not the record: events are delivered to the `App.stream` call whose work
made them (a context variable carries its sink into every task of the call: branches, child
workflows), only for work done live (a step replayed from the journal says nothing), and
nowhere when nobody streams (one context-variable read). They carry names, ids and the model's
own words as it wrote them (PII tokens included); never a channel pause's id, nor a tool's
arguments or results.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from agboss.records import ExecutionOutput

__all__ = ["ExecutionEvent", "ExecutionEventKind", "emit", "listening", "streaming_to"]


class ExecutionEventKind(StrEnum):
    """What happened."""

    TEXT_DELTA = "text-delta"
    """A piece of an agent's model's text as it streams in (``text``), where the provider
    streams; the whole turn follows as `MODEL_ANSWERED`."""
    MODEL_ANSWERED = "model-answered"
    """An agent's model answered a turn: its text (``text``) and the tools it called
    (``tool_calls``, with the model's ``call_ids``)."""
    TOOL_STARTED = "tool-started"
    """A tool's handler began (``tool``, ``call_id``)."""
    TOOL_DONE = "tool-done"
    """A tool's handler ended; ``failed`` when the model reads a tool error."""
    PAUSE_ASKED = "pause-asked"
    """A tool call waits for a decision (``tool``; ``pause_id`` for a thread-owner pause)."""
    PAUSE_ANSWERED = "pause-answered"
    """An answer was recorded (``answered_by``, ``approved``)."""
    PAUSE_VOTED = "pause-voted"
    """A vote was recorded on a question that takes several approvals (``answered_by``,
    ``approved``); `PAUSE_ANSWERED` follows when it decided the question."""
    PAUSE_EXPIRED = "pause-expired"
    """A question's deadline passed with no answer; its ``on_expiry`` decided (``tool``)."""
    PAUSE_REMINDED = "pause-reminded"
    """A question still waiting was reminded of, at a step of its role's ladder (``tool``)."""
    PAUSE_ESCALATED = "pause-escalated"
    """A question nobody answered was asked of another role, under a new id (``tool``; the
    new ``pause_id`` unless it is a channel's)."""
    PAUSE_REASSIGNED = "pause-reassigned"
    """A person handed a question to another role or person, asked under a new id
    (``tool``; ``answered_by``: who handed it on; the new ``pause_id`` unless it is a
    channel's)."""
    ENDED = "ended"
    """The call's work ended: ``status``, and the execution's output in ``output``."""


@dataclass(frozen=True, slots=True)
class ExecutionEvent:
    """One thing an execution did, as it happened.

    Attributes:
        kind: What happened.
        execution_id: The execution it happened in (a child's, in a child workflow).
        at: When, on the application's clock.
        agent: The agent, for model and tool events and pauses.
        tool: The tool, for tool events and pauses.
        call_id: The model's id of the tool call.
        text: The model's text of its turn, as it wrote it.
        tool_calls: The names of the tools the model called in its turn.
        call_ids: The model's ids of those calls, in the same order.
        failed: A tool run that ended in a tool error the model reads.
        pause_id: A thread-owner pause's id (a channel pause's is its channel's secret).
        answered_by: Who answered a pause.
        approved: What an answer decided.
        status: How the call's work left the execution (`ENDED`).
        output: The `ExecutionOutput` the call returned (`ENDED`).
    """

    kind: ExecutionEventKind
    execution_id: str
    at: datetime
    agent: str | None = None
    tool: str | None = None
    call_id: str | None = None
    text: str | None = None
    tool_calls: tuple[str, ...] = ()
    call_ids: tuple[str, ...] = ()
    failed: bool = False
    pause_id: str | None = None
    answered_by: str | None = None
    approved: bool | None = None
    status: str | None = None
    output: ExecutionOutput | None = field(default=None, compare=False)


_SINK: contextvars.ContextVar[Callable[[ExecutionEvent], None] | None] = contextvars.ContextVar(
    "agboss_event_sink", default=None
)


def emit(make: Callable[[], ExecutionEvent]) -> None:
    """Delivers the event ``make`` builds to the stream of the work it belongs to, if one
    listens (built only then)."""
    sink = _SINK.get()
    if sink is not None:
        sink(make())


def listening() -> bool:
    """Whether the current work's events go to a stream."""
    return _SINK.get() is not None


def streaming_to(sink: Callable[[ExecutionEvent], None]) -> contextvars.Context:
    """A copy of the current context whose work delivers its events to ``sink``."""
    context = contextvars.copy_context()
    context.run(_SINK.set, sink)
    return context
