"""Traces (OpenTelemetry spans; the API only: bring your SDK), lifecycle logs, and the events
`App.stream` delivers."""

from agboss.observability._events import ExecutionEvent, ExecutionEventKind
from agboss.observability._tracing import span

__all__ = ["ExecutionEvent", "ExecutionEventKind", "span"]
