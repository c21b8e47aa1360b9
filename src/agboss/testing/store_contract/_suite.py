"""The store contract: schema, executions, leases and fences, the journal, what a store cannot
keep (its pauses are in `_pauses`)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from agboss.enums import ExecutionStatus, PauseResolution
from agboss.errors import LeaseLostError, RecordedError, StoreError, ThreadOwnerError
from agboss.models import Usage
from agboss.store import decode_failure, encode_failure
from agboss.store.protocol import (
    BranchRow,
    BranchStatus,
    FailedQuery,
    Fence,
    Store,
)
from agboss.store.writes import (
    AcquireLease,
    AddLedgerEntry,
    AppendStep,
    BeginExecution,
    CancelExecutions,
    CancelPendingUnder,
    InsertChild,
    InsertPause,
    MarkPauseSent,
    MarkWithdrawn,
    ReleaseLease,
    RenewLease,
    ResolvePause,
    RestTree,
    SaveBranch,
    SavePiiTokens,
    SetExecutionStatus,
    StartLaunch,
    write_one,
)
from agboss.testing.store_contract._builds import BuildContract
from agboss.testing.store_contract._claims import ClaimContract, ReassignContract
from agboss.testing.store_contract._decisions import DecisionLogContract
from agboss.testing.store_contract._delegations import DelegationContract
from agboss.testing.store_contract._pauses import PauseContract
from agboss.testing.store_contract._retries import RetryContract
from agboss.testing.store_contract._signals import SignalContract
from agboss.testing.store_contract._standing import StandingContract
from agboss.testing.store_contract._support import (
    NOW,
    TTL,
    answer_of,
    make_entry,
    make_pause,
    make_row,
)
from agboss.testing.store_contract._votes import VoteContract

__all__ = ["StoreContract"]


class StoreContract(
    BuildContract,
    ClaimContract,
    DecisionLogContract,
    DelegationContract,
    PauseContract,
    ReassignContract,
    RetryContract,
    SignalContract,
    StandingContract,
    VoteContract,
):
    """Every store passes these; subclass it with a ``store`` fixture."""

    # ---- schema ---------------------------------------------------------------------

    async def test_an_opened_store_is_at_the_latest_schema_and_migrating_again_changes_nothing(
        self, store: Store
    ) -> None:
        version = await store.schema_version()
        assert version >= 1
        assert await store.migrate() == version

    # ---- executions -----------------------------------------------------------------

    async def test_begin_creates_the_execution_its_thread_and_a_held_lease(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        assert fence == Fence("ex-1", "a", 1)
        found = await store.executions.find("acme", "ex-1")
        assert found is not None
        assert found.created_at == NOW
        assert found.status is ExecutionStatus.RUNNING
        assert await store.executions.find("other-tenant", "ex-1") is None
        assert (await store.executions.find_by_id("ex-1")) == found
        thread = await store.executions.find_thread("acme", "th-1")
        assert thread is not None
        assert thread.owner_id == "u"
        assert await write_one(store, AcquireLease("ex-1", "b", TTL, NOW)) is None

    async def test_a_thread_keeps_its_owner_and_a_refused_begin_writes_nothing(
        self, store: Store
    ) -> None:
        await self._begin(store)
        try:
            await store.write([BeginExecution(make_row("ex-2", owner_id="other"), "a", TTL, NOW)])
        except ThreadOwnerError:
            pass
        else:
            raise AssertionError("a second owner was accepted")
        assert await store.executions.find_by_id("ex-2") is None
        # No lease was left behind either: the refused root's lease is free to take.
        acquired = await write_one(store, AcquireLease("ex-2", "b", TTL, NOW))
        assert acquired is not None
        assert acquired.fence.epoch == 1

    async def test_children_are_inserted_once_and_read_with_their_tree(self, store: Store) -> None:
        fence = await self._begin(store)
        root = make_row()
        child = make_row("ex-1/2:launch#0@0", parent=root)
        grandchild = make_row("ex-1/2:launch#0@0/1:step#0", parent=child)
        insert, insert_again = InsertChild(child), InsertChild(child)
        results = await store.write([insert, insert_again], fence=fence)
        first, again = results[insert], results[insert_again]
        await store.write([InsertChild(grandchild)], fence=fence)
        assert first == again
        assert first.parent_execution_id == "ex-1"
        found = await store.executions.find_by_id(grandchild.execution_id)
        assert found is not None
        assert found.parent_execution_id == child.execution_id
        outline = await store.executions.outline("ex-1")
        assert [(n.execution_id, n.parent_execution_id) for n in outline] == [
            ("ex-1", None),
            (child.execution_id, "ex-1"),
            (grandchild.execution_id, child.execution_id),
        ]
        assert [(n.status, n.workflow, n.output_json, n.calls) for n in outline] == [
            (r.status, r.workflow, r.output_json, r.spend.calls)
            for r in [
                await store.executions.find_by_id(n.execution_id) or make_row() for n in outline
            ]
        ]
        some = await store.executions.outline_of("ex-1", [grandchild.execution_id, "ex-1", "ex-9"])
        assert sorted(some) == sorted([outline[0], outline[2]])  # an unknown id is left out
        assert await store.executions.outline_of("ex-2", ["ex-1"]) == []  # not in that tree

    async def test_a_status_is_set_with_its_output_or_failure_but_a_cancelled_one_stays(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        failure = encode_failure(ValueError("bad"))
        failed = SetExecutionStatus("ex-1", ExecutionStatus.FAILED, NOW, error_json=failure)
        assert await write_one(store, failed, fence=fence) is True
        found = await store.executions.find_by_id("ex-1")
        assert found is not None
        assert found.error_json == failure
        decoded = decode_failure(found.error_json or "")
        assert isinstance(decoded, RecordedError)
        assert decoded.type_name == "builtins.ValueError"
        other = await self._begin(store, make_row("ex-2"))
        assert await write_one(store, CancelExecutions("ex-2", NOW)) == ["ex-2"]
        completed = SetExecutionStatus("ex-2", ExecutionStatus.COMPLETED, NOW, output_json="{}")
        assert await write_one(store, completed, fence=other) is False

    async def test_cancelling_an_execution_cancels_its_descendants_only(self, store: Store) -> None:
        fence = await self._begin(store)
        root = make_row()
        child = make_row("ex-1/2:l#0@0", parent=root)
        sibling = make_row("ex-1/2:l#0@1", parent=root)
        await store.write([InsertChild(child), InsertChild(sibling)], fence=fence)
        assert await write_one(store, CancelExecutions(child.execution_id, NOW)) == [
            child.execution_id
        ]
        found = await store.executions.find_by_id(sibling.execution_id)
        assert found is not None
        assert found.status is ExecutionStatus.RUNNING

    async def test_the_roots_of_a_thread_are_those_running_or_paused(self, store: Store) -> None:
        await self._begin(store)
        await self._begin(store, make_row("ex-2"))
        await store.write([CancelExecutions("ex-2", NOW)])
        roots = await store.executions.find_roots("acme", "th-1")
        assert [r.execution_id for r in roots] == ["ex-1"]

    async def test_a_threads_exchanges_are_its_roots_completed_before_one_began(
        self, store: Store
    ) -> None:
        later = NOW + timedelta(minutes=1)
        for name, answer in (("ex-a", '{"text": "a"}'), ("ex-b", '{"text": "b"}')):
            fence = await self._begin(store, make_row(name))
            completed = SetExecutionStatus(name, ExecutionStatus.COMPLETED, NOW, output_json=answer)
            await store.write([completed], fence=fence)
        await self._begin(store, make_row("ex-failed"))
        await store.write([CancelExecutions("ex-failed", NOW)])
        await self._begin(store, make_row("ex-elsewhere", thread_id="th-2"))
        current = replace(make_row("ex-now"), created_at=later, updated_at=later)
        await self._begin(store, current)
        found = await store.executions.find_exchanges("acme", "th-1", current, None)
        assert sorted((e.execution_id, e.output_json) for e in found) == [
            ("ex-a", '{"text": "a"}'),
            ("ex-b", '{"text": "b"}'),
        ]
        assert all(e.input_json == '{"text": "x"}' for e in found)
        assert len(await store.executions.find_exchanges("acme", "th-1", current, 1)) == 1
        itself = await store.executions.find_exchanges("acme", "th-1", make_row("ex-a"), None)
        assert "ex-a" not in [e.execution_id for e in itself]  # never its own exchange
        before = replace(make_row("ex-first"), created_at=NOW - timedelta(minutes=1))
        assert await store.executions.find_exchanges("acme", "th-1", before, None) == []

    async def test_spend_is_added_with_each_step_and_summed_over_a_tree(self, store: Store) -> None:
        fence = await self._begin(store)
        child = make_row("ex-1/2:l#0@0", parent=make_row())
        await store.write([InsertChild(child)], fence=fence)
        usage = Usage(input_tokens=3, output_tokens=2, cost=0.5, calls=1)
        await store.write(
            [
                AppendStep("ex-1", make_entry("a", usage), NOW),
                AppendStep(child.execution_id, make_entry("b", usage), NOW),
            ],
            fence=fence,
        )
        spent = {
            node.execution_id: (node.input_tokens, node.output_tokens, node.cost, node.calls)
            for node in await store.executions.outline("ex-1")
        }
        assert spent == {"ex-1": (3, 2, 0.5, 1), child.execution_id: (3, 2, 0.5, 1)}
        found = await store.executions.find_by_id(child.execution_id)
        assert found is not None
        assert found.spend == usage
        [_, node] = await store.executions.outline("ex-1")
        assert (node.input_tokens, node.output_tokens, node.cost, node.calls) == (3, 2, 0.5, 1)

    async def test_pii_tokens_are_kept_per_tree_and_a_stored_token_keeps_its_value(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        assert await store.executions.pii_tokens("ex-1") == {}
        await store.write(
            [SavePiiTokens("ex-1", (("<IBAN_1>", "DE89 3704"), ("<EMAIL_1>", "a@b.example")))],
            fence=fence,
        )
        await store.write([SavePiiTokens("ex-1", (("<IBAN_1>", "other"),))], fence=fence)
        assert await store.executions.pii_tokens("ex-1") == {
            "<IBAN_1>": "DE89 3704",
            "<EMAIL_1>": "a@b.example",
        }
        assert await store.executions.pii_tokens("ex-2") == {}

    async def test_interrupted_trees_are_running_or_answered_with_a_free_lease(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        assert await store.executions.find_interrupted(NOW, 10) == []
        assert await store.executions.find_interrupted(NOW + TTL, 10) == ["ex-1"]
        await store.write([InsertPause(make_pause())], fence=fence)
        await store.write(
            [SetExecutionStatus("ex-1", ExecutionStatus.PAUSED, NOW), ReleaseLease(fence)],
            fence=fence,
        )
        assert await store.executions.find_interrupted(NOW, 10) == []  # rests on a question
        await store.write([await answer_of(store)])
        assert await store.executions.find_interrupted(NOW, 10) == ["ex-1"]

    async def test_a_tree_that_owes_a_withdraw_is_interrupted_even_when_finished(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write([InsertPause(make_pause())], fence=fence)
        await store.write([MarkPauseSent("acme", "p" * 32)], fence=fence)
        await store.write(
            [
                CancelPendingUnder("ex-1", "", PauseResolution.CANCELLED, NOW),
                SetExecutionStatus("ex-1", ExecutionStatus.COMPLETED, NOW, output_json="{}"),
                ReleaseLease(fence),
            ],
            fence=fence,
        )
        assert await store.executions.find_interrupted(NOW, 10) == ["ex-1"]
        [due] = await store.pauses.find_due_withdrawals("ex-1")
        await store.write([MarkWithdrawn(due.tenant_id, due.pause_id)])
        assert await store.pauses.find_due_withdrawals("ex-1") == []
        assert await store.executions.find_interrupted(NOW, 10) == []

    # ---- leases and fences ----------------------------------------------------------

    async def test_an_expired_lease_is_taken_over_with_a_new_epoch_and_its_holder_named(
        self, store: Store
    ) -> None:
        await self._begin(store)
        assert await write_one(store, AcquireLease("ex-1", "b", TTL, NOW + TTL / 2)) is None
        acquired = await write_one(store, AcquireLease("ex-1", "b", TTL, NOW + TTL))
        assert acquired is not None
        assert acquired.fence == Fence("ex-1", "b", 2)
        assert acquired.previous_holder == "a"
        assert acquired.status is ExecutionStatus.RUNNING

    async def test_a_lease_acquired_for_a_pass_reads_the_steps_it_replays_with_it(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        steps = [
            make_entry("1:a#0/turn-0/model"),
            make_entry("1:a#0/turn-0/tool-0"),
            make_entry("2:b#0/x"),
        ]
        await store.write([AppendStep("ex-1", step, NOW) for step in steps], fence=fence)
        await store.write([InsertPause(make_pause())], fence=fence)
        await store.write([RestTree(fence, NOW, frozenset())], fence=fence)
        wanted = AcquireLease("ex-1", "b", TTL, NOW, start_pass=True, journal=("ex-1", "1:a#0/"))
        answer = await answer_of(store)
        results = await store.write([answer, wanted])
        resolved, acquired = results[answer], results[wanted]
        assert resolved is not None
        assert acquired is not None
        assert acquired.journal is not None
        assert (acquired.journal.execution_id, acquired.journal.prefix) == ("ex-1", "1:a#0/")
        assert acquired.journal.steps == await store.journal.load("ex-1", "1:a#0/")
        assert list(acquired.journal.steps) == ["1:a#0/turn-0/model", "1:a#0/turn-0/tool-0"]
        assert acquired.any_pending is False  # the one pause was answered: none waits
        # Without the lease, nothing.
        assert (
            await write_one(store, AcquireLease("ex-1", "c", TTL, NOW, journal=("ex-1", "")))
            is None
        )

    async def test_an_intent_is_journaled_with_a_lease_only_if_that_write_took_it(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)  # held by "a"
        await store.write([InsertPause(make_pause())], fence=fence)
        intent = AppendStep("ex-1", make_entry("1:a#0/turn-0/tool-0/attempt-1"), NOW)

        def acquire(grant_id: str, now: datetime, answered: ResolvePause | None) -> AcquireLease:
            return AcquireLease(
                "ex-1",
                "b",
                TTL,
                now,
                journal=("ex-1", "1:a#0/"),
                intents=(intent,),
                grant_id=grant_id,
                answered=answered,
            )

        answer = await answer_of(store)
        held = acquire("g1", NOW, answer)
        results = await store.write([answer, held])
        assert results[answer] is not None  # the answer is recorded, the lease not acquired
        assert results[held] is None
        assert await store.journal.load("ex-1", "1:a#0/") == {}  # not acquired: not written
        # The pause was answered: a later answer records nothing, and journals no intent.
        late = replace(await answer_of(store), now=NOW + TTL)
        free = acquire("g2", NOW + TTL, late)
        results = await store.write([late, free])
        assert results[late] is None
        acquired = results[free]
        assert acquired is not None  # the lease was free: acquired, without the intent
        assert acquired.intents == frozenset()
        assert await store.journal.load("ex-1", "1:a#0/") == {}

    async def test_an_intent_is_journaled_with_the_answer_that_took_the_lease(
        self, store: Store
    ) -> None:
        answer, wanted = await self._answered_with_intent(store)
        acquired = (await store.write([answer, wanted]))[wanted]
        assert acquired is not None
        assert acquired.intents == frozenset({"1:a#0/turn-0/tool-0/attempt-1"})
        assert acquired.journal is not None
        assert list(acquired.journal.steps) == ["1:a#0/turn-0/tool-0/attempt-1"]  # read with it

    async def test_an_intent_is_journaled_only_under_the_version_it_was_made_for(
        self, store: Store
    ) -> None:
        answer, wanted = await self._answered_with_intent(store)  # the root at version "1"
        # Made for a build of another version than the root runs under now (a continuation
        # moved it): the answer is recorded and the lease acquired, the intent not journaled.
        wanted = replace(wanted, version="0.9")
        results = await store.write([answer, wanted])
        acquired = results[wanted]
        assert results[answer] is not None
        assert acquired is not None
        assert acquired.intents == frozenset()
        assert await store.journal.load("ex-1", "1:a#0/") == {}

    async def _answered_with_intent(self, store: Store) -> tuple[ResolvePause, AcquireLease]:
        """An answer to a tree's one question, its lease free, and the write that acquires
        the lease with the intent of the call the answer lets run."""
        fence = await self._begin(store)
        await store.write([InsertPause(make_pause())], fence=fence)
        await store.write([ReleaseLease(fence)], fence=fence)
        intent = AppendStep("ex-1", make_entry("1:a#0/turn-0/tool-0/attempt-1"), NOW)
        answer = await answer_of(store)
        wanted = AcquireLease(
            "ex-1",
            "b",
            TTL,
            NOW,
            journal=("ex-1", "1:a#0/"),
            intents=(intent,),
            grant_id="g1",
            answered=answer,
        )
        return answer, wanted

    async def test_a_lease_acquired_for_a_pass_says_whether_a_pause_still_waits(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write(
            [InsertPause(make_pause("1" * 32, "k1")), InsertPause(make_pause("2" * 32, "k2"))],
            fence=fence,
        )
        await store.write([RestTree(fence, NOW, frozenset())], fence=fence)
        wanted = AcquireLease("ex-1", "b", TTL, NOW, start_pass=True)
        acquired = (await store.write([await answer_of(store, "1" * 32), wanted]))[wanted]
        assert acquired is not None
        assert acquired.any_pending is True
        assert acquired.journal is None  # none asked for
        plain = await write_one(store, AcquireLease("ex-1", "c", TTL, NOW + TTL))
        assert plain is not None
        assert plain.any_pending is None  # not read without start_pass

    async def test_failed_roots_are_listed_newest_first_by_keyset(self, store: Store) -> None:
        failed = '{"message": "it failed"}'
        ids = ["ex-a", "ex-b", "ex-c", "ex-d"]
        for index, execution_id in enumerate(ids):
            row = make_row(execution_id, thread_id=f"th-{index}", owner_id="u" if index else "v")
            fence = await self._begin(store, row)
            at = NOW + timedelta(seconds=min(index, 2))  # c and d fail at the same moment
            status = ExecutionStatus.COMPLETED if execution_id == "ex-b" else ExecutionStatus.FAILED
            await store.write(
                [SetExecutionStatus(execution_id, status, at, error_json=failed)], fence=fence
            )
            if execution_id == "ex-a":  # a failed child is its root's business, not listed
                child = make_row("ex-a-child", parent=row, thread_id="th-0", owner_id="v")
                await store.write([InsertChild(child)], fence=fence)
                await store.write(
                    [SetExecutionStatus("ex-a-child", ExecutionStatus.FAILED, at)], fence=fence
                )
        other = make_row("ex-e", tenant_id="other", thread_id="th-9")
        fence = await self._begin(store, other)
        await store.write([SetExecutionStatus("ex-e", ExecutionStatus.FAILED, NOW)], fence=fence)
        listed = await store.executions.list_failed(FailedQuery("acme"))
        assert [row.execution_id for row in listed] == ["ex-d", "ex-c", "ex-a"]
        assert listed[0].error_json == failed
        assert listed[0].updated_at == NOW + timedelta(seconds=2)
        last = listed[0]
        after = await store.executions.list_failed(
            FailedQuery("acme", after=(last.updated_at, last.execution_id), limit=1)
        )
        assert [row.execution_id for row in after] == ["ex-c"]  # the tie broken by the id
        mine = await store.executions.list_failed(FailedQuery("acme", owner_id="v"))
        assert [row.execution_id for row in mine] == ["ex-a"]

    async def test_a_released_lease_is_free_at_once(self, store: Store) -> None:
        fence = await self._begin(store)
        await store.write([ReleaseLease(fence)], fence=fence)
        acquired = await write_one(store, AcquireLease("ex-1", "b", TTL, NOW))
        assert acquired is not None
        assert acquired.previous_holder is None

    async def test_a_renewal_extends_a_held_lease_and_fails_on_a_lost_one(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        assert await write_one(store, RenewLease(fence, TTL, NOW + TTL / 2)) is True
        assert await write_one(store, AcquireLease("ex-1", "b", TTL, NOW + TTL)) is None
        assert await write_one(store, RenewLease(fence, TTL, NOW + TTL * 2)) is True
        acquired = await write_one(store, AcquireLease("ex-1", "b", TTL, NOW + TTL * 4))
        assert acquired is not None
        assert await write_one(store, RenewLease(fence, TTL, NOW + TTL * 4)) is False

    async def test_leases_may_run_on_the_stores_own_clock(self, store: Store) -> None:
        fence = await self._begin(store)
        await store.write([ReleaseLease(fence)], fence=fence)
        held = await write_one(store, AcquireLease("ex-1", "b", timedelta(milliseconds=200)))
        assert held is not None
        assert await write_one(store, AcquireLease("ex-1", "c", TTL)) is None
        assert await store.executions.find_interrupted(None, 10) == []
        await asyncio.sleep(0.3)
        assert await store.executions.find_interrupted(None, 10) == ["ex-1"]
        acquired = await write_one(store, AcquireLease("ex-1", "c", TTL))
        assert acquired is not None
        assert await write_one(store, RenewLease(acquired.fence, TTL)) is True
        await store.write([ReleaseLease(acquired.fence)], fence=acquired.fence)
        assert await write_one(store, AcquireLease("ex-1", "d", TTL)) is not None

    async def test_a_holder_that_lost_its_lease_writes_nothing(self, store: Store) -> None:
        fence = await self._begin(store)
        await store.write([AcquireLease("ex-1", "b", TTL, NOW + TTL)])
        try:
            await store.write(
                [AppendStep("ex-1", make_entry("late"), NOW), InsertPause(make_pause())],
                fence=fence,
            )
        except LeaseLostError:
            pass
        else:
            raise AssertionError("a lost fence wrote")
        assert await store.journal.load("ex-1") == {}
        assert await store.pauses.find_by_step("ex-1", make_pause().step_key) is None

    async def test_a_failed_write_leaves_the_whole_transaction_unwritten(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        try:
            await store.write(
                [
                    AppendStep("ex-1", make_entry("a"), NOW),
                    AppendStep("ex-1", make_entry("a"), NOW),
                ],
                fence=fence,
            )
        except StoreError:
            pass
        else:
            raise AssertionError("a step was journaled twice")
        assert await store.journal.load("ex-1") == {}

    # ---- the journal, branches, launches, the ledger ---------------------------------

    async def test_the_journal_returns_steps_in_order_by_prefix(self, store: Store) -> None:
        fence = await self._begin(store)
        await store.write(
            [
                AppendStep("ex-1", make_entry("n#0/b"), NOW),
                AppendStep("ex-1", make_entry("n#0/a"), NOW),
                AppendStep("ex-1", make_entry("m#0/c"), NOW),
            ],
            fence=fence,
        )
        everything = await store.journal.load("ex-1")
        assert list(everything) == ["n#0/b", "n#0/a", "m#0/c"]
        assert [e.seq for e in everything.values()] == [1, 2, 3]
        assert list(await store.journal.load("ex-1", "n#0/")) == ["n#0/b", "n#0/a"]

    async def test_branch_rows_are_saved_over_and_read_by_launch(self, store: Store) -> None:
        fence = await self._begin(store)
        await store.write(
            [
                SaveBranch("ex-1", BranchRow("2:l#0@0", BranchStatus.WAITING), NOW),
                SaveBranch(
                    "ex-1", BranchRow("2:l#0@1", BranchStatus.FAILED, None, '{"type": "x"}'), NOW
                ),
                SaveBranch("ex-1", BranchRow("2:l#1@0", BranchStatus.WAITING), NOW),
                SaveBranch("ex-1", BranchRow("2:l#0@0", BranchStatus.DONE, '{"a": 1}'), NOW),
            ],
            fence=fence,
        )
        rows = await store.branches.load("ex-1", "2:l#0@")
        assert rows == {
            "2:l#0@0": BranchRow("2:l#0@0", BranchStatus.DONE, '{"a": 1}'),
            "2:l#0@1": BranchRow("2:l#0@1", BranchStatus.FAILED, None, '{"type": "x"}'),
        }
        assert await store.branches.load_places("ex-1", ["2:l#0@1", "2:l#0@7"]) == {
            "2:l#0@1": BranchRow("2:l#0@1", BranchStatus.FAILED, None, '{"type": "x"}')
        }
        assert await store.branches.count("ex-1", "2:l#0@") == {
            BranchStatus.DONE: 1,
            BranchStatus.FAILED: 1,
        }
        assert await store.branches.count("ex-1", "2:l#1@") == {BranchStatus.WAITING: 1}

    async def test_a_launch_keeps_when_it_first_began(self, store: Store) -> None:
        fence = await self._begin(store)
        later = NOW + timedelta(hours=1)
        assert await write_one(store, StartLaunch("ex-1", "2:l#0", NOW), fence=fence) == NOW
        assert await write_one(store, StartLaunch("ex-1", "2:l#0", later), fence=fence) == NOW

    async def test_the_ledger_counts_each_call_of_a_tree_in_order(self, store: Store) -> None:
        fence = await self._begin(store)
        one = Usage(input_tokens=1, output_tokens=1, cost=0.25, calls=1)
        await store.write(
            [
                AddLedgerEntry("ex-1", "ex-1", "agent:a", one, NOW),
                AddLedgerEntry("ex-1", "ex-1/c", "reply-interpreter:r", one, NOW),
            ],
            fence=fence,
        )
        assert await store.ledger.total("ex-1") == one + one
        entries = await store.ledger.entries("ex-1")
        assert [(e.caller, e.execution_id, e.at) for e in entries] == [
            ("agent:a", "ex-1", NOW),
            ("reply-interpreter:r", "ex-1/c", NOW),
        ]
        assert await store.ledger.total("ex-2") == Usage()

    # ---- what a store cannot keep -----------------------------------------------------

    async def test_a_value_the_store_cannot_keep_is_a_store_error_and_writes_nothing(
        self, store: Store
    ) -> None:
        bad: list[Any] = ["\ud800", "nul\x00"]
        for value in bad:
            try:
                await store.write([BeginExecution(make_row(value, thread_id=value), "a", TTL, NOW)])
            except StoreError:
                continue
            found = await store.executions.find_by_id(value)
            assert found is not None  # a store that keeps it keeps it whole
            assert found.thread_id == value
