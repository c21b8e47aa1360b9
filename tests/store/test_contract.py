"""The store contract: every store implementation passes these, one behaviour each."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agboss import (
    ComponentRecord,
    ExecutionStatus,
    LeaseLostError,
    PauseAnswer,
    PauseAnswerer,
    PauseAnswerRecord,
    PauseRecord,
    PauseResolution,
    PauseStatus,
    StepRecord,
    ThreadOwnerError,
    ToolCallApprovalAskDto,
    ToolCallApprovalDecisionDto,
)
from agboss.store import ExecutionRow, SqliteStore, StepEntry, Store
from tests.stores import STORE_KINDS, made_store

NOW = datetime(2026, 1, 1, tzinfo=UTC)
TTL = timedelta(seconds=30)


@pytest.fixture(params=STORE_KINDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    async with made_store(request.param, tmp_path) as made:
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


def pause(pause_id: str = "p" * 32, key: str = "1:a#0/turn-0/tool-0") -> PauseRecord:
    step = StepRecord(
        kind="tool-run",
        key=f"ex-1/{key}",
        agent=ComponentRecord(kind="agent", name="office-agent"),
        node_id="1:office-agent",
    )
    return PauseRecord(
        pause_id=pause_id,
        tenant_id="acme",
        step_key=key,
        root_execution_id="ex-1",
        execution_id="ex-1",
        seq=0,
        status=PauseStatus.PENDING,
        resolution=None,
        is_sent=False,
        answered_by=PauseAnswerer.THREAD_OWNER,
        channel="expense-approval-channel",
        agent="office-agent",
        ask=ToolCallApprovalAskDto(tool="book-expense-tool", call_id="c1", arguments={}),
        step=step,
        answer=None,
        asked_at=NOW,
        resolved_at=None,
    )


ANSWER = PauseAnswer(decision=ToolCallApprovalDecisionDto(approved=True), responder="u")


async def test_pauses_are_numbered_in_the_order_asked_and_found_by_step(store: Store) -> None:
    fence = await store.executions.begin(row(), holder="a", lease_until=NOW + TTL)
    first = await store.pauses.insert(fence, pause("a" * 32, "k1"))
    second = await store.pauses.insert(fence, pause("b" * 32, "k2"))
    assert (first.seq, second.seq) == (1, 2)
    found = await store.pauses.find_by_step("ex-1", "k2")
    assert found is not None
    assert found.pause_id == "b" * 32


async def test_pending_to_resolved_happens_once(store: Store) -> None:
    fence = await store.executions.begin(row(), holder="a", lease_until=NOW + TTL)
    await store.pauses.insert(fence, pause())

    async def resolve() -> PauseRecord | None:
        return await store.pauses.resolve(
            "acme",
            "p" * 32,
            status=PauseStatus.RESOLVED,
            resolution=PauseResolution.REPLIED,
            answer=ANSWER,
            now=NOW,
        )

    first, second = await resolve(), await resolve()
    assert first is not None
    assert first.status is PauseStatus.RESOLVED
    assert first.answer == ANSWER
    assert second is None
    assert (
        await store.pauses.cancel_by_tenant_id_and_pause_id(
            "acme", "p" * 32, resolution=PauseResolution.CANCELLED, now=NOW
        )
        is None
    )


async def test_pending_to_cancelled_happens_once_and_reports_is_sent(store: Store) -> None:
    fence = await store.executions.begin(row(), holder="a", lease_until=NOW + TTL)
    await store.pauses.insert(fence, pause())
    assert await store.pauses.mark_sent("acme", "p" * 32) is PauseStatus.PENDING
    closed = await store.pauses.cancel_by_tenant_id_and_pause_id(
        "acme", "p" * 32, resolution=PauseResolution.WITHDRAWN, now=NOW
    )
    assert closed is not None
    assert closed.is_sent
    assert closed.resolution is PauseResolution.WITHDRAWN
    assert (
        await store.pauses.cancel_by_tenant_id_and_pause_id(
            "acme", "p" * 32, resolution=PauseResolution.CANCELLED, now=NOW
        )
        is None
    )


async def test_a_pause_is_found_only_under_its_own_tenant(store: Store) -> None:
    fence = await store.executions.begin(row(), holder="a", lease_until=NOW + TTL)
    await store.pauses.insert(fence, pause())
    assert await store.pauses.find_by_tenant_id_and_pause_id("other", "p" * 32) is None


async def test_delete_resolved_before_keeps_pending_and_resolved_pauses(store: Store) -> None:
    fence = await store.executions.begin(row(), holder="a", lease_until=NOW + TTL)
    for index, key in enumerate(["pending", "resolved", "taken", "cancelled"]):
        await store.pauses.insert(fence, pause(str(index) * 32, key))
    await store.pauses.resolve(
        "acme",
        "1" * 32,
        status=PauseStatus.RESOLVED,
        resolution=PauseResolution.REPLIED,
        answer=ANSWER,
        now=NOW,
    )
    await store.pauses.resolve(
        "acme",
        "2" * 32,
        status=PauseStatus.TAKEN,
        resolution=PauseResolution.DECIDED,
        answer=ANSWER,
        now=NOW,
    )
    await store.pauses.cancel_by_tenant_id_and_pause_id(
        "acme", "3" * 32, resolution=PauseResolution.CANCELLED, now=NOW
    )
    assert await store.pauses.delete_resolved_before(NOW) == 0
    assert await store.pauses.delete_resolved_before(NOW + timedelta(seconds=1)) == 2
    left = await store.pauses.find_by_root("ex-1", tuple(PauseStatus))
    assert [p.status for p in left] == [PauseStatus.PENDING, PauseStatus.RESOLVED]


async def test_an_audit_entry_is_written_once_per_pause(store: Store) -> None:
    fence = await store.executions.begin(row(), holder="a", lease_until=NOW + TTL)
    made = await store.pauses.insert(fence, pause())
    entry = PauseAnswerRecord.of(made, PauseResolution.REPLIED, NOW, ANSWER)
    await store.records.save_pause_answer("acme", "ex-1", entry)
    await store.records.save_pause_answer(
        "acme", "ex-1", PauseAnswerRecord.of(made, PauseResolution.CANCELLED, NOW, None)
    )
    assert await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
        "acme", "ex-1"
    ) == [entry]


async def test_a_sqlite_file_made_before_a_column_was_added_gets_it(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "old.db"
    old = sqlite3.connect(path)
    old.execute(
        "CREATE TABLE pauses (pause_id TEXT, tenant_id TEXT, step_key TEXT, "
        "root_execution_id TEXT, execution_id TEXT, seq INTEGER, status TEXT, resolution TEXT, "
        "is_sent INTEGER, answered_by TEXT, channel TEXT, agent TEXT, ask_json TEXT, "
        "step_json TEXT, answer_json TEXT, asked_at INTEGER, resolved_at INTEGER, "
        "PRIMARY KEY (tenant_id, pause_id))"
    )
    old.commit()
    old.close()
    store = SqliteStore(path)
    await store.open()
    try:
        assert await store.pauses.find_by_root("ex-1", (PauseStatus.PENDING,)) == []
    finally:
        await store.close()
