"""OpenTelemetry spans for executions, steps and pauses.

agboss depends on the OpenTelemetry API only; spans go nowhere until the application installs
an SDK and a tracer provider. Every span carries the execution it belongs to; a model call's
span carries its cost caller (``agent:<name>``, ``reply-interpreter:<name>``). No span carries
a pause id: a channel pause's id is the right to answer it and never leaves its channel.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext

from opentelemetry import trace
from opentelemetry.trace import INVALID_SPAN, ProxyTracerProvider, Span, Status, StatusCode

from agboss.store import redacted

__all__ = ["span"]

_TRACER = trace.get_tracer("agboss")

Attribute = str | int | float | bool | None

_UNTRACED: AbstractContextManager[Span] = nullcontext(INVALID_SPAN)


def span(
    name: str, *, redact: str | None = None, **attributes: Attribute
) -> AbstractContextManager[Span]:
    """A span named ``agboss.<name>`` with ``agboss.<key>`` attributes (``None`` ones left out).

    Until the application installs a tracer provider, every span would go nowhere: none is
    made (a no-op span still costs ~10 µs, and a pause cycle opens a dozen).

    Args:
        name: The span's name, after ``agboss.``.
        redact: A secret (a channel pause's id) that an exception's event and status must not
            show: it is masked in the error that is recorded.
        **attributes: The span's attributes.
    """
    if isinstance(trace.get_tracer_provider(), ProxyTracerProvider):
        return _UNTRACED
    return _traced(name, redact, attributes)


@contextmanager
def _traced(name: str, redact: str | None, attributes: dict[str, Attribute]) -> Iterator[Span]:
    with _TRACER.start_as_current_span(
        f"agboss.{name}",
        attributes={
            f"agboss.{key}": value for key, value in attributes.items() if value is not None
        },
        record_exception=redact is None,
        set_status_on_exception=redact is None,
    ) as current:
        try:
            yield current
        except Exception as error:
            if redact is not None:
                shown = redacted(error, redact)
                current.record_exception(shown)
                current.set_status(Status(StatusCode.ERROR, f"{type(shown).__name__}: {shown}"))
            raise
