"""Time, as the application sees it: a `Clock` that tells the time and runs timers.

Everything that depends on time — pause timestamps, retention, the recovery sweep, leases,
tool timeouts — reads the application's Clock, so a test clock can move it on demand.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "SystemClock", "TimerHandle"]


@runtime_checkable
class TimerHandle(Protocol):
    """A scheduled callback that can still be cancelled."""

    def cancel(self) -> None:
        """Cancels the callback if it has not run yet."""


@runtime_checkable
class Clock(Protocol):
    """The application's notion of time."""

    def now(self) -> datetime:
        """The current time, timezone-aware, in UTC."""

    async def sleep(self, delay: timedelta) -> None:
        """Waits until ``delay`` has passed on this clock."""

    def call_at(self, when: datetime, callback: Callable[[], Awaitable[None]]) -> TimerHandle:
        """Runs ``callback`` once this clock reaches ``when``."""


class _LoopTimer:
    """A callback on the event loop's timer: no task until it is due (a pass arms and cancels
    one for its lease each time), then a task that `cancel` cuts off too."""

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


class SystemClock:
    """The wall clock, with timers on the running event loop."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep(self, delay: timedelta) -> None:
        await asyncio.sleep(max(delay.total_seconds(), 0.0))

    def call_at(self, when: datetime, callback: Callable[[], Awaitable[None]]) -> TimerHandle:
        return _LoopTimer(max((when - self.now()).total_seconds(), 0.0), callback)
