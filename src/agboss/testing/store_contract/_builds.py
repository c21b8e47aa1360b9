"""The store contract's builds: each execution keeps the fingerprint of the build it began
under, each definition's parts are kept once by fingerprint, the builds whose executions
have not ended are counted, with the calls their trees wait on, and a tree moved to a new
build by its workflow's continuation is moved whole, under its lease, with its audit entry."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agboss.dto import ToolCallApprovalAskDto, ToolCallApprovalDecisionDto
from agboss.enums import ExecutionStatus, PauseResolution, PauseStatus
from agboss.errors import LeaseLostError
from agboss.records import ContinuationRecord, ContinuedCall, PauseAnswer, PauseRecord
from agboss.store.protocol import Fence, Store, WaitingBuild, WaitingCall
from agboss.store.writes import (
    AppendStep,
    CancelPendingUnder,
    ContinueTree,
    InsertChild,
    InsertPause,
    MovedCall,
    RecordBuild,
    ResolvePause,
    SetExecutionStatus,
)
from agboss.testing.store_contract._support import (
    ANSWER,
    NOW,
    Contract,
    make_entry,
    make_pause,
    make_row,
)

__all__ = ["BuildContract"]

OFFICE = "office-workflow"
CHANNEL = "expense-approval-channel"


class BuildContract(Contract):
    """Builds: fingerprints on executions, definitions' parts, the builds that wait."""

    async def test_an_execution_keeps_the_fingerprint_of_the_build_it_began_under(
        self, store: Store
    ) -> None:
        root = replace(make_row(), fingerprint="5312ea87c69d0caa")
        fence = await self._begin(store, root)
        child = replace(make_row("ex-1/2:step#0", parent=root), fingerprint="d7039ccfd59ebfcb")
        older = make_row("ex-1/3:step#0", parent=root)  # begun before builds had one
        await store.write([InsertChild(child), InsertChild(older)], fence=fence)
        found = [
            await store.executions.find("acme", "ex-1"),
            await store.executions.find_by_id(child.execution_id),
            await store.executions.find_by_id(older.execution_id),
        ]
        expected = [root.fingerprint, child.fingerprint, None]
        assert [row.fingerprint for row in found if row is not None] == expected
        outline = await store.executions.outline("ex-1")
        assert [node.fingerprint for node in outline] == expected

    async def test_a_definitions_parts_are_kept_once_by_its_fingerprint(self, store: Store) -> None:
        parts = {"flow": "1384e70cbae093ed", "tool:refund-tool": "8a3e8ec08b74e1f1"}
        await store.write([RecordBuild((("f1", OFFICE, "1", parts),), NOW)])
        again = (("f1", OFFICE, "1", {"flow": "other"}), ("f2", OFFICE, "2", {"flow": "f2"}))
        await store.write([RecordBuild(again, NOW)])
        assert await store.builds.parts(["f1", "f2", "f9"]) == {"f1": parts, "f2": {"flow": "f2"}}
        assert await store.builds.parts([]) == {}

    async def test_the_builds_whose_executions_have_not_ended_are_counted(
        self, store: Store
    ) -> None:
        root = replace(make_row(), fingerprint="f1")
        fence = await self._begin(store, root)
        same = replace(make_row("ex-1/2:step#0", parent=root), fingerprint="f1")
        ended = replace(make_row("ex-1/3:step#0", parent=root), fingerprint="f0")
        unknown = make_row("ex-1/4:step#0", parent=root)  # begun before fingerprints
        other = replace(make_row("ex-1/5:step#0", parent=root), workflow="other", fingerprint="f3")
        inserted = [InsertChild(row) for row in (same, ended, unknown, other)]
        await store.write(inserted, fence=fence)
        done = SetExecutionStatus(ended.execution_id, ExecutionStatus.COMPLETED, NOW, "{}")
        await store.write([done], fence=fence)
        assert await store.builds.waiting([OFFICE]) == [WaitingBuild(OFFICE, "1", "f1", 2)]
        assert await store.builds.waiting([OFFICE, "other"]) == [
            WaitingBuild(OFFICE, "1", "f1", 2),
            WaitingBuild("other", "1", "f3", 1),
        ]
        assert await store.builds.waiting([]) == []

    async def test_the_calls_waiting_trees_wait_on_are_read_by_their_roots_build(
        self, store: Store
    ) -> None:
        root = replace(make_row(), fingerprint="f1")
        fence = await self._begin(store, root)
        child = make_row("ex-1/2:step#0", parent=root)  # a child's pause counts for its root
        await store.write([InsertChild(child)], fence=fence)
        stamp = ToolCallApprovalAskDto(tool="stamp-tool", call_id="c2", arguments={})
        shred = ToolCallApprovalAskDto(tool="shred-tool", call_id="c3", arguments={})
        stamping = InsertPause(replace(make_pause("c" * 32, "k3"), ask=stamp))
        shredding = InsertPause(replace(make_pause("d" * 32, "k4"), ask=shred))
        inserted = await store.write(
            [
                InsertPause(make_pause("a" * 32, "k1")),
                InsertPause(make_pause("b" * 32, "k2", execution_id=child.execution_id)),
                stamping,
                shredding,
            ],
            fence=fence,
        )
        stamped, shredded = inserted[stamping], inserted[shredding]
        # Answered and not yet taken: still waited on; taken: not.
        resolved = PauseResolution.REPLIED
        await store.write([ResolvePause(stamped, PauseStatus.RESOLVED, resolved, ANSWER, NOW)])
        await store.write([ResolvePause(shredded, PauseStatus.TAKEN, resolved, ANSWER, NOW)])
        other = replace(make_row("ex-9", thread_id="th-9"), workflow_version="2")
        other_fence = await self._begin(store, other)
        waiting_other = replace(
            make_pause("e" * 32, "k1", execution_id="ex-9"), root_execution_id="ex-9"
        )
        cancelled = replace(
            make_pause("f" * 32, "k2", execution_id="ex-9"), root_execution_id="ex-9", ask=stamp
        )
        await store.write([InsertPause(waiting_other)], fence=other_fence)
        await store.write([InsertPause(cancelled)], fence=other_fence)
        assert await store.builds.calls([OFFICE]) == [
            WaitingCall(OFFICE, "1", "f1", "office-agent", "book-expense-tool", CHANNEL, 1),
            WaitingCall(OFFICE, "1", "f1", "office-agent", "stamp-tool", CHANNEL, 1),
            WaitingCall(OFFICE, "2", None, "office-agent", "book-expense-tool", CHANNEL, 1),
            WaitingCall(OFFICE, "2", None, "office-agent", "stamp-tool", CHANNEL, 1),
        ]
        await store.write(
            [CancelPendingUnder("ex-9", "", PauseResolution.CANCELLED, NOW)], fence=other_fence
        )
        assert [call.version for call in await store.builds.calls([OFFICE])] == ["1", "1"]
        assert await store.builds.calls(["other"]) == []
        assert await store.builds.calls([]) == []

    async def test_a_tree_moved_by_a_continuation_runs_under_the_new_build_with_its_calls_mapped(
        self, store: Store
    ) -> None:
        root = replace(make_row(), fingerprint="f1")
        fence = await self._begin(store, root)
        turn_key = "1:a#0/turn-0/model"
        turn = replace(make_entry(turn_key), result_json='{"content": "", "tool_calls": []}')
        asked = [
            make_pause(letter * 32, f"1:a#0/turn-0/tool-{n}") for n, letter in enumerate("abc")
        ]
        await store.write(
            [AppendStep("ex-1", turn, NOW), *(InsertPause(pause) for pause in asked)], fence=fence
        )
        given = PauseAnswer(decision=_approved({"n": 2}), responder="u")
        for letter in "bc":
            pause = await self._stored(store, letter)
            await store.write(
                [ResolvePause(pause, PauseStatus.RESOLVED, PauseResolution.REPLIED, given, NOW)]
            )
        pending, answered, changed = [await self._stored(store, letter) for letter in "abc"]
        filed = ToolCallApprovalAskDto(tool="file-expense-tool", call_id="c1", arguments={"c": 1})
        mapped_answer = PauseAnswer(decision=_approved({"c": 2}), responder="u")
        mapped = '{"content":"","tool_calls":[{"id":"c1","name":"file-expense-tool"}]}'
        entry = ContinuationRecord(
            continued_at=NOW.isoformat(),
            from_version="1",
            to_version="2",
            from_fingerprint="f1",
            to_fingerprint="f2",
            calls=[
                ContinuedCall(
                    execution_id="ex-1",
                    step=pending.step_key,
                    agent="office-agent",
                    before_tool="book-expense-tool",
                    before_arguments={"n": 1},
                    tool="file-expense-tool",
                    arguments={"c": 1},
                )
            ],
        )
        moved = (
            MovedCall(replace(pending, ask=filed), pending, turn_key, mapped),
            MovedCall(
                replace(answered, ask=filed, answer=mapped_answer), answered, turn_key, mapped
            ),
            # Read before its answer came: the answer recorded meanwhile stays as it was.
            MovedCall(
                replace(changed, ask=filed),
                replace(changed, status=PauseStatus.PENDING, answer=None, resolved_at=None),
                turn_key,
                mapped,
            ),
        )
        build = RecordBuild((("f2", OFFICE, "2", {"flow": "f2"}),), NOW)
        move = ContinueTree(fence, entry, moved, build)
        with pytest.raises(LeaseLostError):  # under the tree's lease only
            await store.write([move], fence=Fence("ex-1", "someone-else", fence.epoch + 1))
        assert await store.builds.continuations("ex-1") == []
        await store.write([move], fence=fence)
        row = await store.executions.find("acme", "ex-1")
        assert row is not None
        assert (row.workflow_version, row.fingerprint) == ("2", "f2")
        now = [await self._stored(store, letter) for letter in "abc"]
        assert [pause.ask for pause in now] == [filed] * 3
        assert [pause.answer for pause in now] == [None, mapped_answer, given]
        journal = await store.journal.load("ex-1", "1:a#0/turn-0/")
        assert journal[turn_key].result_json == mapped
        assert await store.builds.parts(["f2"]) == {"f2": {"flow": "f2"}}
        assert await store.builds.continuations("ex-1") == [entry]
        assert await store.builds.continuations("ex-9") == []

    async def _stored(self, store: Store, letter: str) -> PauseRecord:
        found = await store.pauses.find_by_tenant_id_and_pause_id("acme", letter * 32)
        assert found is not None
        return found


def _approved(arguments: dict[str, int]) -> ToolCallApprovalDecisionDto:
    return ToolCallApprovalDecisionDto(approved=True, override_arguments=arguments)
