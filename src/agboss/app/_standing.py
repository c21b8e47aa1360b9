"""Standing decisions: a tool's calls approved ahead of time, revoked, and listed."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agboss.app._instance import Instance
from agboss.engine import Grant, grant, list_standing, revoke
from agboss.enums import StandingScope
from agboss.inputs import check_flag, check_id, check_optional_id
from agboss.records import StandingDecision

__all__ = ["StandingDecisions"]


class StandingDecisions(Instance):
    """The standing decisions of `App`: `allow`, `revoke`, `standing`."""

    async def allow(
        self,
        target: type[Any],
        *,
        scope: StandingScope,
        granted_by: str,
        thread_id: str | None = None,
        owner_id: str | None = None,
        tenant_id: str | None = None,
        until: datetime | None = None,
        reason: str | None = None,
    ) -> StandingDecision:
        """Approves a tool's calls ahead of time: a **standing decision**, kept by the store.

        A call it covers is decided at once (`PauseResolution.DECIDED`, the audit naming
        ``standing:<decision_id>``) until it is revoked or lapses; not a question already
        waiting, one asked mid-call, or whether a call cut off runs again (`docs/pauses.md`).

        Args:
            target: The ``@tool`` class whose calls it approves, or the ``@channel_role``
                class whose questions it approves (every tool that asks it).
            scope: `StandingScope.THREAD` (give ``thread_id``), `StandingScope.OWNER` (give
                ``owner_id``) or `StandingScope.TENANT`.
            granted_by: Who grants it, as the application authenticated them.
            thread_id: The thread, for `StandingScope.THREAD`.
            owner_id: The owner, for `StandingScope.OWNER`.
            tenant_id: The tenant; the default tenant when ``None``.
            until: When it lapses by itself (timezone-aware, in the future); ``None``: until
                revoked.
            reason: Why, as the granter said it.

        Returns:
            The decision, with the id `revoke` takes.

        Raises:
            DtoValidationError: ``target`` is not a tool or role of the application that asks,
                the scope and the ids given do not match, or a value is out of bounds.
        """
        given = Grant(
            self._runtime,
            target,
            scope=scope,
            granted_by=granted_by,
            thread_id=thread_id,
            owner_id=owner_id,
            tenant_id=tenant_id,
            until=until,
            reason=reason,
        )
        return await grant(self._runtime, given)

    async def revoke(
        self,
        decision_id: str,
        *,
        revoked_by: str,
        tenant_id: str | None = None,
        owner_id: str | None = None,
    ) -> StandingDecision:
        """Revokes a standing decision: the calls it covered are asked again from now on.

        Revoking one that was revoked before is a repeat: it returns it as it was revoked.

        Args:
            decision_id: The decision's id (`StandingDecision.decision_id`).
            revoked_by: Who revokes it, as the application authenticated them.
            tenant_id: Its tenant; the default tenant when ``None``.
            owner_id: When given, it must be that owner's (granted by them, or covering only
                their threads): a person revoking their own; an operator leaves it out.

        Raises:
            UnknownStandingDecisionError: No decision has this id for this tenant (or, with
                ``owner_id``, none of that owner's).
            DtoValidationError: An id is not a non-blank string within the limits.
        """
        limits = self._limits
        return await revoke(
            self._runtime,
            check_id(decision_id, "decision_id", limits),
            revoked_by=check_id(revoked_by, "revoked_by", limits),
            tenant_id=check_optional_id(tenant_id, "tenant_id", limits),
            owner_id=check_optional_id(owner_id, "owner_id", limits),
        )

    async def standing(
        self, *, tenant_id: str | None = None, owner_id: str | None = None, revoked: bool = False
    ) -> list[StandingDecision]:
        """The tenant's standing decisions, oldest first: those not revoked (a lapsed one
        included: it says until when it held), or with ``revoked=True`` all of them; with
        ``owner_id``, only that owner's (granted by them, or covering only their threads).

        Raises:
            DtoValidationError: An argument is not one of the above.
        """
        limits = self._limits
        return await list_standing(
            self._runtime,
            tenant_id=check_optional_id(tenant_id, "tenant_id", limits),
            owner_id=check_optional_id(owner_id, "owner_id", limits),
            revoked=check_flag(revoked, "revoked"),
        )
