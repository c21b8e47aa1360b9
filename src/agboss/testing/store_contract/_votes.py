"""The store contract's votes: several approvers on one question (`CastVote`)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime, timedelta

from agboss.enums import PauseResolution, PauseStatus
from agboss.records import PauseRecord, PauseVote, PauseVotes
from agboss.store.protocol import Store
from agboss.store.writes import CastVote, ExpirePause, InsertPause, write_one
from agboss.testing.store_contract._support import NOW, Contract, make_pause

__all__ = ["VoteContract"]


def _vote(voter: str, *, approved: bool = True, reason: str | None = None) -> PauseVote:
    return PauseVote(voter=voter, approved=approved, reason=reason, voted_at=NOW.isoformat())


class VoteContract(Contract):
    """What every store does with votes: each counted once, under the pause row's lock, and
    the one that decides resolves the pause in its own transaction."""

    async def _asked(
        self,
        store: Store,
        votes: PauseVotes | None = None,
        *,
        expires_at: datetime | None = None,
    ) -> PauseRecord:
        """A question asked, that takes ``votes`` (two of three voters by default)."""
        fence = await self._begin(store)
        counted = votes or PauseVotes(needed=2, eligible=("a", "b", "c"))
        insert = InsertPause(replace(make_pause(), votes=counted, expires_at=expires_at))
        return (await store.write([insert], fence=fence))[insert]

    async def test_a_vote_is_counted_once_and_the_pause_waits_for_its_quorum(
        self, store: Store
    ) -> None:
        pause = await self._asked(store)
        first = await write_one(store, CastVote(pause, _vote("a", reason="fine"), NOW))
        assert first.counted
        assert first.resolved is None
        assert first.votes is not None
        assert [v.voter for v in first.votes.votes] == ["a"]
        again = await write_one(store, CastVote(pause, _vote("a", approved=False), NOW))
        assert not again.counted  # a voter votes once: theirs stands
        assert again.votes == first.votes
        stored = await store.pauses.find_by_tenant_id_and_pause_id("acme", pause.pause_id)
        assert stored is not None
        assert stored.status is PauseStatus.PENDING
        assert stored.votes == first.votes
        [pending] = await store.pauses.list_pending("ex-1")
        assert pending.votes == first.votes
        audit = await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
            "acme", "ex-1"
        )
        assert audit == []  # an entry is written when the question is resolved

    async def test_the_vote_that_reaches_the_quorum_resolves_it_with_every_vote_in_the_audit(
        self, store: Store
    ) -> None:
        pause = await self._asked(store)
        await write_one(store, CastVote(pause, _vote("b", approved=False, reason="no"), NOW))
        await write_one(store, CastVote(pause, _vote("a"), NOW))
        decided = await write_one(store, CastVote(pause, _vote("c"), NOW))
        assert decided.resolved is not None
        assert decided.resolved.status is PauseStatus.RESOLVED
        assert decided.resolved.answer is not None
        assert decided.resolved.answer.decision.approved
        assert decided.resolved.answer.responder == "a, c"
        [entry] = await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
            "acme", "ex-1"
        )
        assert entry.resolution is PauseResolution.REPLIED
        assert [(v.voter, v.approved, v.reason) for v in entry.votes] == [
            ("b", False, "no"),
            ("a", True, None),
            ("c", True, None),
        ]
        late = await write_one(store, CastVote(pause, _vote("d"), NOW))
        assert late.votes is None  # no longer Pending: nothing written
        assert not late.counted

    async def test_the_vote_that_makes_the_quorum_unreachable_rejects_it(
        self, store: Store
    ) -> None:
        pause = await self._asked(store)
        await write_one(store, CastVote(pause, _vote("a", approved=False, reason="late"), NOW))
        rejected = await write_one(store, CastVote(pause, _vote("b", approved=False), NOW))
        assert rejected.resolved is not None
        assert rejected.resolved.answer is not None
        decision = rejected.resolved.answer.decision
        assert not decision.approved
        assert decision.reason is not None
        assert "a (late)" in decision.reason

    async def test_a_vote_past_the_deadline_or_on_a_closed_pause_writes_nothing(
        self, store: Store
    ) -> None:
        pause = await self._asked(store, expires_at=NOW + timedelta(minutes=1))
        past = await write_one(store, CastVote(pause, _vote("a"), NOW + timedelta(minutes=1)))
        assert past.votes is None
        await write_one(
            store, ExpirePause("acme", pause.pause_id, PauseStatus.CANCELLED, None, NOW)
        )
        closed = await write_one(store, CastVote(pause, _vote("a"), NOW))
        assert closed.votes is None
        [entry] = await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
            "acme", "ex-1"
        )
        assert entry.votes == ()

    async def test_votes_cast_at_once_count_each_other_and_one_decides(self, store: Store) -> None:
        pause = await self._asked(store, votes=PauseVotes(needed=3))
        voters = [f"v{index}" for index in range(6)]
        cast = await asyncio.gather(
            *(write_one(store, CastVote(pause, _vote(voter), NOW)) for voter in voters)
        )
        decided = [voted for voted in cast if voted.resolved is not None]
        counted = [voted for voted in cast if voted.counted]
        assert len(decided) == 1
        assert len(counted) == 3  # the others found it decided
        assert decided[0].votes is not None
        assert len(decided[0].votes.votes) == 3
