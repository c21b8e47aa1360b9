"""The test clock: `advance` runs each timer at its own time, `jump` runs each due one once."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from agboss.testing import TestClock


def _every_minute(clock: TestClock, seen: list[object]) -> None:
    async def tick() -> None:
        seen.append(clock.now())
        clock.call_at(clock.now() + timedelta(minutes=1), tick)

    clock.call_at(clock.now() + timedelta(minutes=1), tick)


async def test_advance_runs_a_recurring_timer_at_each_of_its_times() -> None:
    clock, seen = TestClock(), []
    start = clock.now()
    _every_minute(clock, seen)
    await clock.advance(timedelta(minutes=3))
    assert seen == [start + timedelta(minutes=minute) for minute in (1, 2, 3)]


async def test_jump_runs_a_due_timer_once_at_the_new_time() -> None:
    clock, seen = TestClock(), []
    start = clock.now()
    _every_minute(clock, seen)
    await clock.jump(timedelta(days=30))
    assert seen == [start + timedelta(days=30)]
    await clock.advance(timedelta(minutes=1))  # re-armed from the new time
    assert seen[-1] == start + timedelta(days=30, minutes=1)


async def test_jump_wakes_a_sleeper_that_came_due() -> None:
    clock, woke = TestClock(), []

    async def sleeper() -> None:
        await clock.sleep(timedelta(hours=1))
        woke.append(clock.now())

    task = asyncio.ensure_future(sleeper())
    await asyncio.sleep(0)
    await clock.jump(timedelta(minutes=59))
    assert woke == []
    await clock.jump(timedelta(minutes=1))
    await task
    assert woke == [clock.now()]
