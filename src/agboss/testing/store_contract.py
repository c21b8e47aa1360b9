"""The store contract: what every `agboss.store.Store` does, one behaviour per test.

A store implementation proves itself by subclassing `StoreContract` in its own tests and giving
it a ``store`` fixture (an opened, empty store)::

    import pytest
    from agboss.testing.store_contract import StoreContract

    class TestMyStore(StoreContract):
        @pytest.fixture
        async def store(self, tmp_path):
            store = MyStore(tmp_path / "db")
            await store.open()
            yield store
            await store.close()

It needs pytest and pytest-asyncio (``asyncio_mode = "auto"``). It covers every repository
method and every write of `agboss.store.writes`, with the application's clock (``now`` given)
and, for leases, the store's own (``now=None``).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from agboss.dto import ToolCallApprovalAskDto, ToolCallApprovalDecisionDto
from agboss.enums import ExecutionStatus, PauseAnswerer, PauseResolution, PauseStatus
from agboss.errors import LeaseLostError, RecordedError, StoreError, ThreadOwnerError
from agboss.models.messages import Usage
from agboss.pauses.model import PauseAnswer, PauseAnswerRecord, PauseRecord
from agboss.records.model import ComponentRecord, StepRecord
from agboss.store.failures import decode_failure, encode_failure
from agboss.store.protocol import (
    BranchRow,
    ExecutionRow,
    Fence,
    StepEntry,
    Store,
    WaitingQuery,
)
from agboss.store.writes import (
    AcquireLease,
    AddLedgerEntry,
    AppendStep,
    BeginExecution,
    CancelExecutions,
    CancelPause,
    CancelPendingUnder,
    DeleteResolvedPauses,
    InsertChild,
    InsertPause,
    MarkPauseSent,
    MarkWithdrawn,
    ReleaseLease,
    RenewLease,
    ResolvePause,
    Rested,
    RestTree,
    SaveBranch,
    SavePauseAnswer,
    SavePiiTokens,
    SetExecutionStatus,
    StartLaunch,
    TakePause,
    TakeResolvedUnder,
)

__all__ = ["StoreContract"]

NOW = datetime(2026, 1, 1, tzinfo=UTC)
TTL = timedelta(seconds=30)
ANSWER = PauseAnswer(decision=ToolCallApprovalDecisionDto(approved=True), responder="u")


def _row(
    execution_id: str = "ex-1",
    *,
    parent: ExecutionRow | None = None,
    thread_id: str = "th-1",
    owner_id: str = "u",
    tenant_id: str = "acme",
) -> ExecutionRow:
    return ExecutionRow.starting(
        execution_id=execution_id,
        parent=parent,
        tenant_id=tenant_id,
        thread_id=thread_id,
        owner_id=owner_id,
        workflow="office-workflow",
        workflow_version="1",
        input_json='{"text": "x"}',
        now=NOW,
    )


def _pause(
    pause_id: str = "p" * 32,
    key: str = "1:a#0/turn-0/tool-0",
    *,
    execution_id: str = "ex-1",
    path: str = "",
    answered_by: PauseAnswerer = PauseAnswerer.THREAD_OWNER,
) -> PauseRecord:
    return PauseRecord(
        pause_id=pause_id,
        tenant_id="acme",
        step_key=key,
        root_execution_id="ex-1",
        execution_id=execution_id,
        seq=0,
        status=PauseStatus.PENDING,
        resolution=None,
        is_sent=False,
        answered_by=answered_by,
        channel="expense-approval-channel",
        agent="office-agent",
        ask=ToolCallApprovalAskDto(tool="book-expense-tool", call_id="c1", arguments={"n": 1}),
        step=StepRecord(
            kind="tool-run",
            key=f"{execution_id}/{key}",
            agent=ComponentRecord(kind="agent", name="office-agent"),
            node_id="1:office-agent",
        ),
        answer=None,
        asked_at=NOW,
        resolved_at=None,
        child_execution_id=None if execution_id == "ex-1" else execution_id,
        path=path,
    )


def _entry(key: str, usage: Usage | None = None) -> StepEntry:
    return StepEntry(key=key, kind="model-call", result_json="{}", record_json="{}", usage=usage)


async def _resolve(
    store: Store, pause_id: str = "p" * 32, status: PauseStatus = PauseStatus.RESOLVED
) -> ResolvePause:
    """The answer of a stored pause (`ResolvePause` is given the record the store has)."""
    pause = await store.pauses.find_by_tenant_id_and_pause_id("acme", pause_id)
    assert pause is not None
    return ResolvePause(pause, status, PauseResolution.REPLIED, ANSWER, NOW)


class StoreContract:
    """Every store passes these; subclass it with a ``store`` fixture."""

    async def _begin(self, store: Store, row: ExecutionRow | None = None) -> Fence:
        fence: Fence = (await store.write([BeginExecution(row or _row(), "a", TTL, NOW)]))[0]
        return fence

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
        assert await store.write([AcquireLease("ex-1", "b", TTL, NOW)]) == [None]

    async def test_a_thread_keeps_its_owner_and_a_refused_begin_writes_nothing(
        self, store: Store
    ) -> None:
        await self._begin(store)
        try:
            await store.write([BeginExecution(_row("ex-2", owner_id="other"), "a", TTL, NOW)])
        except ThreadOwnerError:
            pass
        else:
            raise AssertionError("a second owner was accepted")
        assert await store.executions.find_by_id("ex-2") is None
        # No lease was left behind either: the refused root's lease is free to take.
        [taken] = await store.write([AcquireLease("ex-2", "b", TTL, NOW)])
        assert taken is not None
        assert taken.fence.epoch == 1

    async def test_children_are_inserted_once_and_read_with_their_tree(self, store: Store) -> None:
        fence = await self._begin(store)
        root = _row()
        child = _row("ex-1/2:launch#0@0", parent=root)
        grandchild = _row("ex-1/2:launch#0@0/1:step#0", parent=child)
        first, again = await store.write([InsertChild(child), InsertChild(child)], fence=fence)
        await store.write([InsertChild(grandchild)], fence=fence)
        assert first == again
        assert first.parent_execution_id == "ex-1"
        assert [r.execution_id for r in await store.executions.find_children("ex-1")] == [
            child.execution_id
        ]
        tree = await store.executions.find_tree("ex-1")
        assert [r.execution_id for r in tree] == [
            "ex-1",
            child.execution_id,
            grandchild.execution_id,
        ]
        outline = await store.executions.outline("ex-1")
        assert [(n.execution_id, n.parent_execution_id) for n in outline] == [
            ("ex-1", None),
            (child.execution_id, "ex-1"),
            (grandchild.execution_id, child.execution_id),
        ]
        assert [(n.status, n.workflow, n.output_json, n.calls) for n in outline] == [
            (r.status, r.workflow, r.output_json, r.spend.calls) for r in tree
        ]
        some = await store.executions.outline_of("ex-1", [grandchild.execution_id, "ex-1", "ex-9"])
        assert sorted(some) == sorted([outline[0], outline[2]])  # an unknown id is left out
        assert await store.executions.outline_of("ex-2", ["ex-1"]) == []  # not in that tree

    async def test_a_status_is_set_with_its_output_or_failure_but_a_cancelled_one_stays(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        failure = encode_failure(ValueError("bad"))
        assert await store.write(
            [SetExecutionStatus("ex-1", ExecutionStatus.FAILED, NOW, error_json=failure)],
            fence=fence,
        ) == [True]
        found = await store.executions.find_by_id("ex-1")
        assert found is not None
        assert found.error_json == failure
        decoded = decode_failure(found.error_json or "")
        assert isinstance(decoded, RecordedError)
        assert decoded.type_name == "builtins.ValueError"
        other = await self._begin(store, _row("ex-2"))
        assert await store.write([CancelExecutions("ex-2", NOW)]) == [["ex-2"]]
        assert await store.write(
            [SetExecutionStatus("ex-2", ExecutionStatus.COMPLETED, NOW, output_json="{}")],
            fence=other,
        ) == [False]

    async def test_cancelling_an_execution_cancels_its_descendants_only(self, store: Store) -> None:
        fence = await self._begin(store)
        root = _row()
        child = _row("ex-1/2:l#0@0", parent=root)
        sibling = _row("ex-1/2:l#0@1", parent=root)
        await store.write([InsertChild(child), InsertChild(sibling)], fence=fence)
        assert await store.write([CancelExecutions(child.execution_id, NOW)]) == [
            [child.execution_id]
        ]
        found = await store.executions.find_by_id(sibling.execution_id)
        assert found is not None
        assert found.status is ExecutionStatus.RUNNING

    async def test_the_roots_of_a_thread_are_those_running_or_paused(self, store: Store) -> None:
        await self._begin(store)
        await self._begin(store, _row("ex-2"))
        await store.write([CancelExecutions("ex-2", NOW)])
        roots = await store.executions.find_roots("acme", "th-1")
        assert [r.execution_id for r in roots] == ["ex-1"]

    async def test_spend_is_added_with_each_step_and_summed_over_a_tree(self, store: Store) -> None:
        fence = await self._begin(store)
        child = _row("ex-1/2:l#0@0", parent=_row())
        await store.write([InsertChild(child)], fence=fence)
        usage = Usage(input_tokens=3, output_tokens=2, cost=0.5, calls=1)
        await store.write(
            [
                AppendStep("ex-1", _entry("a", usage), NOW),
                AppendStep(child.execution_id, _entry("b", usage), NOW),
            ],
            fence=fence,
        )
        assert await store.executions.spend_of("ex-1", tree=False) == usage
        assert await store.executions.spend_of("ex-1", tree=True) == usage + usage
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
        await store.write([InsertPause(_pause())], fence=fence)
        await store.write(
            [SetExecutionStatus("ex-1", ExecutionStatus.PAUSED, NOW), ReleaseLease(fence)],
            fence=fence,
        )
        assert await store.executions.find_interrupted(NOW, 10) == []  # rests on a question
        await store.write([await _resolve(store)])
        assert await store.executions.find_interrupted(NOW, 10) == ["ex-1"]

    async def test_a_tree_that_owes_a_withdraw_is_interrupted_even_when_finished(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write([InsertPause(_pause())], fence=fence)
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
        assert await store.write([AcquireLease("ex-1", "b", TTL, NOW + TTL / 2)]) == [None]
        [taken] = await store.write([AcquireLease("ex-1", "b", TTL, NOW + TTL)])
        assert taken is not None
        assert taken.fence == Fence("ex-1", "b", 2)
        assert taken.previous_holder == "a"
        assert taken.status is ExecutionStatus.RUNNING

    async def test_a_lease_taken_for_a_pass_reads_the_steps_it_replays_with_it(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        steps = [_entry("1:a#0/turn-0/model"), _entry("1:a#0/turn-0/tool-0"), _entry("2:b#0/x")]
        await store.write([AppendStep("ex-1", step, NOW) for step in steps], fence=fence)
        await store.write([InsertPause(_pause())], fence=fence)
        await store.write([RestTree(fence, NOW, frozenset())], fence=fence)
        wanted = AcquireLease("ex-1", "b", TTL, NOW, start_pass=True, journal=("ex-1", "1:a#0/"))
        [resolved, taken] = await store.write([await _resolve(store), wanted])
        assert resolved is not None
        assert taken is not None
        assert taken.journal is not None
        assert (taken.journal.execution_id, taken.journal.prefix) == ("ex-1", "1:a#0/")
        assert taken.journal.steps == await store.journal.load("ex-1", "1:a#0/")
        assert list(taken.journal.steps) == ["1:a#0/turn-0/model", "1:a#0/turn-0/tool-0"]
        # Without the lease, nothing.
        assert await store.write([AcquireLease("ex-1", "c", TTL, NOW, journal=("ex-1", ""))]) == [
            None
        ]

    async def test_a_released_lease_is_free_at_once(self, store: Store) -> None:
        fence = await self._begin(store)
        await store.write([ReleaseLease(fence)], fence=fence)
        [taken] = await store.write([AcquireLease("ex-1", "b", TTL, NOW)])
        assert taken is not None
        assert taken.previous_holder is None

    async def test_a_renewal_extends_a_held_lease_and_fails_on_a_lost_one(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        assert await store.write([RenewLease(fence, TTL, NOW + TTL / 2)]) == [True]
        assert await store.write([AcquireLease("ex-1", "b", TTL, NOW + TTL)]) == [None]
        assert await store.leases.renew(fence, now=NOW + TTL * 2, ttl=TTL)
        [taken] = await store.write([AcquireLease("ex-1", "b", TTL, NOW + TTL * 4)])
        assert taken is not None
        assert await store.write([RenewLease(fence, TTL, NOW + TTL * 4)]) == [False]

    async def test_leases_may_run_on_the_stores_own_clock(self, store: Store) -> None:
        fence = await self._begin(store)
        await store.write([ReleaseLease(fence)], fence=fence)
        [held] = await store.write([AcquireLease("ex-1", "b", timedelta(milliseconds=200))])
        assert held is not None
        assert await store.leases.acquire("ex-1", "c", now=None, ttl=TTL) is None
        assert await store.executions.find_interrupted(None, 10) == []
        await asyncio.sleep(0.3)
        assert await store.executions.find_interrupted(None, 10) == ["ex-1"]
        taken = await store.leases.acquire("ex-1", "c", now=None, ttl=TTL)
        assert taken is not None
        assert await store.leases.renew(taken, now=None, ttl=TTL)
        await store.leases.release(taken)

    async def test_a_holder_that_lost_its_lease_writes_nothing(self, store: Store) -> None:
        fence = await self._begin(store)
        await store.write([AcquireLease("ex-1", "b", TTL, NOW + TTL)])
        try:
            await store.write(
                [AppendStep("ex-1", _entry("late"), NOW), InsertPause(_pause())], fence=fence
            )
        except LeaseLostError:
            pass
        else:
            raise AssertionError("a lost fence wrote")
        assert await store.journal.load("ex-1") == {}
        assert await store.pauses.find_by_step("ex-1", _pause().step_key) is None

    async def test_a_failed_write_leaves_the_whole_transaction_unwritten(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        try:
            await store.write(
                [AppendStep("ex-1", _entry("a"), NOW), AppendStep("ex-1", _entry("a"), NOW)],
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
                AppendStep("ex-1", _entry("n#0/b"), NOW),
                AppendStep("ex-1", _entry("n#0/a"), NOW),
                AppendStep("ex-1", _entry("m#0/c"), NOW),
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
                SaveBranch("ex-1", BranchRow("2:l#0@0", "waiting"), NOW),
                SaveBranch("ex-1", BranchRow("2:l#0@1", "failed", None, '{"type": "x"}'), NOW),
                SaveBranch("ex-1", BranchRow("2:l#1@0", "waiting"), NOW),
                SaveBranch("ex-1", BranchRow("2:l#0@0", "done", '{"a": 1}'), NOW),
            ],
            fence=fence,
        )
        rows = await store.branches.load("ex-1", "2:l#0@")
        assert rows == {
            "2:l#0@0": BranchRow("2:l#0@0", "done", '{"a": 1}'),
            "2:l#0@1": BranchRow("2:l#0@1", "failed", None, '{"type": "x"}'),
        }
        assert await store.branches.load_places("ex-1", ["2:l#0@1", "2:l#0@7"]) == {
            "2:l#0@1": BranchRow("2:l#0@1", "failed", None, '{"type": "x"}')
        }
        assert await store.branches.count("ex-1", "2:l#0@") == {"done": 1, "failed": 1}
        assert await store.branches.count("ex-1", "2:l#1@") == {"waiting": 1}

    async def test_a_launch_keeps_when_it_first_began(self, store: Store) -> None:
        fence = await self._begin(store)
        later = NOW + timedelta(hours=1)
        assert await store.write([StartLaunch("ex-1", "2:l#0", NOW)], fence=fence) == [NOW]
        assert await store.write([StartLaunch("ex-1", "2:l#0", later)], fence=fence) == [NOW]

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

    # ---- pauses ---------------------------------------------------------------------

    async def test_pauses_are_numbered_in_the_order_asked_and_found_by_step(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        first, second = await store.write(
            [InsertPause(_pause("a" * 32, "k1")), InsertPause(_pause("b" * 32, "k2"))],
            fence=fence,
        )
        assert (first.seq, second.seq) == (1, 2)
        found = await store.pauses.find_by_step("ex-1", "k2")
        assert found is not None
        assert found.pause_id == "b" * 32
        assert found.ask == _pause().ask

    async def test_pending_to_resolved_happens_once_with_its_audit_entry(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write([InsertPause(_pause())], fence=fence)
        resolve = await _resolve(store)
        first, second = await store.write([resolve, resolve])
        assert first is not None
        assert first.status is PauseStatus.RESOLVED
        assert first.answer == ANSWER
        assert second is None
        [entry] = await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
            "acme", "ex-1"
        )
        assert entry.resolution is PauseResolution.REPLIED
        assert entry.responder == "u"
        cancelled = await store.pauses.cancel_by_tenant_id_and_pause_id(
            "acme", "p" * 32, resolution=PauseResolution.CANCELLED, now=NOW
        )
        assert cancelled is None

    async def test_a_resolved_pause_is_taken_once(self, store: Store) -> None:
        fence = await self._begin(store)
        await store.write([InsertPause(_pause())], fence=fence)
        await store.write([await _resolve(store)])
        await store.write([TakePause("acme", "p" * 32), TakePause("acme", "p" * 32)], fence=fence)
        found = await store.pauses.find_by_tenant_id_and_pause_id("acme", "p" * 32)
        assert found is not None
        assert found.status is PauseStatus.TAKEN

    async def test_pending_to_cancelled_happens_once_and_owes_a_sent_pause_a_withdraw(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write([InsertPause(_pause()), InsertPause(_pause("q" * 32, "k2"))], fence=fence)
        assert await store.write([MarkPauseSent("acme", "p" * 32)]) == [PauseStatus.PENDING]
        closed, unsent, again = await store.write(
            [
                CancelPause("acme", "p" * 32, PauseResolution.WITHDRAWN, NOW),
                CancelPause("acme", "q" * 32, PauseResolution.WITHDRAWN, NOW),
                CancelPause("acme", "p" * 32, PauseResolution.CANCELLED, NOW),
            ]
        )
        assert closed is not None
        assert closed.is_sent
        assert closed.resolution is PauseResolution.WITHDRAWN
        assert unsent is not None
        assert again is None
        assert [p.pause_id for p in await store.pauses.find_due_withdrawals("ex-1")] == ["p" * 32]
        entries = await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
            "acme", "ex-1"
        )
        assert [e.resolution for e in entries] == [PauseResolution.WITHDRAWN] * 2

    async def test_a_pause_closed_while_its_send_returned_owes_a_withdraw(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write([InsertPause(_pause())], fence=fence)
        await store.write([CancelPause("acme", "p" * 32, PauseResolution.CANCELLED, NOW)])
        assert await store.pauses.find_due_withdrawals("ex-1") == []
        assert await store.write([MarkPauseSent("acme", "p" * 32)]) == [PauseStatus.CANCELLED]
        assert len(await store.pauses.find_due_withdrawals("ex-1")) == 1

    async def test_closing_under_a_path_touches_only_that_branchs_pauses(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        a, b = "ex-1|2:l#0@0/", "ex-1|2:l#0@1/"
        await store.write(
            [
                InsertPause(_pause("1" * 32, "k1", path=a)),
                InsertPause(_pause("2" * 32, "k2", path=a)),
                InsertPause(_pause("3" * 32, "k3", path=b)),
            ],
            fence=fence,
        )
        await store.write([await _resolve(store, "2" * 32)])
        under = await store.pauses.find_under("ex-1", a, (PauseStatus.PENDING,))
        assert [p.pause_id for p in under] == ["1" * 32]
        closed, taken = await store.write(
            [
                CancelPendingUnder("ex-1", a, PauseResolution.WITHDRAWN, NOW),
                TakeResolvedUnder("ex-1", a),
            ],
            fence=fence,
        )
        assert [p.pause_id for p in closed] == ["1" * 32]
        assert taken == 1
        left = await store.pauses.find_by_root("ex-1", (PauseStatus.PENDING,))
        assert [p.pause_id for p in left] == ["3" * 32]

    async def test_pending_lists_the_owners_pauses_first_and_hides_a_channels_id(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write(
            [
                InsertPause(_pause("c" * 32, "k1", answered_by=PauseAnswerer.CHANNEL)),
                InsertPause(_pause("o" * 32, "k2")),
            ],
            fence=fence,
        )
        pending = await store.pauses.list_pending("ex-1")
        assert [p.answered_by for p in pending] == [
            PauseAnswerer.THREAD_OWNER,
            PauseAnswerer.CHANNEL,
        ]
        assert pending[0].pause_id == "o" * 32
        assert pending[1].pause_id != "c" * 32
        assert pending[0].ask.arguments == {"n": 1}
        # As every instance reads them back from the database (a store may keep what it
        # inserted): the inbox decodes each row.
        waiting = await store.pauses.list_waiting(WaitingQuery("acme"))
        assert sorted(pending, key=repr) == sorted((w.pause for w in waiting), key=repr)

    async def test_an_inbox_lists_a_tenants_waiting_pauses_oldest_first_by_keyset(
        self, store: Store
    ) -> None:
        first = await self._begin(store)
        second = await self._begin(store, _row("ex-2", thread_id="th-2", owner_id="v"))
        later = NOW + timedelta(minutes=5)
        await store.write(
            [
                InsertPause(_pause("a" * 32, "k1")),
                InsertPause(
                    replace(
                        _pause("b" * 32, "k2", answered_by=PauseAnswerer.CHANNEL), asked_at=later
                    )
                ),
            ],
            fence=first,
        )
        await store.write(
            [
                InsertPause(
                    replace(
                        _pause("c" * 32, "k1"),
                        root_execution_id="ex-2",
                        execution_id="ex-2",
                        child_execution_id=None,
                        asked_at=later + timedelta(minutes=1),
                    )
                )
            ],
            fence=second,
        )
        everything = await store.pauses.list_waiting(WaitingQuery("acme"))
        assert [w.pause.pause_id for w in everything] == ["a" * 32, None, "c" * 32]
        assert [w.owner_id for w in everything] == ["u", "u", "v"]
        assert everything[2].thread_id == "th-2"
        assert await store.pauses.count_waiting(WaitingQuery("acme")) == 3
        page = await store.pauses.list_waiting(WaitingQuery("acme", limit=2))
        last = page[-1]
        rest = await store.pauses.list_waiting(
            WaitingQuery("acme", after=(last.asked_at, last.root_execution_id, last.seq))
        )
        assert [w.pause.pause_id for w in page + rest] == ["a" * 32, None, "c" * 32]
        mine = WaitingQuery("acme", owner_id="v")
        assert [w.pause.pause_id for w in await store.pauses.list_waiting(mine)] == ["c" * 32]
        early = WaitingQuery("acme", asked_before=later)
        assert await store.pauses.count_waiting(early) == 1
        assert await store.pauses.count_waiting(WaitingQuery("other")) == 0
        elsewhere = WaitingQuery("acme", channel="another-channel")
        assert await store.pauses.list_waiting(elsewhere) == []

    async def test_a_tree_rests_paused_with_its_lease_freed(self, store: Store) -> None:
        fence = await self._begin(store)
        await store.write([InsertPause(_pause())], fence=fence)
        [rested] = await store.write([RestTree(fence, NOW, frozenset())], fence=fence)
        assert rested == Rested(cancelled=False, pending=("p" * 32,))
        found = await store.executions.find_by_id("ex-1")
        assert found is not None
        assert found.status is ExecutionStatus.PAUSED
        [taken] = await store.write([AcquireLease("ex-1", "b", TTL, NOW)])
        assert taken is not None  # freed

    async def test_a_rested_tree_names_its_pending_pauses_in_the_order_results_list_them(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write(
            [
                InsertPause(_pause("c" * 32, "k1", answered_by=PauseAnswerer.CHANNEL)),
                InsertPause(_pause("o" * 32, "k2")),
                InsertPause(_pause("r" * 32, "k3")),
            ],
            fence=fence,
        )
        await store.write([await _resolve(store, "r" * 32)])
        [rested] = await store.write([RestTree(fence, NOW, frozenset({"r" * 32}))], fence=fence)
        assert rested is not None
        assert rested.pending == ("o" * 32, "c" * 32)  # the owner's first, then the channels'
        listed = await store.pauses.list_pending("ex-1")
        assert await store.pauses.list_pending("ex-1", rested.pending) == listed

    async def test_a_tree_does_not_rest_on_an_answer_its_pass_has_not_tried(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write(
            [InsertPause(_pause("1" * 32, "k1")), InsertPause(_pause("2" * 32, "k2"))],
            fence=fence,
        )
        await store.write([await _resolve(store, "1" * 32)])
        assert await store.write([RestTree(fence, NOW, frozenset())], fence=fence) == [None]
        assert await store.write([AcquireLease("ex-1", "b", TTL, NOW)]) == [None]  # still held
        found = await store.executions.find_by_id("ex-1")
        assert found is not None
        assert found.status is ExecutionStatus.RUNNING
        # An answer the pass has tried (and could not take) does not hold it.
        tried = frozenset({"1" * 32})
        [rested] = await store.write([RestTree(fence, NOW, tried)], fence=fence)
        assert rested == Rested(cancelled=False, pending=("2" * 32,))

    async def test_a_tree_rests_without_the_check_when_told_and_stays_cancelled(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write([InsertPause(_pause())], fence=fence)
        await store.write([await _resolve(store)])
        await store.write([CancelExecutions("ex-1", NOW)])
        [rested] = await store.write([RestTree(fence, NOW, None)], fence=fence)
        assert rested == Rested(cancelled=True, pending=())
        found = await store.executions.find_by_id("ex-1")
        assert found is not None
        assert found.status is ExecutionStatus.CANCELLED
        [taken] = await store.write([AcquireLease("ex-1", "b", TTL, NOW)])
        assert taken is not None

    async def test_a_pause_is_found_with_the_execution_it_waits_in(self, store: Store) -> None:
        fence = await self._begin(store)
        child = _row("ex-1/2:launch#0@0", parent=_row())
        await store.write([InsertChild(child)], fence=fence)
        await store.write(
            [
                InsertPause(_pause("a" * 32, "k1")),
                InsertPause(_pause("b" * 32, "k2", execution_id=child.execution_id)),
            ],
            fence=fence,
        )
        found = await store.pauses.find_with_execution("acme", "b" * 32)
        assert found is not None
        pause, execution = found
        assert pause == await store.pauses.find_by_tenant_id_and_pause_id("acme", "b" * 32)
        assert execution == await store.executions.find_by_id(child.execution_id)
        at_root = await store.pauses.find_with_execution("acme", "a" * 32)
        assert at_root is not None
        assert at_root[1].execution_id == "ex-1"
        assert await store.pauses.find_with_execution("other", "a" * 32) is None
        assert await store.pauses.find_with_execution("acme", "c" * 32) is None

    async def test_an_answer_to_a_pause_answered_before_adds_no_audit_entry(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write([InsertPause(_pause())], fence=fence)
        stored = await store.pauses.find_by_tenant_id_and_pause_id("acme", "p" * 32)
        assert stored is not None
        await store.write([await _resolve(store)])
        later = PauseAnswer(decision=ToolCallApprovalDecisionDto(approved=False), responder="v")
        late = ResolvePause(stored, PauseStatus.RESOLVED, PauseResolution.REPLIED, later, NOW + TTL)
        assert await store.write([late]) == [None]
        [entry] = await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
            "acme", "ex-1"
        )
        assert entry.responder == "u"
        found = await store.pauses.find_by_tenant_id_and_pause_id("acme", "p" * 32)
        assert found is not None
        assert found.answer == ANSWER

    async def test_a_pause_is_found_only_under_its_own_tenant(self, store: Store) -> None:
        fence = await self._begin(store)
        await store.write([InsertPause(_pause())], fence=fence)
        assert await store.pauses.find_by_tenant_id_and_pause_id("other", "p" * 32) is None
        assert await store.write([MarkPauseSent("other", "p" * 32)]) == [None]

    async def test_retention_removes_closed_pauses_whose_channels_were_told(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        keys = ["pending", "resolved", "taken", "cancelled", "owed"]
        await store.write(
            [InsertPause(_pause(str(i) * 32, key)) for i, key in enumerate(keys)], fence=fence
        )
        await store.write([MarkPauseSent("acme", "4" * 32)])
        await store.write(
            [
                await _resolve(store, "1" * 32),
                await _resolve(store, "2" * 32, PauseStatus.TAKEN),
                CancelPause("acme", "3" * 32, PauseResolution.CANCELLED, NOW),
                CancelPause("acme", "4" * 32, PauseResolution.CANCELLED, NOW),
            ]
        )
        assert await store.pauses.delete_resolved_before(NOW) == 0
        later = NOW + timedelta(seconds=1)
        assert await store.write([DeleteResolvedPauses(later)]) == [2]
        left = await store.pauses.find_by_root("ex-1", tuple(PauseStatus))
        assert [p.pause_id[0] for p in left] == ["0", "1", "4"]
        await store.write([MarkWithdrawn("acme", "4" * 32)])
        assert await store.pauses.delete_resolved_before(later) == 1

    async def test_an_audit_entry_is_written_once_per_pause(self, store: Store) -> None:
        fence = await self._begin(store)
        [made] = await store.write([InsertPause(_pause())], fence=fence)
        entry = PauseAnswerRecord.of(made, PauseResolution.REPLIED, NOW, ANSWER)
        await store.records.save_pause_answer("acme", "ex-1", entry)
        other = PauseAnswerRecord.of(made, PauseResolution.CANCELLED, NOW, None)
        await store.write([SavePauseAnswer("acme", "ex-1", other)])
        found = await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
            "acme", "ex-1"
        )
        assert found == [entry]
        assert (
            await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
                "other", "ex-1"
            )
            == []
        )

    # ---- what a store cannot keep -----------------------------------------------------

    async def test_a_value_the_store_cannot_keep_is_a_store_error_and_writes_nothing(
        self, store: Store
    ) -> None:
        bad: list[Any] = ["\ud800", "nul\x00"]
        for value in bad:
            try:
                await store.write([BeginExecution(_row(value, thread_id=value), "a", TTL, NOW)])
            except StoreError:
                continue
            found = await store.executions.find_by_id(value)
            assert found is not None  # a store that keeps it keeps it whole
            assert found.thread_id == value
