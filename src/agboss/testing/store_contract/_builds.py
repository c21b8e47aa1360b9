"""The store contract's builds: each execution keeps the fingerprint of the build it began
under, each definition's parts are kept once by fingerprint, and the builds whose executions
have not ended are counted."""

from __future__ import annotations

from dataclasses import replace

from agboss.enums import ExecutionStatus
from agboss.store.protocol import Store, WaitingBuild
from agboss.store.writes import InsertChild, RecordBuild, SetExecutionStatus
from agboss.testing.store_contract._support import NOW, Contract, make_row

__all__ = ["BuildContract"]

OFFICE = "office-workflow"


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
