"""Traces and metrics (OpenTelemetry spans and instruments; the API only: bring your SDK),
lifecycle logs, and the events `App.stream` delivers."""

from agboss.observability._events import (
    ExecutionEvent,
    ExecutionEventKind,
    emit,
    listening,
    streaming_to,
)
from agboss.observability._genai import agent_span, chat_span, tool_span, usage_seen
from agboss.observability._logs import log_event
from agboss.observability._metrics import (
    closed,
    decided,
    questions_waiting,
    waiting_wanted,
)
from agboss.observability._tracing import span

__all__ = [
    "ExecutionEvent",
    "ExecutionEventKind",
    "agent_span",
    "chat_span",
    "closed",
    "decided",
    "emit",
    "listening",
    "log_event",
    "questions_waiting",
    "span",
    "streaming_to",
    "tool_span",
    "usage_seen",
    "waiting_wanted",
]
