"""Delegations in SQL: their writes (`GrantDelegation`, `RevokeDelegation`) and their
repository, written once for every dialect."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from agboss.records import Delegation
from agboss.store._times import from_micros, to_micros
from agboss.store.sql._dialect import Returns, Sql
from agboss.store.sql._driver import Driver
from agboss.store.sql._statements import Ops, do, one_later, when
from agboss.store.writes import GrantDelegation, RevokeDelegation

__all__ = ["DELEGATION_OPS", "SqlDelegationRepository"]

_COLUMNS = (
    "delegation_id, tenant_id, principal, delegate, role, tool, granted_by, reason, "
    "granted_at, until_at, revoked_at, revoked_by"
)

_ORDER = "ORDER BY granted_at, granted_seq, delegation_id"
"""In the order granted (ties at one instant in the order written)."""


def _delegation_of(row: Any) -> Delegation:
    return Delegation(
        delegation_id=str(row[0]),
        tenant_id=str(row[1]),
        principal=str(row[2]),
        delegate=str(row[3]),
        role=row[4],
        tool=row[5],
        granted_by=str(row[6]),
        reason=row[7],
        granted_at=from_micros(int(row[8])),
        until=None if row[9] is None else from_micros(int(row[9])),
        revoked_at=None if row[10] is None else from_micros(int(row[10])),
        revoked_by=row[11],
    )


def _grant(write: GrantDelegation) -> Ops:
    given = write.delegation
    yield do(
        f"INSERT INTO delegations ({_COLUMNS}, granted_seq) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, (SELECT COALESCE(MAX(granted_seq), "
        "0) + 1 FROM delegations WHERE tenant_id = ?))",
        given.delegation_id,
        given.tenant_id,
        given.principal,
        given.delegate,
        given.role,
        given.tool,
        given.granted_by,
        given.reason,
        to_micros(given.granted_at),
        None if given.until is None else to_micros(given.until),
        given.tenant_id,
    )


def _revoke(write: RevokeDelegation) -> Ops:
    later = yield one_later(
        "UPDATE delegations SET revoked_at = ?, revoked_by = ? "
        "WHERE tenant_id = ? AND delegation_id = ? AND revoked_at IS NULL "
        f"RETURNING {_COLUMNS}",
        to_micros(write.now),
        write.revoked_by,
        write.tenant_id,
        write.delegation_id,
    )
    return when(later, lambda row: None if row is None else _delegation_of(row))


DELEGATION_OPS: dict[type[Any], Callable[[Any], Ops]] = {
    GrantDelegation: _grant,
    RevokeDelegation: _revoke,
}


class SqlDelegationRepository:
    """The delegations of a SQL store."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver

    async def held_by(self, tenant_id: str, delegate: str, now: datetime) -> list[Delegation]:
        at = to_micros(now)
        rows = await self._driver.read(
            Sql(
                f"SELECT {_COLUMNS} FROM delegations WHERE tenant_id = ? AND delegate = ? "
                f"AND revoked_at IS NULL AND (until_at IS NULL OR until_at > ?) {_ORDER}",
                (tenant_id, delegate, at),
                Returns.ALL,
            )
        )
        return [_delegation_of(row) for row in rows]

    async def find(self, tenant_id: str, delegation_id: str) -> Delegation | None:
        row = await self._driver.read(
            Sql(
                f"SELECT {_COLUMNS} FROM delegations WHERE tenant_id = ? AND delegation_id = ?",
                (tenant_id, delegation_id),
                Returns.ONE,
            )
        )
        return None if row is None else _delegation_of(row)

    async def list(self, tenant_id: str, *, revoked: bool = False) -> list[Delegation]:
        standing = "" if revoked else " AND revoked_at IS NULL"
        rows = await self._driver.read(
            Sql(
                f"SELECT {_COLUMNS} FROM delegations WHERE tenant_id = ?{standing} {_ORDER}",
                (tenant_id,),
                Returns.ALL,
            )
        )
        return [_delegation_of(row) for row in rows]
