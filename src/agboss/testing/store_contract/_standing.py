"""The store contract's standing decisions: granted, found where they cover a call, revoked
once, listed."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from agboss.enums import StandingScope
from agboss.records import StandingDecision
from agboss.store.protocol import Store
from agboss.store.writes import GrantStanding, RevokeStanding, write_one
from agboss.testing.store_contract._support import NOW, Contract

__all__ = ["StandingContract"]


def _decision(decision_id: str, **fields: Any) -> StandingDecision:
    made = StandingDecision(
        decision_id=decision_id,
        tenant_id="acme",
        tool="refund-tool",
        role=None,
        scope=StandingScope.THREAD,
        thread_id="t-1",
        owner_id=None,
        granted_by="ada",
        reason="fine",
        granted_at=NOW,
    )
    return replace(made, **fields)


async def _covering(store: Store, **call: str) -> str | None:
    asked = {"tool": "refund-tool", "role": "refund-channel", "thread_id": "t-1", "owner_id": "ada"}
    asked.update(call)
    found = await store.standing.covering(
        asked.pop("tenant_id", "acme"), now=NOW + timedelta(minutes=1), **asked
    )
    return None if found is None else found.decision_id


class StandingContract(Contract):
    """Standing decisions: `GrantStanding`, `RevokeStanding`, `StandingDecisionRepository`."""

    async def test_a_granted_decision_reads_back_as_granted(self, store: Store) -> None:
        granted = _decision("sd-1", until=NOW + timedelta(days=1))
        await write_one(store, GrantStanding(granted))
        assert await store.standing.find("acme", "sd-1") == granted
        assert await store.standing.find("other", "sd-1") is None

    async def test_a_decision_covers_calls_of_its_tool_or_role_in_its_scope_only(
        self, store: Store
    ) -> None:
        await write_one(store, GrantStanding(_decision("sd-thread")))
        assert await _covering(store) == "sd-thread"
        assert await _covering(store, thread_id="t-2") is None
        assert await _covering(store, tool="void-tool") is None
        assert await _covering(store, tenant_id="other") is None
        await write_one(
            store,
            GrantStanding(
                _decision(
                    "sd-owner",
                    tool=None,
                    role="refund-channel",
                    scope=StandingScope.OWNER,
                    thread_id=None,
                    owner_id="bo",
                )
            ),
        )
        assert await _covering(store, tool="void-tool", thread_id="t-9", owner_id="bo") == (
            "sd-owner"
        )
        assert await _covering(store, tool="void-tool", owner_id="cy") is None
        await write_one(
            store,
            GrantStanding(
                _decision("sd-tenant", scope=StandingScope.TENANT, thread_id=None, tool="void-tool")
            ),
        )
        assert await _covering(store, tool="void-tool", thread_id="t-9", owner_id="cy") == (
            "sd-tenant"
        )

    async def test_the_first_granted_of_several_covering_decisions_is_the_one_found(
        self, store: Store
    ) -> None:
        await write_one(store, GrantStanding(_decision("sd-b", granted_at=NOW)))
        await write_one(
            store,
            GrantStanding(
                _decision("sd-a", scope=StandingScope.TENANT, thread_id=None, granted_at=NOW)
            ),
        )
        await write_one(
            store, GrantStanding(_decision("sd-0", granted_at=NOW + timedelta(seconds=1)))
        )
        assert await _covering(store) == "sd-b"  # granted at one instant: the first granted

    async def test_a_revoked_or_lapsed_decision_covers_nothing(self, store: Store) -> None:
        await write_one(store, GrantStanding(_decision("sd-1")))
        await write_one(store, GrantStanding(_decision("sd-2", until=NOW + timedelta(minutes=1))))
        assert await _covering(store) == "sd-1"
        revoked = await write_one(store, RevokeStanding("acme", "sd-1", "bo", NOW))
        assert revoked == await store.standing.find("acme", "sd-1")
        assert revoked is not None
        assert (revoked.revoked_by, revoked.revoked_at) == ("bo", NOW)
        assert await _covering(store) is None  # sd-2 lapsed at the minute the call is made

    async def test_a_decision_is_revoked_once(self, store: Store) -> None:
        await write_one(store, GrantStanding(_decision("sd-1")))
        assert await write_one(store, RevokeStanding("acme", "sd-1", "bo", NOW)) is not None
        later = NOW + timedelta(hours=1)
        assert await write_one(store, RevokeStanding("acme", "sd-1", "cy", later)) is None
        assert await write_one(store, RevokeStanding("acme", "sd-9", "cy", later)) is None
        assert await write_one(store, RevokeStanding("other", "sd-1", "cy", later)) is None
        found = await store.standing.find("acme", "sd-1")
        assert found is not None
        assert found.revoked_by == "bo"

    async def test_a_tenants_decisions_are_listed_oldest_first_the_revoked_on_request(
        self, store: Store
    ) -> None:
        for place, name in enumerate(("sd-c", "sd-a", "sd-b")):
            granted = _decision(name, granted_at=NOW + timedelta(seconds=place))
            await write_one(store, GrantStanding(granted))
        await write_one(store, GrantStanding(_decision("sd-x", tenant_id="other")))
        await write_one(store, RevokeStanding("acme", "sd-a", "bo", NOW))
        assert [d.decision_id for d in await store.standing.list("acme")] == ["sd-c", "sd-b"]
        listed = await store.standing.list("acme", revoked=True)
        assert [d.decision_id for d in listed] == ["sd-c", "sd-a", "sd-b"]

    async def test_decisions_granted_at_one_instant_are_listed_in_the_order_granted(
        self, store: Store
    ) -> None:
        names = ["sd-m", "sd-z", "sd-a", "sd-q"]  # not in the order of their ids
        for name in names:
            await write_one(store, GrantStanding(_decision(name, granted_at=NOW)))
        assert [d.decision_id for d in await store.standing.list("acme")] == names
