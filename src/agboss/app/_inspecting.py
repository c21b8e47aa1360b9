"""Opening a build to look at it, not to run it: a deploy check opens the next build on the
production store before traffic moves to it. Within `inspecting`, `App.create` assembles the
application and opens its store as always, and then moves nothing (no sweep, no answer heard
of, no word in the store that it serves) and refuses nothing for what waits (the check reports
it instead). A function that makes the application's `App` (``--app module:make_app``) is
called as it is, within it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["inspected", "inspecting"]

_INSPECTING: ContextVar[bool] = ContextVar("agboss_inspecting", default=False)


@contextmanager
def inspecting() -> Iterator[None]:
    """Within it, `App.create` opens a build to be looked at (see the module's docstring)."""
    token = _INSPECTING.set(True)
    try:
        yield
    finally:
        _INSPECTING.reset(token)


def inspected() -> bool:
    """Whether `App.create` runs within `inspecting`."""
    return _INSPECTING.get()
