"""The grants part of the store's protocol (`agboss.store.protocol` exports it): what people
decided ahead of time — standing decisions (`App.allow`) and delegations (`App.delegate`)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from agboss.records import Delegation, StandingDecision

__all__ = ["DelegationRepository", "StandingDecisionRepository"]


class StandingDecisionRepository(Protocol):
    """The standing decisions (`App.allow`): tools' calls approved ahead of time."""

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
        """The first decision granted that stands at ``now`` and approves a call of ``tool``
        asking ``role`` in ``thread_id`` of ``owner_id``: for that tool or that role, scoped to
        the thread, the owner or the tenant; ``None`` when none does."""
        ...

    async def find(self, tenant_id: str, decision_id: str) -> StandingDecision | None:
        """A decision by its id, revoked or not."""
        ...

    async def list(self, tenant_id: str, *, revoked: bool = False) -> list[StandingDecision]:
        """The tenant's decisions, oldest first: those that were not revoked, or with
        ``revoked`` all of them (a lapsed one is listed: it says until when it held)."""
        ...


class DelegationRepository(Protocol):
    """The delegations (`App.delegate`): one person's questions answered by another."""

    async def held_by(self, tenant_id: str, delegate: str, now: datetime) -> list[Delegation]:
        """The delegations ``delegate`` holds at ``now`` (not revoked, not ended), in the order
        granted."""
        ...

    async def find(self, tenant_id: str, delegation_id: str) -> Delegation | None:
        """A delegation by its id, revoked or not."""
        ...

    async def list(self, tenant_id: str, *, revoked: bool = False) -> list[Delegation]:
        """The tenant's delegations, in the order granted: those not revoked, or with
        ``revoked`` all of them (an ended one is listed: it says until when it held)."""
        ...
