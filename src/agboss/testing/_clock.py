"""`TestClock`: a clock that moves only when a test tells it to, running what came due."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

__all__ = ["TestClock"]


class _Timer:
    __slots__ = ("callback", "cancelled", "future", "when")

    def __init__(
        self,
        when: datetime,
        callback: Callable[[], Awaitable[None]] | None,
        future: asyncio.Future[None] | None,
    ) -> None:
        self.when = when
        self.callback = callback
        self.future = future
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class TestClock:
    """A clock for tests: ``now()`` stands still until `advance` moves it.

    `advance` runs, in time order, every timer and wakes every ``sleep`` that came due, so a
    test can move a day ahead and see the recovery sweep, lease expiries and deadlines happen;
    `jump` moves at once and runs each due timer once (a month without a sweep every 30 s).

    Args:
        start: The starting time; 2026-01-01 UTC by default.
    """

    __test__ = False  # not a test class, whatever pytest thinks of its name

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._timers: list[tuple[datetime, int, _Timer]] = []
        self._order = itertools.count()

    def now(self) -> datetime:
        return self._now

    def _push(self, timer: _Timer) -> _Timer:
        heapq.heappush(self._timers, (timer.when, next(self._order), timer))
        return timer

    async def sleep(self, delay: timedelta) -> None:
        if delay <= timedelta(0):
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        timer = self._push(_Timer(self._now + delay, None, future))
        try:
            await future
        finally:
            timer.cancelled = True

    def call_at(self, when: datetime, callback: Callable[[], Awaitable[None]]) -> _Timer:
        return self._push(_Timer(when, callback, None))

    async def advance(self, delta: timedelta) -> None:
        """Moves the clock by ``delta``, running everything that comes due, in time order."""
        await self._run_due(self._now + delta, at_their_time=True)

    async def jump(self, delta: timedelta) -> None:
        """Moves the clock by ``delta`` at once, as time passes for a process that was
        suspended: every timer that came due runs once, at the new time, in the order it was
        due — a recurring one (the recovery sweep) re-arms from the new time and does not run
        again. `advance` instead runs each timer at its own time; jump a month in one step."""
        await self._run_due(self._now + delta, at_their_time=False)

    async def _run_due(self, target: datetime, *, at_their_time: bool) -> None:
        """Runs the timers due by ``target`` in time order, the clock at each one's time
        (``at_their_time``) or at ``target`` from the start."""
        if not at_their_time:
            self._now = target
        while self._timers and self._timers[0][0] <= target:
            when, _, timer = heapq.heappop(self._timers)
            if timer.cancelled:
                continue
            self._now = max(self._now, when)
            if timer.callback is not None:
                await timer.callback()
            elif timer.future is not None and not timer.future.done():
                timer.future.set_result(None)
            await _let_woken_tasks_run()
        self._now = target
        await _let_woken_tasks_run()


async def _let_woken_tasks_run() -> None:
    # Lets the tasks a timer woke run until they wait again.
    for _ in range(20):
        await asyncio.sleep(0)
