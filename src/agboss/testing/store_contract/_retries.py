"""The store contract's retries: a failed tree reopened in place, once per failure, its failure
kept in the history; a child reopened in the generation that reached it; a question asked again
in a new generation beside the one withdrawn."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from agboss.enums import ExecutionStatus, PauseResolution, PauseStatus
from agboss.store.protocol import BranchRow, BranchStatus, Store
from agboss.store.writes import (
    AcquireLease,
    CancelExecutions,
    CancelPause,
    InsertChild,
    InsertPause,
    ReopenExecution,
    ReopenTree,
    RestTree,
    SaveBranch,
    SetExecutionStatus,
    write_one,
)
from agboss.testing.store_contract._support import (
    NOW,
    TTL,
    Contract,
    answer_of,
    make_pause,
    make_row,
)

__all__ = ["RetryContract"]

FAILURE = '{"type": "builtins.ConnectionError", "message": "down"}'
LATER = NOW + timedelta(minutes=5)


class RetryContract(Contract):
    """What every store does when a failed tree is retried (`App.retry`)."""

    async def test_a_failed_root_is_reopened_once_in_its_next_generation(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        failed = SetExecutionStatus("ex-1", ExecutionStatus.FAILED, NOW, error_json=FAILURE)
        await store.write([failed], fence=fence)
        reopened = await write_one(store, ReopenTree("ex-1", 0, "ops", LATER), fence=fence)
        assert reopened is not None
        assert (reopened.status, reopened.generation) == (ExecutionStatus.RUNNING, 1)
        assert (reopened.error_json, reopened.updated_at) == (None, LATER)
        assert await store.executions.find_by_id("ex-1") == reopened
        [retry] = await store.executions.retries("ex-1")
        assert (retry.generation, retry.retried_at, retry.retried_by) == (1, LATER, "ops")
        assert retry.error_json == FAILURE  # the failure it replaced stays in the history
        # Seen in generation 0 by another retry: reopened already, nothing changes.
        assert await write_one(store, ReopenTree("ex-1", 0, "other", LATER), fence=fence) is None
        assert len(await store.executions.retries("ex-1")) == 1
        assert await store.executions.retries("ex-2") == []

    async def test_only_a_failed_root_is_reopened(self, store: Store) -> None:
        fence = await self._begin(store)
        assert await write_one(store, ReopenTree("ex-1", 0, None, LATER), fence=fence) is None
        done = SetExecutionStatus("ex-1", ExecutionStatus.COMPLETED, NOW, output_json="{}")
        await store.write([done], fence=fence)
        assert await write_one(store, ReopenTree("ex-1", 0, None, LATER), fence=fence) is None
        found = await store.executions.find_by_id("ex-1")
        assert found is not None
        assert (found.status, found.generation) == (ExecutionStatus.COMPLETED, 0)
        assert await store.executions.retries("ex-1") == []

    async def test_a_child_closed_in_an_earlier_generation_is_reopened_unless_cancelled(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        root = make_row()
        failed, dropped, fresh = (
            make_row(f"ex-1/2:l#0@{index}", parent=root) for index in range(3)
        )
        await store.write([InsertChild(row) for row in (failed, dropped, fresh)], fence=fence)
        await store.write(
            [
                SetExecutionStatus(failed.execution_id, ExecutionStatus.FAILED, NOW, None, FAILURE),
                SetExecutionStatus("ex-1", ExecutionStatus.FAILED, NOW, error_json=FAILURE),
            ],
            fence=fence,
        )
        await write_one(store, CancelExecutions(dropped.execution_id, NOW))
        await write_one(store, ReopenTree("ex-1", 0, None, LATER), fence=fence)
        for child in (failed, dropped):
            reopen = ReopenExecution(child.execution_id, "ex-1", 1, LATER)
            assert await write_one(store, reopen, fence=fence) is True
            found = await store.executions.find_by_id(child.execution_id)
            assert found is not None
            assert (found.status, found.generation, found.error_json) == (
                ExecutionStatus.RUNNING,
                1,
                None,
            )
            assert await write_one(store, reopen, fence=fence) is False  # once per generation
        # A running child is not closed: nothing to reopen.
        reopen = ReopenExecution(fresh.execution_id, "ex-1", 1, LATER)
        assert await write_one(store, reopen, fence=fence) is False
        # A tree cancelled meanwhile keeps its children cancelled.
        await write_one(store, CancelExecutions("ex-1", LATER))
        reopen = ReopenExecution(fresh.execution_id, "ex-1", 2, LATER)
        assert await write_one(store, reopen, fence=fence) is False
        found = await store.executions.find_by_id(fresh.execution_id)
        assert found is not None
        assert found.status is ExecutionStatus.CANCELLED

    async def test_a_question_is_asked_again_in_a_new_generation_beside_the_withdrawn_one(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write([InsertPause(make_pause())], fence=fence)
        withdraw = CancelPause("acme", "p" * 32, PauseResolution.CANCELLED, NOW)
        await write_one(store, withdraw, fence=fence)
        again = replace(make_pause("q" * 32), generation=1, asked_at=LATER)
        asked = await write_one(store, InsertPause(again), fence=fence)
        assert asked.seq == 2
        found = await store.pauses.find_by_step("ex-1", again.step_key)
        assert found is not None
        assert (found.pause_id, found.generation, found.status) == (
            "q" * 32,
            1,
            PauseStatus.PENDING,
        )
        await store.write([await answer_of(store, "q" * 32)])
        trail = await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
            "acme", "ex-1"
        )
        assert [(entry.pause_id, entry.generation, entry.resolution) for entry in trail] == [
            ("p" * 32, 0, PauseResolution.CANCELLED),
            ("q" * 32, 1, PauseResolution.REPLIED),
        ]

    async def test_a_branch_row_keeps_the_generation_it_was_written_in(self, store: Store) -> None:
        fence = await self._begin(store)
        row = BranchRow("2:l#0@0", BranchStatus.FAILED, None, FAILURE)
        await store.write([SaveBranch("ex-1", row, NOW)], fence=fence)
        assert (await store.branches.load("ex-1", "2:l#0@"))["2:l#0@0"].generation == 0
        again = BranchRow("2:l#0@0", BranchStatus.WAITING, generation=1)
        await store.write([SaveBranch("ex-1", again, LATER)], fence=fence)
        assert await store.branches.load_places("ex-1", ["2:l#0@0"]) == {"2:l#0@0": again}

    async def test_a_tree_rests_until_a_time_and_is_found_when_it_is_due(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        wake = NOW + timedelta(minutes=2)
        rested = await write_one(store, RestTree(fence, NOW, frozenset(), wake), fence=fence)
        assert rested is not None
        assert rested.pending_ids == ()
        found = await store.executions.find_by_id("ex-1")
        assert found is not None
        assert (found.status, found.wake_at) == (ExecutionStatus.WAITING, wake)
        assert await store.executions.find_interrupted(wake - timedelta(seconds=1), 10) == []
        assert await store.executions.find_interrupted(wake, 10) == ["ex-1"]
        # Acquired for a pass once due: set running in the same transaction.
        taken = await write_one(store, AcquireLease("ex-1", "b", TTL, wake, start_pass=True))
        assert taken is not None
        assert taken.row is not None
        assert taken.row.status is ExecutionStatus.RUNNING
        # Ended: the wake-up goes with it.
        done = SetExecutionStatus("ex-1", ExecutionStatus.COMPLETED, wake, output_json="{}")
        await store.write([done], fence=taken.fence)
        found = await store.executions.find_by_id("ex-1")
        assert found is not None
        assert found.wake_at is None

    async def test_a_resting_steps_wake_up_is_kept_apart_and_the_lease_names_the_questions_due(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        soon, later = NOW + timedelta(minutes=1), NOW + timedelta(hours=1)
        due = replace(make_pause(path="a"), expires_at=soon)
        waiting = replace(make_pause("q" * 32, "1:a#1/turn-0/tool-0", path="b"), next_step_at=later)
        await store.write([InsertPause(due), InsertPause(waiting)], fence=fence)
        resting = NOW + timedelta(minutes=30)
        paths = ("1:a#1/fan#0@2", "1:a#1/fan#0@7")
        rested = RestTree(fence, NOW, frozenset(), soon, resting_until=resting, resting_paths=paths)
        assert await write_one(store, rested, fence=fence) is not None
        found = await store.executions.find_by_id("ex-1")
        assert found is not None
        assert (found.wake_at, found.resting_until) == (soon, resting)
        assert found.resting_paths == paths  # which branches rest, kept with their wake-up
        # Acquired once the first question's deadline came: that question is named, not the other.
        taken = await write_one(store, AcquireLease("ex-1", "b", TTL, soon, start_pass=True))
        assert taken is not None
        assert taken.row is not None
        assert taken.row.status is ExecutionStatus.RUNNING
        assert [pause.pause_id for pause in taken.due] == [due.pause_id]
        assert taken.resolved == ()
        # Ended: both wake-ups go with it.
        done = SetExecutionStatus("ex-1", ExecutionStatus.COMPLETED, soon, output_json="{}")
        await store.write([done], fence=taken.fence)
        found = await store.executions.find_by_id("ex-1")
        assert found is not None
        assert (found.wake_at, found.resting_until, found.resting_paths) == (None, None, None)

    async def test_a_tree_with_a_pending_pause_rests_paused_with_its_wake_up(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write([InsertPause(make_pause())], fence=fence)
        wake = NOW + timedelta(minutes=2)
        rested = await write_one(store, RestTree(fence, NOW, frozenset(), wake), fence=fence)
        assert rested is not None
        assert rested.pending_ids == ("p" * 32,)
        found = await store.executions.find_by_id("ex-1")
        assert found is not None
        assert (found.status, found.wake_at) == (ExecutionStatus.PAUSED, wake)
        assert await store.executions.find_interrupted(wake, 10) == ["ex-1"]
        assert await write_one(store, CancelExecutions("ex-1", NOW)) == ["ex-1"]
