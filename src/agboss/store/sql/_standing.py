"""Standing decisions in SQL: their writes (`GrantStanding`, `RevokeStanding`) and their
repository, written once for every dialect."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from agboss.enums import StandingScope
from agboss.records import StandingDecision
from agboss.store._times import from_micros, to_micros
from agboss.store.sql._dialect import Returns, Sql
from agboss.store.sql._driver import Driver
from agboss.store.sql._statements import Ops, do, one_later, when
from agboss.store.writes import FindStanding, GrantStanding, RevokeStanding

__all__ = ["STANDING_OPS", "SqlStandingDecisionRepository"]

_COLUMNS = (
    "decision_id, tenant_id, tool, role, scope, thread_id, owner_id, granted_by, reason, "
    "granted_at, until_at, revoked_at, revoked_by"
)


def _decision_of(row: Any) -> StandingDecision:
    return StandingDecision(
        decision_id=str(row[0]),
        tenant_id=str(row[1]),
        tool=row[2],
        role=row[3],
        scope=StandingScope(row[4]),
        thread_id=row[5],
        owner_id=row[6],
        granted_by=str(row[7]),
        reason=row[8],
        granted_at=from_micros(int(row[9])),
        until=None if row[10] is None else from_micros(int(row[10])),
        revoked_at=None if row[11] is None else from_micros(int(row[11])),
        revoked_by=row[12],
    )


def _grant(write: GrantStanding) -> Ops:
    decision = write.decision
    yield do(
        f"INSERT INTO standing_decisions ({_COLUMNS}, granted_seq) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, (SELECT COALESCE(MAX(granted_seq), "
        "0) + 1 FROM standing_decisions WHERE tenant_id = ?))",
        decision.decision_id,
        decision.tenant_id,
        decision.tool,
        decision.role,
        decision.scope.value,
        decision.thread_id,
        decision.owner_id,
        decision.granted_by,
        decision.reason,
        to_micros(decision.granted_at),
        None if decision.until is None else to_micros(decision.until),
        decision.tenant_id,  # numbered in the order granted: ties at one instant keep it
    )


def _revoke(write: RevokeStanding) -> Ops:
    later = yield one_later(
        "UPDATE standing_decisions SET revoked_at = ?, revoked_by = ? "
        "WHERE tenant_id = ? AND decision_id = ? AND revoked_at IS NULL "
        f"RETURNING {_COLUMNS}",
        to_micros(write.now),
        write.revoked_by,
        write.tenant_id,
        write.decision_id,
    )
    return when(later, lambda row: None if row is None else _decision_of(row))


def _covering(find: FindStanding, returns: Returns) -> Sql:
    """The first decision granted that stands at ``now`` and approves the call."""
    return Sql(
        f"SELECT {_COLUMNS} FROM standing_decisions "
        "WHERE tenant_id = ? AND revoked_at IS NULL "
        "AND (until_at IS NULL OR until_at > ?) AND (tool = ? OR role = ?) "
        "AND (scope = 'tenant' OR (scope = 'thread' AND thread_id = ?) "
        "OR (scope = 'owner' AND owner_id = ?)) "
        "ORDER BY granted_at, granted_seq, decision_id LIMIT 1",
        (
            find.tenant_id,
            to_micros(find.now),
            find.tool,
            find.role,
            find.thread_id,
            find.owner_id,
        ),
        returns,
    )


def _find(write: FindStanding) -> Ops:
    later = yield _covering(write, Returns.LATER_ONE)
    return when(later, lambda row: None if row is None else _decision_of(row))


STANDING_OPS: dict[type[Any], Callable[[Any], Ops]] = {
    FindStanding: _find,
    GrantStanding: _grant,
    RevokeStanding: _revoke,
}


class SqlStandingDecisionRepository:
    """The standing decisions of a SQL store."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver

    async def covering(
        self,
        tenant_id: str,
        *,
        tool: str,
        role: str,
        thread_id: str,
        owner_id: str,
        now: datetime,
    ) -> StandingDecision | None:
        find = FindStanding(tenant_id, tool, role, thread_id, owner_id, now)
        row = await self._driver.read(_covering(find, Returns.ONE))
        return None if row is None else _decision_of(row)

    async def find(self, tenant_id: str, decision_id: str) -> StandingDecision | None:
        row = await self._driver.read(
            Sql(
                f"SELECT {_COLUMNS} FROM standing_decisions "
                "WHERE tenant_id = ? AND decision_id = ?",
                (tenant_id, decision_id),
                Returns.ONE,
            )
        )
        return None if row is None else _decision_of(row)

    async def list(self, tenant_id: str, *, revoked: bool = False) -> list[StandingDecision]:
        standing = "" if revoked else " AND revoked_at IS NULL"
        rows = await self._driver.read(
            Sql(
                f"SELECT {_COLUMNS} FROM standing_decisions WHERE tenant_id = ?{standing} "
                "ORDER BY granted_at, granted_seq, decision_id",
                (tenant_id,),
                Returns.ALL,
            )
        )
        return [_decision_of(row) for row in rows]
