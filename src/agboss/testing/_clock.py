"""`TestClock`: a clock that moves only when a test tells it to, running what came due."""

from __future__ import annotations

import asyncio
import contextvars
import heapq
import itertools
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

__all__ = ["TestClock"]

_ORIGIN: contextvars.ContextVar[object | None] = contextvars.ContextVar(
    "agboss_test_clock_origin", default=None
)
"""The due callback a timer was set from (the tasks that callback starts inherit it)."""

_STEP_GRACE = 0.25
"""Seconds of real time a due callback is waited for before the later timers it may be
waiting on are fired (a sweep doing real I/O ends well within it)."""

_PARKED_AFTER = 2.0
"""Seconds of real time a callback that waits on a timer past the target is waited for before
the advance returns without it (it goes on running; a later advance fires its timer)."""


class _Timer:
    __slots__ = ("callback", "cancelled", "future", "origin", "task", "when")

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
        self.origin = _ORIGIN.get()
        self.task: asyncio.Task[object] | None = (
            asyncio.current_task() if future is not None else None
        )

    def cancel(self) -> None:
        self.cancelled = True


class TestClock:
    """A clock for tests: ``now()`` stands still until `advance` moves it.

    `advance` runs, in time order, every timer and wakes every ``sleep`` that came due, so a
    test can move a day ahead and see the recovery sweep, lease expiries and deadlines happen;
    `jump` moves at once and runs each due timer once (a month without a sweep every 30 s).

    A due callback runs as a task, as the event loop would run it: the advance waits for it to
    end, but goes on firing the timers that come due meanwhile (a callback cut off by a
    timeout it set ends), and leaves running one that waits on a timer past the target.

    Args:
        start: The starting time; 2026-01-01 UTC by default.
    """

    __test__ = False  # not a test class, whatever pytest thinks of its name

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._timers: list[tuple[datetime, int, _Timer]] = []
        self._order = itertools.count()
        self._running: dict[asyncio.Task[None], object] = {}
        """Callbacks running as tasks, with the origin their timers carry."""
        self._errors: list[BaseException] = []

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
        (``at_their_time``) or at ``target`` from the start; raises the first error a callback
        raised."""
        if not at_their_time:
            self._now = target
        while True:
            if self._timers and self._timers[0][0] <= target:
                when, _, timer = heapq.heappop(self._timers)
                if timer.cancelled:
                    continue
                self._now = max(self._now, when)
                if timer.callback is not None:
                    self._start(timer.callback)
                elif timer.future is not None and not timer.future.done():
                    timer.future.set_result(None)
                    await self._wait_for_sleeper(timer.task)
                await _let_woken_tasks_run()
                await self._wait_for_callbacks(target, grace=_STEP_GRACE)
            elif not self._running or not await self._wait_for_callbacks(
                target, grace=_PARKED_AFTER, only_parked=True
            ):
                break
        self._now = target
        await _let_woken_tasks_run()
        if self._errors:
            error, self._errors = self._errors[0], []
            raise error

    def _start(self, callback: Callable[[], Awaitable[None]]) -> None:
        """Runs a due callback as a task of its own, as the event loop runs a timer's."""
        origin = object()
        context = contextvars.copy_context()
        context.run(_ORIGIN.set, origin)

        async def run() -> None:
            await callback()

        task = asyncio.get_running_loop().create_task(run(), context=context)
        self._running[task] = origin
        task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[None]) -> None:
        self._running.pop(task, None)
        if not task.cancelled() and task.exception() is not None:
            self._errors.append(task.exception())  # type: ignore[arg-type]

    async def _wait_for_sleeper(self, task: asyncio.Task[object] | None) -> None:
        """Lets a woken ``sleep``'s task run until it ends or sleeps on this clock again (a
        lease's keeper renews before the clock moves on), for up to a grace of real time."""
        if task is None:
            return
        started = time.monotonic()
        while not task.done() and time.monotonic() - started <= _STEP_GRACE:
            if any(timer.task is task and not timer.cancelled for _, _, timer in self._timers):
                return
            await asyncio.wait({task}, timeout=0.002)

    def _due(self, target: datetime) -> bool:
        return bool(self._timers) and self._timers[0][0] <= target

    def _parked(self, target: datetime) -> bool:
        """Whether every running callback waits on a timer past ``target``: a timeout it set
        (``call_at``), or a ``sleep`` of its own task."""
        later = {
            timer.origin
            for when, _, timer in self._timers
            if when > target
            and not timer.cancelled
            and (timer.callback is not None or timer.task in self._running)
        }
        return all(origin in later for origin in self._running.values())

    async def _wait_for_callbacks(
        self, target: datetime, *, grace: float, only_parked: bool = False
    ) -> bool:
        """Waits for the running callbacks to end (``True``). After ``grace`` seconds of real
        time it stops (``False``) — with ``only_parked``, once a timer comes due (``True``) or
        every callback waits on a timer past ``target``; it is doing real work until then."""
        started = time.monotonic()
        while self._running:
            if only_parked and self._due(target):
                return True
            if time.monotonic() - started > grace and (not only_parked or self._parked(target)):
                return False
            await asyncio.wait(set(self._running), timeout=0.005)
        return True


async def _let_woken_tasks_run() -> None:
    # Lets the tasks a timer woke run until they wait again.
    for _ in range(20):
        await asyncio.sleep(0)
