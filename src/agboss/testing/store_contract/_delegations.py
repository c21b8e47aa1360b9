"""The store contract's delegations: granted, read by the delegate who holds them while they
hold, revoked once."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from agboss.records import Delegation
from agboss.store.protocol import Store
from agboss.store.writes import GrantDelegation, RevokeDelegation, write_one
from agboss.testing.store_contract._support import NOW, Contract

__all__ = ["DelegationContract"]

DAY = timedelta(days=1)


def _delegation(delegation_id: str, delegate: str = "bo", **given: object) -> Delegation:
    made = Delegation(
        delegation_id=delegation_id,
        tenant_id="acme",
        principal="ada",
        delegate=delegate,
        role=None,
        tool=None,
        granted_by="ada",
        reason="on leave",
        granted_at=NOW,
        until=NOW + DAY,
    )
    return replace(made, **given)  # type: ignore[arg-type]  # the fields a test changes


class DelegationContract(Contract):
    """What every store does with delegations."""

    async def test_a_delegation_is_held_by_its_delegate_until_its_date_or_revoked(
        self, store: Store
    ) -> None:
        first = _delegation("dl-1", role="legal-channel")
        second = _delegation("dl-2", tool="pay-tool", until=None)
        other = _delegation("dl-3", delegate="cy")
        elsewhere = replace(_delegation("dl-4"), tenant_id="globex")
        await store.write([GrantDelegation(d) for d in (first, second, other, elsewhere)])
        assert await store.delegations.held_by("acme", "bo", NOW) == [first, second]
        assert await store.delegations.held_by("acme", "bo", NOW + DAY) == [second]  # ended
        assert await store.delegations.find("acme", "dl-3") == other
        assert await store.delegations.find("acme", "dl-4") is None  # another tenant's
        revoke = RevokeDelegation("acme", "dl-2", "ada", NOW + DAY)
        revoked = await write_one(store, revoke)
        assert revoked == replace(second, revoked_at=NOW + DAY, revoked_by="ada")
        assert await write_one(store, revoke) is None  # once
        assert await store.delegations.held_by("acme", "bo", NOW) == [first]
        assert await store.delegations.list("acme") == [first, other]
        assert await store.delegations.list("acme", revoked=True) == [first, revoked, other]
