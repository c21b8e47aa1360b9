"""What a test application's components did, owned by the test that runs them.

A test application declares one `Recorder` subclass of its own lists and registers it
(``@application(dependencies=[provide(DeskRecorder)])``); its components take it in ``deps``,
most through `Records`. The ``env`` fixture makes a fresh one for every test, shared by the
test's instances (``test_with(dependencies=[provide(DeskRecorder, instance=...)])``), and gives
it to the test as the ``recorded`` fixture: nothing one test records is seen by the next, and
no module keeps a list a test must remember to clear.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from agboss import Provide, provide
from agboss.components import ApplicationSpec, spec_of

__all__ = ["Recorder", "Records", "recorder_for", "recording"]


class Recorder:
    """The base of a test application's recorder: a dataclass of the lists its components fill.

    A subclass's fields all have defaults, so the container and the fixture make it with no
    arguments.
    """


R = TypeVar("R", bound=Recorder)


class Records(Generic[R]):
    """A component that only records: its one dependency is its application's recorder.

    List the recorder in the component's ``deps``: ``deps=[DeskRecorder]``.
    """

    def __init__(self, recorder: R) -> None:
        self.recorded = recorder


def recorder_for(application: type[Any]) -> Any:
    """A fresh recorder of the type ``application`` registers; ``None`` if it registers none.

    Typed ``Any``: a test names the recorder type it expects where it takes the value.
    """
    spec = spec_of(application, ApplicationSpec)
    for registered in () if spec is None else spec.dependencies:
        if isinstance(registered.provided, type) and issubclass(registered.provided, Recorder):
            return registered.provided()
    return None


def recording(recorder: Recorder | None) -> list[Provide]:
    """``test_with``'s ``dependencies`` that make every instance record into ``recorder`` (none
    for ``None``): for a test that opens its instances itself (a second build, a reopened
    file)."""
    return [] if recorder is None else [provide(type(recorder), instance=recorder)]
