"""Instances that hear each other: an answer left unmoved is moved by another instance at once,
and a caller waiting for a lease goes on when it is freed — without a sweep, without polling.

Every app here runs on a test clock that never advances, so no sweep runs by itself: what moves
a tree is what an instance heard.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from psycopg import AsyncConnection

from agboss import App, ExecutionOutput, ExecutionStatus, FunctionProvider
from agboss.engine.trees import _wakeups
from agboss.store.postgres._signals import PostgresSignals
from agboss.store.writes import AcquireLease, ReleaseLease, write_one
from agboss.testing import TestClock
from tests.apps.multi_app import ItemDto, ItemsApplication, ItemsDto, ItemsWorkflow, model
from tests.stores import POSTGRES_URL, STORE_KINDS, needs_postgres, store_url
from tests.waiting import eventually

APPROVE = {"approved": True}


@pytest.fixture(autouse=True)
def _runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGBOSS_TEST_RUNS", str(tmp_path / "runs.txt"))


@asynccontextmanager
async def instances(
    kind: str, folder: Path, count: int, *, recovering: tuple[bool, ...] = (), **options: Any
) -> AsyncIterator[list[App]]:
    """``count`` instances of the items application on one fresh store, on one test clock
    (``recovering``: each one's ``recovers``, all by default)."""
    clock = TestClock()
    async with store_url(kind, folder) as url:
        apps: list[App] = []
        try:
            for index in range(count):
                apps.append(
                    await App.create(
                        ItemsApplication,
                        store=url,
                        providers=[FunctionProvider(model)],
                        clock=clock,
                        recovers=recovering[index] if recovering else True,
                        **options,
                    )
                )
            yield apps
        finally:
            for app in apps:
                await app.close()


async def paused(app: App, items: int = 1) -> ExecutionOutput:
    listed = ItemsDto(items=[ItemDto(item_id=f"i{index}") for index in range(items)])
    output = await app.execute(ItemsWorkflow, listed, owner_id="u")
    assert output.status is ExecutionStatus.PAUSED
    return output


async def status_of(app: App, execution_id: str) -> ExecutionStatus:
    return (await app.get(execution_id)).status


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_an_answer_recorded_without_moving_is_moved_by_another_instance_that_hears_it(
    kind: str, tmp_path: Path
) -> None:
    async with instances(kind, tmp_path, 2) as (mover, recorder):
        output = await paused(mover)
        receipt = await recorder.answer(
            output.pending[0].pause_id, decision=APPROVE, owner_id="u", move=False
        )
        assert receipt.execution_id == output.execution_id

        async def completed() -> bool:
            return await status_of(mover, output.execution_id) is ExecutionStatus.COMPLETED

        await eventually(completed, "the other instance moving the answered tree")


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_every_instance_that_hears_an_answer_tries_and_one_moves_it_once(
    kind: str, tmp_path: Path
) -> None:
    async with instances(kind, tmp_path, 3) as (first, _another_mover, recorder):
        output = await paused(first, items=2)
        for pause in output.pending:
            await recorder.answer(pause.pause_id, decision=APPROVE, owner_id="u", move=False)

        async def completed() -> bool:
            return await status_of(first, output.execution_id) is ExecutionStatus.COMPLETED

        await eventually(completed, "an instance moving the answered tree")
        lines = (tmp_path / "runs.txt").read_text().splitlines()
        assert sorted(line.split()[1] for line in lines if line.startswith("tool")) == [
            "i0",
            "i1",
        ]  # each item's tool once, whichever instance took the tree
        assert sum(line.startswith("join") for line in lines) == 1


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_an_instance_does_not_move_an_answer_it_chose_not_to_move(
    kind: str, tmp_path: Path
) -> None:
    async with instances(kind, tmp_path, 1) as (app,):
        output = await paused(app)
        await app.answer(output.pending[0].pause_id, decision=APPROVE, owner_id="u", move=False)
        wakeups = app._engine.wakeups  # what the instance heard
        await eventually(lambda: wakeups.heard_count >= 1, "the instance hearing its own answer")
        for _ in range(5):
            await asyncio.sleep(0)  # anything it would start has started
        assert await status_of(app, output.execution_id) is ExecutionStatus.PAUSED
        assert (await app.recover())[0].status is ExecutionStatus.COMPLETED  # the sweep moves it


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_an_instance_that_does_not_recover_leaves_an_answer_it_hears_of_to_the_others(
    kind: str, tmp_path: Path
) -> None:
    async with instances(kind, tmp_path, 2, recovering=(False, True)) as (idle, recorder):
        output = await paused(recorder)
        await recorder.answer(
            output.pending[0].pause_id, decision=APPROVE, owner_id="u", move=False
        )
        wakeups = idle._engine.wakeups
        await eventually(lambda: wakeups.heard_count >= 1, "the idle instance hearing it")
        for _ in range(5):
            await asyncio.sleep(0)
        assert await status_of(idle, output.execution_id) is ExecutionStatus.PAUSED


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_caller_waiting_for_a_held_lease_goes_on_when_it_is_freed(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A lease of a minute: a waiter that looked again only by itself would wait 20 seconds.
    options = {"lease_ttl": timedelta(minutes=1), "resume_timeout": timedelta(seconds=40)}
    looks = 0
    acquire_lease = _wakeups.acquire_lease

    async def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal looks
        looks += 1
        return await acquire_lease(*args, **kwargs)

    monkeypatch.setattr(_wakeups, "acquire_lease", counted)
    async with instances(kind, tmp_path, 2, **options) as (holder, answerer):
        output = await paused(holder)
        root = output.execution_id
        held = await write_one(holder.store, AcquireLease(root, "another", timedelta(minutes=1)))
        assert held is not None
        resuming = asyncio.ensure_future(
            answerer.resume(output.pending[0].pause_id, decision=APPROVE, owner_id="u")
        )
        await eventually(lambda: looks >= 1, "the answer waiting for the lease")
        await asyncio.sleep(0.2)
        assert not resuming.done()  # it waits for the holder
        await holder.store.write([ReleaseLease(held.fence)], fence=held.fence)
        resumed = await asyncio.wait_for(resuming, 10)
        assert resumed.status is ExecutionStatus.COMPLETED
        if kind == "postgres":  # heard from every instance: it looked once, and once woken
            assert looks == 2


@needs_postgres
async def test_a_listening_connection_cut_connects_again_and_what_it_missed_is_moved(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with instances("postgres", tmp_path, 2) as (mover, recorder):
        output = await paused(mover)
        listening = mover.store.signals
        assert isinstance(listening, PostgresSignals)
        channel = listening.channel
        assert POSTGRES_URL is not None
        async with await AsyncConnection.connect(POSTGRES_URL, autocommit=True) as admin:
            cut = await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = %s",
                (f'LISTEN "{channel}"',),
            )
            assert len(await cut.fetchall()) == 2  # both instances' listeners
        # Said while the mover may not listen yet: it reads what it missed once back.
        await recorder.answer(
            output.pending[0].pause_id, decision=APPROVE, owner_id="u", move=False
        )

        async def completed() -> bool:
            return await status_of(mover, output.execution_id) is ExecutionStatus.COMPLETED

        await eventually(completed, "the mover moving the answer after it listened again")
        await eventually(lambda: listening.connections == 2, "the listener connecting again")
        assert "store.listen-lost" in caplog.text


@needs_postgres
async def test_an_answer_an_instance_of_an_earlier_build_announces_as_due_is_moved(
    tmp_path: Path,
) -> None:
    # Builds run side by side in a deploy: the build before this one called the signal
    # `due`; heard from another instance, it moves the tree as `answered` does.
    async with instances("postgres", tmp_path, 1) as (app,):
        output = await paused(app)
        await app.answer(output.pending[0].pause_id, decision=APPROVE, owner_id="u", move=False)
        listening = app.store.signals
        assert isinstance(listening, PostgresSignals)
        assert POSTGRES_URL is not None
        earlier = json.dumps(["due", output.execution_id, "an-instance-of-the-earlier-build"])
        async with await AsyncConnection.connect(POSTGRES_URL, autocommit=True) as admin:
            await admin.execute("SELECT pg_notify(%s, %s)", (listening.channel, earlier))

        async def completed() -> bool:
            return await status_of(app, output.execution_id) is ExecutionStatus.COMPLETED

        await eventually(completed, "the instance moving the answer the earlier build announced")
