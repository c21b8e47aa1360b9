"""Builds in SQL: each definition's parts kept by its fingerprint (`RecordBuild`), and the
builds whose executions have not ended, written once for every dialect."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from agboss.store._times import to_micros
from agboss.store.protocol import WaitingBuild
from agboss.store.sql._dialect import Returns, Sql
from agboss.store.sql._driver import Driver
from agboss.store.sql._statements import Ops, do
from agboss.store.writes import RecordBuild

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


BUILD_OPS: dict[type[Any], Callable[[Any], Ops]] = {RecordBuild: record_build}


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
