"""The test clock: `advance` runs each timer at its own time, `jump` runs each due one once."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

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


async def test_advance_fires_the_timers_a_running_callback_waits_on() -> None:
    clock, seen = TestClock(), []

    async def waits_for_its_timeout() -> None:
        cut_off = asyncio.Event()

        async def expire() -> None:
            cut_off.set()

        clock.call_at(clock.now() + timedelta(minutes=5), expire)
        await cut_off.wait()  # inline, this would hold the clock at minute 1 for good
        seen.append(clock.now())

    start = clock.now()
    clock.call_at(start + timedelta(minutes=1), waits_for_its_timeout)
    await asyncio.wait_for(clock.advance(timedelta(minutes=10)), 10)
    assert seen == [start + timedelta(minutes=6)]


async def test_advance_leaves_running_a_callback_that_waits_past_its_target() -> None:
    clock, seen = TestClock(), []

    async def sleeps_an_hour() -> None:
        await clock.sleep(timedelta(hours=1))
        seen.append(clock.now())

    start = clock.now()
    clock.call_at(start + timedelta(minutes=1), sleeps_an_hour)
    await asyncio.wait_for(clock.advance(timedelta(minutes=2)), 10)
    assert seen == []
    await clock.advance(timedelta(hours=1))
    assert seen == [start + timedelta(hours=1, minutes=1)]


async def test_advance_lets_a_woken_sleeper_run_until_it_sleeps_again() -> None:
    clock, ticks = TestClock(), []

    async def ticker() -> None:
        while True:
            await clock.sleep(timedelta(seconds=10))
            await asyncio.to_thread(lambda: None)  # real I/O between its sleeps
            ticks.append(clock.now())

    task = asyncio.ensure_future(ticker())
    await asyncio.sleep(0)
    await clock.advance(timedelta(minutes=1))
    task.cancel()
    assert len(ticks) == 6


async def test_advance_raises_what_a_due_callback_raised() -> None:
    clock = TestClock()

    async def fails() -> None:
        raise ValueError("broken")

    clock.call_at(clock.now() + timedelta(seconds=1), fails)
    with pytest.raises(ValueError, match="broken"):
        await clock.advance(timedelta(seconds=2))
