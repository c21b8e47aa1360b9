"""The wall clock moved on: a trial's world once what it waits for is due, without the wait.

The harness's phases that wait on time (a retry's ``Retry-After``, a deadline, a ladder's step)
used to sleep until it was due, in every trial. Their processes run on `AheadClock` instead,
all with the one offset the trial chose, so the time they write and read is continuous across
the killed process and the one that recovers. A test clock would not do: it stands still until
advanced, and a pass's lease keeper and timers need time that flows.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

from agboss import Clock, SystemClock

__all__ = ["AheadClock", "clock_ahead_by"]


class _Timer:
    """A callback on the event loop's timer, then a task that `cancel` cuts off too."""

    def __init__(self, delay: float, callback: Callable[[], Awaitable[None]]) -> None:
        self._callback = callback
        self._task: asyncio.Task[None] | None = None
        self._handle = asyncio.get_running_loop().call_later(delay, self._fire)

    def _fire(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        await self._callback()

    def cancel(self) -> None:
        self._handle.cancel()
        if self._task is not None:
            self._task.cancel()


class AheadClock:
    """The wall clock plus a fixed number of seconds (not a `SystemClock`: the store is given
    this time, not the database's)."""

    def __init__(self, seconds: float) -> None:
        self._ahead = timedelta(seconds=seconds)

    def now(self) -> datetime:
        return datetime.now(UTC) + self._ahead

    async def sleep(self, delay: timedelta) -> None:
        await asyncio.sleep(max(delay.total_seconds(), 0.0))

    def call_at(self, when: datetime, callback: Callable[[], Awaitable[None]]) -> _Timer:
        return _Timer(max((when - self.now()).total_seconds(), 0.0), callback)


def clock_ahead_by(seconds: float) -> Clock:
    """The system clock when ``seconds`` is 0, else the wall clock that far ahead."""
    return AheadClock(seconds) if seconds > 0 else SystemClock()
