"""Traces: OpenTelemetry spans around what an execution does (the API only: bring your SDK)."""

from agboss.observability._tracing import span

__all__ = ["span"]
