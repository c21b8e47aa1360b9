"""Traces: OpenTelemetry spans around what an execution does (the API only: bring your SDK)."""

from agboss.observability.tracing import span

__all__ = ["span"]
