"""The wall clock moved on: a trial's world once what it waits for is due, without the wait.

The harness's phases that wait on time (a retry's ``Retry-After``, a deadline, a ladder's step)
used to sleep until it was due, in every trial. Their processes run on `AheadClock` instead,
all with the one offset the trial chose, so the time they write and read is continuous across
the killed process and the one that recovers. A test clock would not do: it stands still until
advanced, and a pass's lease keeper and timers need time that flows.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

from agboss.clock import Clock, SystemClock, TimerHandle

__all__ = ["AheadClock", "clock_ahead_by"]


class AheadClock:
    """The wall clock plus a fixed number of seconds: the system clock's sleeps and timers,
    its time moved on (not a `SystemClock` itself: the store is given this time, not the
    database's)."""

    def __init__(self, seconds: float) -> None:
        self._ahead = timedelta(seconds=seconds)
        self._wall = SystemClock()

    def now(self) -> datetime:
        return self._wall.now() + self._ahead

    async def sleep(self, delay: timedelta) -> None:
        await self._wall.sleep(delay)

    def call_at(self, when: datetime, callback: Callable[[], Awaitable[None]]) -> TimerHandle:
        return self._wall.call_at(when - self._ahead, callback)


def clock_ahead_by(seconds: float) -> Clock:
    """The system clock when ``seconds`` is 0, else the wall clock that far ahead."""
    return AheadClock(seconds) if seconds > 0 else SystemClock()
