"""The store contract: every store implementation passes these, one behaviour each."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agboss import ExecutionStatus, LeaseLostError, ThreadOwnerError
from agboss.store import ExecutionRow, SqliteStore, StepEntry, Store

NOW = datetime(2026, 1, 1, tzinfo=UTC)
TTL = timedelta(seconds=30)


@pytest.fixture(params=["sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    made: Store = SqliteStore(tmp_path / "contract.db")
    await made.open()
    yield made
    await made.close()


def row(
    execution_id: str = "ex-1", *, thread_id: str = "th-1", owner_id: str = "u"
) -> ExecutionRow:
    return ExecutionRow(
        execution_id=execution_id,
        root_execution_id=execution_id,
        parent_execution_id=None,
        tenant_id="acme",
        thread_id=thread_id,
        owner_id=owner_id,
        workflow="office-workflow",
        workflow_version="1",
        status=ExecutionStatus.RUNNING,
        input_json='{"text": "x"}',
        output_json=None,
        error=None,
        created_at=NOW,
        updated_at=NOW,
    )


def entry(key: str, seq: int) -> StepEntry:
    return StepEntry(key=key, kind="model-call", result_json="{}", record_json="{}", seq=seq)


async def test_begin_creates_the_execution_its_thread_and_a_held_lease(store: Store) -> None:
    fence = await store.executions.begin(row(), holder="a", lease_until=NOW + TTL)
    assert fence.epoch == 1
    found = await store.executions.find("acme", "ex-1")
    assert found is not None
    assert found.created_at == NOW
    assert await store.executions.find("other-tenant", "ex-1") is None
    thread = await store.executions.find_thread("acme", "th-1")
    assert thread is not None
    assert thread.owner_id == "u"
    assert await store.leases.acquire("ex-1", "b", now=NOW, ttl=TTL) is None


async def test_a_thread_keeps_its_owner(store: Store) -> None:
    await store.executions.begin(row(), holder="a", lease_until=NOW + TTL)
    with pytest.raises(ThreadOwnerError):
        await store.executions.begin(row("ex-2", owner_id="intruder"), holder="a", lease_until=NOW)
    assert await store.executions.find("acme", "ex-2") is None


async def test_an_expired_lease_is_taken_over_with_a_new_epoch(store: Store) -> None:
    first = await store.executions.begin(row(), holder="a", lease_until=NOW + TTL)
    second = await store.leases.acquire("ex-1", "b", now=NOW + TTL, ttl=TTL)
    assert second is not None
    assert second.epoch == first.epoch + 1
    assert not await store.leases.renew(first, now=NOW + TTL, ttl=TTL)
    assert await store.leases.renew(second, now=NOW + TTL, ttl=TTL)


async def test_a_released_lease_is_free_at_once(store: Store) -> None:
    fence = await store.executions.begin(row(), holder="a", lease_until=NOW + TTL)
    await store.leases.release(fence)
    assert await store.leases.acquire("ex-1", "b", now=NOW, ttl=TTL) is not None


async def test_a_holder_that_lost_its_lease_writes_nothing(store: Store) -> None:
    first = await store.executions.begin(row(), holder="a", lease_until=NOW + TTL)
    await store.leases.acquire("ex-1", "b", now=NOW + TTL, ttl=TTL)
    with pytest.raises(LeaseLostError):
        await store.journal.append(first, "ex-1", entry("k", 1), now=NOW)
    with pytest.raises(LeaseLostError):
        await store.executions.finish(
            first, "ex-1", status=ExecutionStatus.COMPLETED, output_json="{}", error=None, now=NOW
        )
    assert await store.journal.load("ex-1") == {}
    found = await store.executions.find("acme", "ex-1")
    assert found is not None
    assert found.status is ExecutionStatus.RUNNING


async def test_the_journal_returns_steps_in_the_order_they_ran(store: Store) -> None:
    fence = await store.executions.begin(row(), holder="a", lease_until=NOW + TTL)
    await store.journal.append(fence, "ex-1", entry("b", 1), now=NOW)
    await store.journal.append(fence, "ex-1", entry("a", 2), now=NOW)
    assert list(await store.journal.load("ex-1")) == ["b", "a"]


async def test_interrupted_executions_are_those_running_with_an_expired_lease(store: Store) -> None:
    fence = await store.executions.begin(row(), holder="a", lease_until=NOW + TTL)
    assert await store.executions.find_interrupted(NOW, 10) == []
    assert await store.executions.find_interrupted(NOW + TTL, 10) == ["ex-1"]
    await store.executions.finish(
        fence, "ex-1", status=ExecutionStatus.COMPLETED, output_json="{}", error=None, now=NOW
    )
    assert await store.executions.find_interrupted(NOW + TTL, 10) == []
