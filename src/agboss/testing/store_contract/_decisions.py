"""The store contract's decision log: each decision appended once, with the write that
records it, on one chain per tenant that concurrent writers never fork."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta

from agboss.enums import Decider, Outcome, PauseResolution, PauseStatus
from agboss.records import (
    DecisionEvent,
    LoggedDecision,
    PauseRecord,
    PauseVote,
    PauseVotes,
    chain_digest,
    chain_genesis,
    pause_ref,
)
from agboss.store.protocol import Store
from agboss.store.writes import (
    CancelPendingUnder,
    CastVote,
    CutDecisionLog,
    ExpirePause,
    InsertPause,
    ResolvePause,
    write_one,
)
from agboss.testing.store_contract._support import (
    ANSWER,
    NOW,
    Contract,
    make_pause,
    make_row,
)

__all__ = ["DecisionLogContract"]


class DecisionLogContract(Contract):
    """What every store does with the decision log."""

    async def _ask(self, store: Store, count: int, *, tenant: str = "acme") -> list[PauseRecord]:
        """``count`` questions asked in one tree of ``tenant``."""
        root = f"ex-{tenant}"
        fence = await self._begin(store, make_row(root, tenant_id=tenant, thread_id=root))
        inserts = [
            InsertPause(
                replace(
                    make_pause(f"{tenant[:1]}{index:031d}", f"k{index}", execution_id=root),
                    tenant_id=tenant,
                    root_execution_id=root,
                    child_execution_id=None,
                )
            )
            for index in range(count)
        ]
        results = await store.write(inserts, fence=fence)
        return [results[insert] for insert in inserts]

    async def _answered(self, store: Store, count: int, *, apart: timedelta) -> None:
        """``count`` questions asked, then answered one after the other, ``apart``."""
        for index, pause in enumerate(await self._ask(store, count)):
            at = NOW + apart * index
            resolve = ResolvePause(pause, PauseStatus.RESOLVED, PauseResolution.REPLIED, ANSWER, at)
            await write_one(store, resolve)

    async def _chain(self, store: Store, tenant: str = "acme") -> list[LoggedDecision]:
        """The tenant's whole log, checked link by link against its head."""
        entries = await store.records.decision_log(tenant)
        chain = await store.records.decision_chain(tenant)
        assert chain is not None
        previous = chain.cut_digest or chain_genesis(tenant)
        for place, logged in enumerate(entries, start=chain.cut_seq + 1):
            assert logged.seq == place
            assert logged.previous == previous
            assert logged.digest == chain_digest(previous, logged.entry_json)
            previous = logged.digest
        assert (chain.seq, chain.head) == (chain.cut_seq + len(entries), previous)
        return entries

    async def test_an_answer_appends_one_entry_chained_from_the_tenants_genesis(
        self, store: Store
    ) -> None:
        [pause] = await self._ask(store, 1)
        resolve = ResolvePause(pause, PauseStatus.RESOLVED, PauseResolution.REPLIED, ANSWER, NOW)
        assert await write_one(store, resolve) is not None
        assert await write_one(store, resolve) is None  # resolved already: nothing appended
        [logged] = await self._chain(store)
        assert logged.previous == chain_genesis("acme")
        entry = logged.entry
        assert entry.event is DecisionEvent.DECISION
        assert (entry.outcome, entry.decided_by, entry.who) == (
            Outcome.APPROVED,
            Decider.PERSON,
            "u",
        )
        assert entry.pause_ref == pause_ref(pause.pause_id)
        assert pause.pause_id not in logged.entry_json  # the secret id never: its reference
        assert (entry.tool, entry.arguments, entry.role) == (
            "book-expense-tool",
            {"n": 1},
            "expense-approval-channel",
        )
        assert entry.decided_at == NOW.isoformat()

    async def test_an_answer_that_loses_to_the_deadline_appends_the_deadlines_entry_only(
        self, store: Store
    ) -> None:
        [pause] = await self._ask(store, 1)
        expire = ExpirePause("acme", pause.pause_id, PauseStatus.CANCELLED, None, NOW)
        assert await write_one(store, expire) is not None
        late = ResolvePause(pause, PauseStatus.RESOLVED, PauseResolution.REPLIED, ANSWER, NOW)
        assert await write_one(store, late) is None
        [logged] = await self._chain(store)
        assert (logged.entry.outcome, logged.entry.decided_by) == (
            Outcome.EXPIRED,
            Decider.DEADLINE,
        )

    async def test_each_vote_is_an_entry_and_the_decision_follows_them(self, store: Store) -> None:
        [asked] = await self._ask(store, 1)
        fence = await self._begin(store, make_row("ex-v", thread_id="th-v"))
        insert = InsertPause(
            replace(
                make_pause("v" * 32, execution_id="ex-v"),
                root_execution_id="ex-v",
                child_execution_id=None,
                votes=PauseVotes(needed=2, eligible=("a", "b")),
            )
        )
        pause = (await store.write([insert], fence=fence))[insert]
        for voter in ("a", "b"):
            vote = PauseVote(voter=voter, approved=True, voted_at=NOW.isoformat())
            await write_one(store, CastVote(pause, vote, NOW))
        entries = [logged.entry for logged in await self._chain(store)]
        assert [(e.event, e.who) for e in entries] == [
            (DecisionEvent.VOTE, "a"),
            (DecisionEvent.VOTE, "b"),
            (DecisionEvent.DECISION, "a, b"),
        ]
        assert asked.pause_id  # the other question waits: it is no entry

    async def test_questions_closed_together_are_entries_in_order_with_who_closed_them(
        self, store: Store
    ) -> None:
        asked = await self._ask(store, 3)
        close = CancelPendingUnder(
            "ex-acme", "", PauseResolution.CANCELLED, NOW, Decider.PERSON, "owner-7"
        )
        assert len((await store.write([close]))[close]) == 3
        entries = [logged.entry for logged in await self._chain(store)]
        assert [e.pause_ref for e in entries] == [pause_ref(p.pause_id) for p in asked]
        assert {(e.outcome, e.decided_by, e.who) for e in entries} == {
            (Outcome.CANCELLED, Decider.PERSON, "owner-7")
        }

    async def test_writers_at_once_keep_one_chain(self, store: Store) -> None:
        asked = await self._ask(store, 12)
        resolves = [
            ResolvePause(pause, PauseStatus.RESOLVED, PauseResolution.REPLIED, ANSWER, NOW)
            for pause in asked
        ]
        await asyncio.gather(*(write_one(store, resolve) for resolve in resolves))
        entries = await self._chain(store)
        assert sorted(logged.entry.pause_ref for logged in entries) == sorted(
            pause_ref(pause.pause_id) for pause in asked
        )

    async def test_each_tenant_has_a_chain_of_its_own(self, store: Store) -> None:
        for tenant in ("acme", "globex"):
            [pause] = await self._ask(store, 1, tenant=tenant)
            resolve = ResolvePause(
                pause, PauseStatus.RESOLVED, PauseResolution.REPLIED, ANSWER, NOW
            )
            await write_one(store, resolve)
        assert await store.records.decision_tenants() == ["acme", "globex"]
        for tenant in ("acme", "globex"):
            [logged] = await self._chain(store, tenant)
            assert (logged.seq, logged.previous) == (1, chain_genesis(tenant))

    async def test_a_cut_removes_the_oldest_entries_and_the_rest_stays_verifiable(
        self, store: Store
    ) -> None:
        await self._answered(store, 4, apart=timedelta(days=1))
        before = await self._chain(store)
        removed = await write_one(store, CutDecisionLog("acme", NOW + timedelta(days=2)))
        assert removed == 2
        kept = await self._chain(store)  # follows the cut's recorded digest
        assert kept == before[2:]
        chain = await store.records.decision_chain("acme")
        assert chain is not None
        assert (chain.cut_seq, chain.cut_digest) == (2, before[1].digest)
        assert await write_one(store, CutDecisionLog("acme", NOW)) == 0  # nothing older

    async def test_a_tenants_log_is_read_by_keyset_and_by_when_it_was_decided(
        self, store: Store
    ) -> None:
        await self._answered(store, 3, apart=timedelta(hours=1))
        first = await store.records.decision_log("acme", limit=2)
        rest = await store.records.decision_log("acme", after=first[-1].seq)
        assert [logged.seq for logged in first + rest] == [1, 2, 3]
        since = await store.records.decision_log("acme", since=NOW + timedelta(hours=1))
        assert [logged.seq for logged in since] == [2, 3]
        assert await store.records.decision_chain("nobody") is None
