"""Builds in SQL: each definition's parts kept by its fingerprint (`RecordBuild`), the builds
whose executions have not ended and what they wait on, the running instances and what they
serve (`KeepInstance`), the trees none serves, and a tree moved to a new build by its
workflow's continuation (`ContinueTree`) — written once for every dialect."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from agboss.records import ContinuationRecord
from agboss.store._rows import EXECUTION_READ, execution_of
from agboss.store._times import to_micros
from agboss.store.protocol import (
    ExecutionRow,
    Served,
    StrandedQuery,
    WaitingBuild,
    WaitingCall,
)
from agboss.store.sql._dialect import Returns, Sql
from agboss.store.sql._driver import Driver
from agboss.store.sql._serving import served_by_root
from agboss.store.sql._statements import Ops, do
from agboss.store.writes import ContinueTree, KeepInstance, LeaveInstance, RecordBuild

__all__ = ["BUILD_OPS", "SqlBuildRepository", "record_build"]


def record_build(write: RecordBuild) -> Ops:
    """`RecordBuild`'s statements (also a first `BeginExecution`'s)."""
    for fingerprint, workflow, version, parts in write.definitions:
        yield do(
            "INSERT INTO definitions (fingerprint, workflow, version, parts, recorded_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            fingerprint,
            workflow,
            version,
            json.dumps(dict(parts), sort_keys=True),
            to_micros(write.at),
        )


FORGOTTEN_AFTER = timedelta(days=1)
"""How long after its time passed an instance's row is kept (to be read as gone) before the
next `KeepInstance` of any instance removes it."""


def _keep_instance(write: KeepInstance) -> Ops:
    served = [[each.workflow, list(each.versions), list(each.prefixes)] for each in write.served]
    yield do(
        "INSERT INTO instances (instance_id, application, served, started_at, seen_until) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (instance_id) DO UPDATE SET "
        "served = excluded.served, seen_until = excluded.seen_until",
        write.instance_id,
        write.application,
        json.dumps(served),
        to_micros(write.at),
        to_micros(write.until),
    )
    yield do("DELETE FROM instances WHERE seen_until < ?", to_micros(write.at - FORGOTTEN_AFTER))


def _leave_instance(write: LeaveInstance) -> Ops:
    yield do("DELETE FROM instances WHERE instance_id = ?", write.instance_id)


def _continue_tree(write: ContinueTree) -> Ops:
    entry = write.entry
    root = write.fence.root_execution_id
    if write.build is not None:
        yield from record_build(write.build)
    yield do(
        "UPDATE executions SET workflow_version = ?, fingerprint = ? WHERE execution_id = ?",
        entry.to_version,
        entry.to_fingerprint,
        root,
    )
    for moved in write.moved:
        pause, was = moved.pause, moved.was
        answer = None if was.answer is None else was.answer.model_dump_json()
        now = None if pause.answer is None else pause.answer.model_dump_json()
        yield do(
            "UPDATE pauses SET ask_json = ?, step_json = ?, "
            # A decision's arguments are mapped only as read: one recorded meanwhile stays.
            "answer_json = CASE WHEN answer_json = ? THEN ? ELSE answer_json END "
            "WHERE tenant_id = ? AND pause_id = ?",
            pause.ask.model_dump_json(),
            pause.step.model_dump_json(),
            answer,
            now,
            pause.tenant_id,
            pause.pause_id,
        )
        yield do(
            "UPDATE steps SET result_json = ? WHERE execution_id = ? AND step_key = ?",
            moved.turn_json,
            pause.execution_id,
            moved.turn_key,
        )
    yield do(
        "INSERT INTO continuations (root_execution_id, seq, continued_at, entry_json) "
        "VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM continuations "
        "WHERE root_execution_id = ?), ?, ?)",
        root,
        root,
        to_micros(datetime.fromisoformat(entry.continued_at)),
        entry.model_dump_json(),
    )


BUILD_OPS: dict[type[Any], Callable[[Any], Ops]] = {
    ContinueTree: _continue_tree,
    RecordBuild: record_build,
    KeepInstance: _keep_instance,
    LeaveInstance: _leave_instance,
}


def _marks(values: Sequence[str]) -> str:
    return ", ".join("?" * len(values))


class SqlBuildRepository:
    """The builds of a SQL store."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver

    async def waiting(self, workflows: Sequence[str]) -> list[WaitingBuild]:
        if not workflows:
            return []
        rows = await self._driver.read(
            Sql(
                "SELECT workflow, workflow_version, fingerprint, COUNT(*) FROM executions "
                "WHERE status IN ('running', 'paused', 'waiting') AND fingerprint IS NOT NULL "
                f"AND workflow IN ({_marks(workflows)}) "
                "GROUP BY workflow, workflow_version, fingerprint "
                "ORDER BY workflow, workflow_version, fingerprint",
                tuple(workflows),
                Returns.ALL,
            )
        )
        return [WaitingBuild(str(r[0]), str(r[1]), str(r[2]), int(r[3])) for r in rows]

    async def parts(self, fingerprints: Sequence[str]) -> dict[str, dict[str, str]]:
        if not fingerprints:
            return {}
        rows = await self._driver.read(
            Sql(
                "SELECT fingerprint, parts FROM definitions "
                f"WHERE fingerprint IN ({_marks(fingerprints)})",
                tuple(fingerprints),
                Returns.ALL,
            )
        )
        return {str(row[0]): dict(json.loads(row[1])) for row in rows}

    async def calls(self, workflows: Sequence[str]) -> list[WaitingCall]:
        if not workflows:
            return []
        named = _marks(workflows)
        rows = await self._driver.read(
            Sql(
                "SELECT r.workflow, r.workflow_version, r.fingerprint, p.agent, "
                "{ask_tool} AS tool, p.channel, COUNT(DISTINCT r.execution_id) "
                "FROM pauses AS p JOIN executions AS r ON r.execution_id = p.root_execution_id "
                f"WHERE p.status IN ('pending', 'resolved') AND r.workflow IN ({named}) "
                "GROUP BY r.workflow, r.workflow_version, r.fingerprint, p.agent, {ask_tool}, "
                "p.channel ORDER BY r.workflow, r.workflow_version, p.agent, tool, p.channel",
                tuple(workflows),
                Returns.ALL,
            )
        )
        return [
            WaitingCall(
                str(r[0]),
                str(r[1]),
                None if r[2] is None else str(r[2]),
                str(r[3]),
                str(r[4]),
                str(r[5]),
                int(r[6]),
            )
            for r in rows
        ]

    async def waiting_trees(self, workflow: str, version: str, limit: int) -> list[ExecutionRow]:
        rows = await self._driver.read(
            Sql(
                f"SELECT {EXECUTION_READ} FROM executions AS e "
                "WHERE e.parent_execution_id IS NULL AND e.status IN ('running', 'paused', "
                "'waiting') AND e.workflow = ? AND e.workflow_version = ? "
                "ORDER BY e.created_at, e.execution_id LIMIT ?",
                (workflow, version, limit),
                Returns.ALL,
            )
        )
        return [execution_of(row) for row in rows]

    async def continuations(self, root_execution_id: str) -> list[ContinuationRecord]:
        rows = await self._driver.read(
            Sql(
                "SELECT entry_json FROM continuations WHERE root_execution_id = ? ORDER BY seq",
                (root_execution_id,),
                Returns.ALL,
            )
        )
        return [ContinuationRecord.model_validate_json(row[0]) for row in rows]

    async def serving(self, now: datetime) -> list[Served]:
        rows = await self._driver.read(
            Sql("SELECT served FROM instances WHERE seen_until > ?", (to_micros(now),), Returns.ALL)
        )
        versions: dict[str, dict[str, None]] = {}
        prefixes: dict[str, dict[str, None]] = {}
        for (served,) in rows:
            for workflow, exact, starts in json.loads(served):
                versions.setdefault(workflow, {}).update(dict.fromkeys(exact))
                prefixes.setdefault(workflow, {}).update(dict.fromkeys(starts))
        return [
            Served(workflow, tuple(sorted(versions[workflow])), tuple(sorted(prefixes[workflow])))
            for workflow in sorted(versions)
        ]

    async def stranded(self, query: StrandedQuery) -> list[ExecutionRow]:
        serving, by = served_by_root(query.served)
        where = (
            "e.parent_execution_id IS NULL "
            f"AND e.status IN ('running', 'paused', 'waiting') AND NOT {serving}"
        )
        params: list[Any] = [*by]
        if query.tenant_id is not None:
            where += " AND e.tenant_id = ?"
            params.append(query.tenant_id)
        if query.after is not None:
            at, execution_id = query.after
            where += " AND (e.created_at, e.execution_id) > (?, ?)"
            params += [to_micros(at), execution_id]
        rows = await self._driver.read(
            Sql(
                f"SELECT {EXECUTION_READ} FROM executions AS e WHERE {where} "
                "ORDER BY e.created_at, e.execution_id LIMIT ?",
                (*params, query.limit),
                Returns.ALL,
            )
        )
        return [execution_of(row) for row in rows]
