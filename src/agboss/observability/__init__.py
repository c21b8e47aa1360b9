"""Traces (OpenTelemetry spans; the API only: bring your SDK), lifecycle logs, and the events
`App.stream` delivers."""

from agboss.observability._events import (
    ExecutionEvent,
    ExecutionEventKind,
    emit,
    listening,
    streaming_to,
)
from agboss.observability._logs import log_event
from agboss.observability._tracing import span

__all__ = [
    "ExecutionEvent",
    "ExecutionEventKind",
    "emit",
    "listening",
    "log_event",
    "span",
    "streaming_to",
]
