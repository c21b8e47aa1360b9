"""Delegations: one person's questions answered by another, revoked, and listed."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agboss.app._instance import Instance
from agboss.engine import DelegationGrant, delegate, list_delegations, revoke_delegation
from agboss.inputs import check_flag, check_id, check_optional_id
from agboss.records import Delegation

__all__ = ["Delegations"]


class Delegations(Instance):
    """The delegations of `App`: `delegate`, `revoke_delegation`, `delegations`."""

    async def delegate(
        self,
        principal: str,
        *,
        to: str,
        granted_by: str,
        tenant_id: str | None = None,
        role: type[Any] | str | None = None,
        tool: type[Any] | str | None = None,
        until: datetime | None = None,
        reason: str | None = None,
    ) -> Delegation:
        """Hands ``principal``'s questions to ``to`` — "ada's questions go to bo until
        Friday" — a **delegation**, kept by the store.

        While it holds, the delegate answers, claims and hands on as the principal could:
        their thread-owner questions, the ones claimed by (or handed to) them, and their seat
        on a quorum. The audit trail and the decision log say "bo for ada"
        (``on_behalf_of``). The checks of an answer run on the delegate too: a delegate never
        answers what they could not have answered had the question been theirs to claim (the
        thread's owner under ``distinct_from_owner``), and a quorum counts a person once —
        their own vote, or one cast for another, never both.

        Args:
            principal: Whose questions: the person who delegates, as the application
                authenticates them (an ``owner_id`` or an ``answered_by``).
            to: Who answers them meanwhile.
            granted_by: Who grants it (the principal, or an administrator).
            tenant_id: The tenant; the default tenant when ``None``.
            role: Only the questions of this role: the ``@channel_role`` class, or its name.
            tool: Only the questions about this tool's calls: the ``@tool`` class, or its name.
            until: When it ends by itself (timezone-aware, in the future); ``None``: until
                revoked.
            reason: Why, as the granter said it.

        Returns:
            The delegation, with the id `revoke_delegation` takes.

        Raises:
            DtoValidationError: A person delegates to themselves, ``role`` or ``tool`` is not
                one of the application's that asks, or a value is out of bounds.
        """
        given = DelegationGrant(
            self._runtime,
            principal,
            to=to,
            granted_by=granted_by,
            tenant_id=tenant_id,
            role=role,
            tool=tool,
            until=until,
            reason=reason,
        )
        return await delegate(self._runtime, given)

    async def revoke_delegation(
        self,
        delegation_id: str,
        *,
        revoked_by: str,
        tenant_id: str | None = None,
        person: str | None = None,
    ) -> Delegation:
        """Revokes a delegation, as a standing decision is revoked: the delegate answers for
        the principal no more. Revoking one revoked before returns it as it was revoked.

        Args:
            delegation_id: Its id (`Delegation.delegation_id`).
            revoked_by: Who revokes it, as the application authenticated them.
            tenant_id: Its tenant; the default tenant when ``None``.
            person: When given, it must be theirs (they delegated, are the delegate, or
                granted it): a person revoking their own; an operator leaves it out.

        Raises:
            UnknownDelegationError: No delegation has this id for this tenant (or, with
                ``person``, none of theirs).
            DtoValidationError: An id is not a non-blank string within the limits.
        """
        limits = self._limits
        return await revoke_delegation(
            self._runtime,
            check_id(delegation_id, "delegation_id", limits),
            revoked_by=check_id(revoked_by, "revoked_by", limits),
            tenant_id=check_optional_id(tenant_id, "tenant_id", limits),
            person=check_optional_id(person, "person", limits),
        )

    async def delegations(
        self, *, tenant_id: str | None = None, person: str | None = None, revoked: bool = False
    ) -> list[Delegation]:
        """The tenant's delegations in the order granted: those not revoked (an ended one
        included: it says until when it held), or with ``revoked=True`` all of them; with
        ``person``, only theirs (they delegated, are the delegate, or granted it).

        Raises:
            DtoValidationError: An argument is not one of the above.
        """
        limits = self._limits
        return await list_delegations(
            self._runtime,
            tenant_id=check_optional_id(tenant_id, "tenant_id", limits),
            person=check_optional_id(person, "person", limits),
            revoked=check_flag(revoked, "revoked"),
        )
