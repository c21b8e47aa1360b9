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


class _TaskTimer:
    def __init__(self, task: asyncio.Task[None]) -> None:
        self._task = task

    def cancel(self) -> None:
        self._task.cancel()


class SystemClock:
    """The wall clock, with timers on the running event loop."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep(self, delay: timedelta) -> None:
        await asyncio.sleep(max(delay.total_seconds(), 0.0))

    def call_at(self, when: datetime, callback: Callable[[], Awaitable[None]]) -> TimerHandle:
        async def run() -> None:
            await self.sleep(when - self.now())
            await callback()

        return _TaskTimer(asyncio.get_running_loop().create_task(run()))
