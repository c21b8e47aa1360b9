"""OpenTelemetry spans for executions, steps and pauses.

agboss depends on the OpenTelemetry API only; spans go nowhere until the application installs
an SDK and a tracer provider. Every span carries the execution it belongs to; a model call's
span carries its cost caller (``agent:<name>``, ``reply-interpreter:<name>``). No span carries
a pause id: a channel pause's id is the right to answer it and never leaves its channel.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext

from opentelemetry import trace
from opentelemetry.trace import INVALID_SPAN, ProxyTracerProvider, Span, Status, StatusCode

from agboss.store import redacted

__all__ = ["Attribute", "conventional_span", "span"]

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
    return _traced(f"agboss.{name}", redact, _ours(attributes))


def conventional_span(
    name: str, conventions: Mapping[str, Attribute], **attributes: Attribute
) -> AbstractContextManager[Span]:
    """A span named as an OpenTelemetry semantic convention says (``execute_tool
    refund-tool``), with the convention's attributes (``gen_ai.*``, as given) and agboss's
    own (``agboss.<key>``); none until a tracer provider is installed, as `span`."""
    if isinstance(trace.get_tracer_provider(), ProxyTracerProvider):
        return _UNTRACED
    given = {key: value for key, value in conventions.items() if value is not None}
    return _traced(name, None, {**given, **_ours(attributes)})


def _ours(attributes: Mapping[str, Attribute]) -> dict[str, Attribute]:
    return {f"agboss.{key}": value for key, value in attributes.items() if value is not None}


@contextmanager
def _traced(name: str, redact: str | None, attributes: dict[str, Attribute]) -> Iterator[Span]:
    with _TRACER.start_as_current_span(
        name,
        attributes=attributes,
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
