"""The store contract's claims: a waiting question claimed by one person at a time, until a
time, and a person's answer not taken while someone else's claim holds."""

from __future__ import annotations

from datetime import timedelta

from agboss.enums import PauseResolution, PauseStatus
from agboss.records import PauseRecord
from agboss.store.protocol import Store
from agboss.store.writes import ClaimPause, InsertPause, ReleaseClaim, ResolvePause, write_one
from agboss.testing.store_contract._support import ANSWER, NOW, Contract, make_pause

__all__ = ["ClaimContract"]

HOUR = timedelta(hours=1)


class ClaimContract(Contract):
    """What every store does with claims."""

    async def _waiting(self, store: Store) -> PauseRecord:
        fence = await self._begin(store)
        insert = InsertPause(make_pause())
        return (await store.write([insert], fence=fence))[insert]

    async def test_a_question_is_claimed_by_one_person_until_their_claim_ends(
        self, store: Store
    ) -> None:
        pause = await self._waiting(store)
        claimed = await write_one(store, ClaimPause("acme", pause.pause_id, "ann", NOW + HOUR, NOW))
        assert claimed is not None
        assert (claimed.claimed_by, claimed.claimed_until) == ("ann", NOW + HOUR)
        assert claimed.claimant(NOW) == "ann"
        assert claimed.claimant(NOW + HOUR) is None
        other = ClaimPause("acme", pause.pause_id, "bob", NOW + HOUR, NOW)
        assert await write_one(store, other) is None  # hers holds
        renewed = ClaimPause("acme", pause.pause_id, "ann", NOW + 2 * HOUR, NOW)
        assert await write_one(store, renewed) is not None
        later = ClaimPause("acme", pause.pause_id, "bob", NOW + 3 * HOUR, NOW + 2 * HOUR)
        taken = await write_one(store, later)  # hers ended: his now
        assert taken is not None
        assert taken.claimed_by == "bob"
        stored = await store.pauses.find_by_tenant_id_and_pause_id("acme", pause.pause_id)
        assert stored is not None
        assert (stored.claimed_by, stored.claimed_until) == ("bob", NOW + 3 * HOUR)

    async def test_a_claim_is_released_only_by_its_holder(self, store: Store) -> None:
        pause = await self._waiting(store)
        await write_one(store, ClaimPause("acme", pause.pause_id, "ann", NOW + HOUR, NOW))
        assert not await write_one(store, ReleaseClaim("acme", pause.pause_id, "bob", NOW))
        assert await write_one(store, ReleaseClaim("acme", pause.pause_id, "ann", NOW))
        assert not await write_one(store, ReleaseClaim("acme", pause.pause_id, "ann", NOW))
        stored = await store.pauses.find_by_tenant_id_and_pause_id("acme", pause.pause_id)
        assert stored is not None
        assert stored.claimed_by is None

    async def test_a_persons_answer_is_not_taken_while_someone_elses_claim_holds(
        self, store: Store
    ) -> None:
        pause = await self._waiting(store)
        await write_one(store, ClaimPause("acme", pause.pause_id, "ann", NOW + HOUR, NOW))

        def answer(by: str | None, at: timedelta = timedelta(0)) -> ResolvePause:
            return ResolvePause(
                pause, PauseStatus.RESOLVED, PauseResolution.REPLIED, ANSWER, NOW + at, answerer=by
            )

        assert await write_one(store, answer("bob")) is None
        assert await write_one(store, answer("bob", HOUR)) is not None  # once hers ended
        # Not Pending: nothing is claimed any more.
        late = ClaimPause("acme", pause.pause_id, "ann", NOW + 3 * HOUR, NOW + 2 * HOUR)
        assert await write_one(store, late) is None

    async def test_an_answer_no_claim_binds_is_taken_whoever_claimed(self, store: Store) -> None:
        # A deadline's default, a standing decision, a role that lets others answer.
        pause = await self._waiting(store)
        await write_one(store, ClaimPause("acme", pause.pause_id, "ann", NOW + HOUR, NOW))
        resolve = ResolvePause(pause, PauseStatus.RESOLVED, PauseResolution.REPLIED, ANSWER, NOW)
        assert await write_one(store, resolve) is not None
