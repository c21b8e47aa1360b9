"""Running a handler's work under a timeout on the application's Clock."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from datetime import timedelta
from typing import TypeVar

from agboss.clock import Clock
from agboss.context import AbortSignal

__all__ = ["run_within"]

T = TypeVar("T")


async def run_within(
    clock: Clock, work: Awaitable[T], limit: timedelta | None, signal: AbortSignal, label: str
) -> T:
    """Awaits ``work``; at ``limit`` on the clock, fires ``signal`` and cuts the work off.

    Raises:
        TimeoutError: The timeout passed first.
    """
    if limit is None:
        return await work
    task = asyncio.ensure_future(work)

    async def expire() -> None:
        signal.abort(f"{label} timed out after {limit}")

    timer = clock.call_at(clock.now() + limit, expire)
    waiter = asyncio.ensure_future(signal.wait())
    try:
        done, _ = await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        task.cancel()  # the caller was cancelled: so is its work
        raise
    finally:
        timer.cancel()
        waiter.cancel()
    if task in done:
        return task.result()
    task.cancel()
    raise TimeoutError(f"{label} timed out after {limit}")
