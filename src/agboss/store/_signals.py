"""Signals within one process: a hub that hands what a store announced to every hearer.

The SQLite store announces through a hub shared by every store on the same file in the
process (`hub_of`); the PostgreSQL store feeds its hub from its listening connection. A hearer
is called on the event loop it listened from, soon after, never inside the announcing call.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from agboss.store.protocol import Hearer, Signal

__all__ = ["SignalHub", "hub_of"]


@dataclass(frozen=True, slots=True, eq=False)
class _Listening:
    hearer: Hearer
    loop: asyncio.AbstractEventLoop


class SignalHub:
    """Hands signals to the hearers that listen, each on its own event loop.

    Args:
        reaches_every_instance: Whether what is published here is everything any instance on
            the store announced (`agboss.store.protocol.Signals.reaches_every_instance`).
    """

    def __init__(self, *, reaches_every_instance: bool) -> None:
        self._reaches = reaches_every_instance
        self._listening: list[_Listening] = []
        self._lock = threading.Lock()  # stores on one file may run on several threads' loops

    @property
    def reaches_every_instance(self) -> bool:
        return self._reaches

    async def listen(self, hearer: Hearer) -> Callable[[], None]:
        listening = _Listening(hearer, asyncio.get_running_loop())
        with self._lock:
            self._listening = [*self._listening, listening]

        def stop() -> None:
            with self._lock:
                self._listening = [each for each in self._listening if each is not listening]

        return stop

    def publish(self, signals: Iterable[Signal]) -> None:
        """Hands ``signals`` to every hearer (from any thread)."""
        said = tuple(signals)
        if said:
            self._each(lambda hearer: _hear_all(hearer, said))

    def missed(self) -> None:
        """Tells every hearer that signals may have been lost."""
        self._each(lambda hearer: hearer.missed())

    def _each(self, call: Callable[[Hearer], None]) -> None:
        try:
            current: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            current = None
        for listening in self._listening:
            if listening.loop is current:
                current.call_soon(call, listening.hearer)  # no wake-up of the loop to pay
                continue
            try:
                listening.loop.call_soon_threadsafe(call, listening.hearer)
            except RuntimeError:  # its loop closed: it can hear nothing more
                continue


def _hear_all(hearer: Hearer, signals: tuple[Signal, ...]) -> None:
    for signal in signals:
        hearer.heard(signal)


_HUBS: weakref.WeakValueDictionary[Path, SignalHub] = weakref.WeakValueDictionary()
_HUBS_LOCK = threading.Lock()


def hub_of(path: Path) -> SignalHub:
    """The hub of the stores on one SQLite file in this process (made on first use; kept
    while a store holds it)."""
    try:
        key = path.resolve()
    except OSError:  # an unreadable path: this store hears itself, and the sweep does the rest
        return SignalHub(reaches_every_instance=False)
    with _HUBS_LOCK:
        hub = _HUBS.get(key)
        if hub is None:
            hub = _HUBS[key] = SignalHub(reaches_every_instance=False)
        return hub
