"""The store contract's claims and reassignments: a waiting question claimed by one person at
a time, until a time, and a person's answer not taken while someone else's claim holds; a
question handed on closed and asked again in one commit, or not at all."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from agboss.enums import Outcome, PauseResolution, PauseStatus
from agboss.records import PauseRecord, Reassignment
from agboss.store.protocol import Store
from agboss.store.writes import (
    ClaimPause,
    InsertPause,
    MarkPauseSent,
    ReassignPause,
    ReleaseClaim,
    ResolvePause,
    write_one,
)
from agboss.testing.store_contract._support import ANSWER, NOW, Contract, make_pause

__all__ = ["ClaimContract", "ReassignContract"]

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


class ReassignContract(Contract):
    """What every store does with a question handed on (`ReassignPause`)."""

    async def _handed(
        self, store: Store, *, to: str | None = None, at: timedelta = timedelta(0)
    ) -> tuple[PauseRecord, ReassignPause]:
        """A waiting question due in two hours, and the write that hands it on at ``at``."""
        fence = await self._begin(store)
        insert = InsertPause(replace(make_pause(), expires_at=NOW + 2 * HOUR))
        pause = (await store.write([insert], fence=fence))[insert]
        asked = replace(
            pause,
            pause_id="q" * 32,
            channel="legal-channel",
            escalation=1,
            asked_at=NOW + at,
            claimed_by=to,
            claimed_until=None if to is None else NOW + at + HOUR,
        )
        why = Reassignment(role="legal-channel", to=to, reason="legal decides", pause_ref="ref_q")
        return pause, ReassignPause("acme", pause.pause_id, asked, NOW + at, "ann", why)

    async def test_a_question_handed_on_is_closed_and_asked_again_in_one_commit(
        self, store: Store
    ) -> None:
        pause, write = await self._handed(store, to="bo")
        assert await write_one(store, MarkPauseSent("acme", pause.pause_id, "desk/1")) is not None
        handed = await write_one(store, write)
        assert handed is not None
        assert (handed.closed.status, handed.closed.resolution) == (
            PauseStatus.CANCELLED,
            PauseResolution.REASSIGNED,
        )
        assert handed.asked.seq > pause.seq
        found = await store.pauses.find_by_step("ex-1", pause.step_key)  # the step's newest
        assert found is not None
        assert (found.pause_id, found.channel, found.is_sent) == ("q" * 32, "legal-channel", False)
        assert (found.claimed_by, found.claimed_until) == ("bo", NOW + HOUR)  # asked as bo's
        [owed] = await store.pauses.find_due_withdrawals("ex-1")  # the first channel is told
        assert owed.pause_id == pause.pause_id
        root = await store.executions.find_by_id("ex-1")
        assert root is not None
        assert root.wake_at == NOW  # due at once: a sweep sends it if no pass does
        [entry] = await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
            "acme", "ex-1"
        )
        assert (entry.resolution, entry.responder, entry.reassigned) == (
            PauseResolution.REASSIGNED,
            "ann",
            write.reassigned,
        )
        [logged] = await store.records.decision_log("acme")
        assert (logged.entry.outcome, logged.entry.who, logged.entry.reassigned) == (
            Outcome.REASSIGNED,
            "ann",
            write.reassigned,
        )
        again = replace(write, asked=replace(write.asked, pause_id="r" * 32, escalation=2))
        assert await write_one(store, again) is None  # once
        assert await store.pauses.find_by_tenant_id_and_pause_id("acme", "r" * 32) is None

    async def test_a_question_is_not_handed_on_past_its_deadline_or_from_under_a_claim(
        self, store: Store
    ) -> None:
        pause, write = await self._handed(store)
        late = replace(write, now=NOW + 2 * HOUR)
        assert await write_one(store, late) is None  # at its deadline, the deadline decides
        await write_one(store, ClaimPause("acme", pause.pause_id, "cy", NOW + HOUR, NOW))
        assert await write_one(store, write) is None  # cy handles it
        assert await write_one(store, replace(write, by="cy")) is not None  # cy's to hand on

    async def test_an_answer_recorded_first_wins_over_the_reassignment(self, store: Store) -> None:
        pause, write = await self._handed(store)
        answer = ResolvePause(pause, PauseStatus.RESOLVED, PauseResolution.REPLIED, ANSWER, NOW)
        assert await write_one(store, answer) is not None
        assert await write_one(store, write) is None
        assert await store.pauses.find_by_tenant_id_and_pause_id("acme", "q" * 32) is None
        assert len(await store.records.decision_log("acme")) == 1  # the answer's alone
