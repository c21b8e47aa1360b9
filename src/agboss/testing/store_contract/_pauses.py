"""The store contract's pauses: numbered, answered once, closed, listed, rested on, retained."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from agboss.dto import ToolCallApprovalDecisionDto
from agboss.enums import ExecutionStatus, PauseAnswerer, PauseResolution, PauseStatus
from agboss.records import PauseAnswer, PauseAnswerRecord, PauseRecord, PauseVotes, pause_ref
from agboss.store.protocol import (
    Store,
    WaitingQuery,
)
from agboss.store.writes import (
    AcquireLease,
    CancelExecutions,
    CancelPause,
    CancelPendingUnder,
    ClimbLadder,
    EscalatePause,
    ExpirePause,
    InsertChild,
    InsertPause,
    MarkPauseSent,
    MarkWithdrawn,
    ResolvePause,
    Rested,
    RestTree,
    TakePause,
    TakeResolvedUnder,
    write_one,
)
from agboss.testing.store_contract._support import (
    ANSWER,
    NOW,
    TTL,
    Contract,
    answer_of,
    make_pause,
    make_row,
)

__all__ = ["PauseContract"]


class PauseContract(Contract):
    """What every store does with pauses."""

    # ---- pauses ---------------------------------------------------------------------

    async def test_pauses_are_numbered_in_the_order_asked_and_found_by_step(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        insert_a, insert_b = (
            InsertPause(make_pause("a" * 32, "k1")),
            InsertPause(make_pause("b" * 32, "k2")),
        )
        results = await store.write([insert_a, insert_b], fence=fence)
        first, second = results[insert_a], results[insert_b]
        assert (first.seq, second.seq) == (1, 2)
        found = await store.pauses.find_by_step("ex-1", "k2")
        assert found is not None
        assert found.pause_id == "b" * 32
        assert found.ask == make_pause().ask

    async def test_pending_to_resolved_happens_once_with_its_audit_entry(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write([InsertPause(make_pause())], fence=fence)
        resolve = await answer_of(store)
        results = await store.write([resolve, resolve])  # one write object, given twice
        (_, first), (_, second) = results.pairs()
        assert isinstance(first, PauseRecord)
        assert first is not None
        assert first.status is PauseStatus.RESOLVED
        assert first.answer == ANSWER
        assert second is None
        [entry] = await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
            "acme", "ex-1"
        )
        assert entry.resolution is PauseResolution.REPLIED
        assert entry.responder == "u"
        cancel = CancelPause("acme", "p" * 32, PauseResolution.CANCELLED, NOW)
        assert await write_one(store, cancel) is None

    async def test_the_questions_waiting_are_counted_across_tenants(self, store: Store) -> None:
        assert await store.pauses.waiting_total() == 0
        fence = await self._begin(store)
        other = make_row("ex-2", thread_id="th-2", tenant_id="globex")
        other_fence = await self._begin(store, other)
        await store.write(
            [InsertPause(make_pause()), InsertPause(make_pause("q" * 32, "k2"))], fence=fence
        )
        elsewhere = replace(
            make_pause("r" * 32, "k1", execution_id="ex-2"),
            tenant_id="globex",
            root_execution_id="ex-2",
        )
        await store.write([InsertPause(elsewhere)], fence=other_fence)
        assert await store.pauses.waiting_total() == 3
        await store.write([await answer_of(store)])  # answered: no longer waiting
        assert await store.pauses.waiting_total() == 2

    async def test_a_resolved_pause_is_taken_once(self, store: Store) -> None:
        fence = await self._begin(store)
        await store.write([InsertPause(make_pause())], fence=fence)
        await store.write([await answer_of(store)])
        await store.write([TakePause("acme", "p" * 32), TakePause("acme", "p" * 32)], fence=fence)
        found = await store.pauses.find_by_tenant_id_and_pause_id("acme", "p" * 32)
        assert found is not None
        assert found.status is PauseStatus.TAKEN

    async def test_pending_to_cancelled_happens_once_and_owes_a_sent_pause_a_withdraw(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write(
            [InsertPause(make_pause()), InsertPause(make_pause("q" * 32, "k2"))], fence=fence
        )
        assert await write_one(store, MarkPauseSent("acme", "p" * 32)) == PauseStatus.PENDING
        close = CancelPause("acme", "p" * 32, PauseResolution.WITHDRAWN, NOW)
        close_unsent = CancelPause("acme", "q" * 32, PauseResolution.WITHDRAWN, NOW)
        close_again = CancelPause("acme", "p" * 32, PauseResolution.CANCELLED, NOW)
        results = await store.write([close, close_unsent, close_again])
        closed, unsent, again = results[close], results[close_unsent], results[close_again]
        assert closed is not None
        assert closed.is_sent
        assert closed.resolution is PauseResolution.WITHDRAWN
        assert unsent is not None
        assert again is None
        assert [p.pause_id for p in await store.pauses.find_due_withdrawals("ex-1")] == ["p" * 32]
        entries = await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
            "acme", "ex-1"
        )
        assert [e.resolution for e in entries] == [PauseResolution.WITHDRAWN] * 2

    async def test_a_pause_closed_while_its_send_returned_owes_a_withdraw(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write([InsertPause(make_pause())], fence=fence)
        await store.write([CancelPause("acme", "p" * 32, PauseResolution.CANCELLED, NOW)])
        assert await store.pauses.find_due_withdrawals("ex-1") == []
        sent = MarkPauseSent("acme", "p" * 32, "C1/1712.5")
        assert await write_one(store, sent) == PauseStatus.CANCELLED
        [due] = await store.pauses.find_due_withdrawals("ex-1")
        assert due.sent_reference == "C1/1712.5"

    async def test_a_sent_pause_keeps_its_channels_reference_for_the_withdraw(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write([InsertPause(make_pause())], fence=fence)
        found = await store.pauses.find_by_tenant_id_and_pause_id("acme", "p" * 32)
        assert found is not None
        assert found.sent_reference is None
        assert await write_one(store, MarkPauseSent("acme", "p" * 32, "C1/1712.5")) == (
            PauseStatus.PENDING
        )
        close = CancelPause("acme", "p" * 32, PauseResolution.WITHDRAWN, NOW)
        closed = (await store.write([close]))[close]
        assert closed is not None
        assert closed.sent_reference == "C1/1712.5"
        [due] = await store.pauses.find_due_withdrawals("ex-1")
        assert due.sent_reference == "C1/1712.5"

    async def test_an_answer_given_the_pause_as_asked_returns_it_as_it_is_now(
        self, store: Store
    ) -> None:
        # An instance answers a question it asked with the record it stored (no read): what
        # changed since (its send) comes back with the resolved pause.
        fence = await self._begin(store)
        insert = InsertPause(make_pause())
        asked = (await store.write([insert], fence=fence))[insert]
        await write_one(store, MarkPauseSent("acme", "p" * 32, "C1/1712.5"))
        resolve = ResolvePause(asked, PauseStatus.RESOLVED, PauseResolution.REPLIED, ANSWER, NOW)
        resolved = await write_one(store, resolve)
        assert resolved is not None
        assert (resolved.is_sent, resolved.sent_reference) == (True, "C1/1712.5")
        assert resolved.status is PauseStatus.RESOLVED

    async def test_closing_under_a_path_touches_only_that_branchs_pauses(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        a, b = "ex-1|2:l#0@0/", "ex-1|2:l#0@1/"
        await store.write(
            [
                InsertPause(make_pause("1" * 32, "k1", path=a)),
                InsertPause(make_pause("2" * 32, "k2", path=a)),
                InsertPause(make_pause("3" * 32, "k3", path=b)),
            ],
            fence=fence,
        )
        await store.write([await answer_of(store, "2" * 32)])
        cancel = CancelPendingUnder("ex-1", a, PauseResolution.WITHDRAWN, NOW)
        take = TakeResolvedUnder("ex-1", a)
        results = await store.write([cancel, take], fence=fence)
        closed, taken = results[cancel], results[take]
        assert [p.pause_id for p in closed] == ["1" * 32]
        assert taken == 1
        left = await store.pauses.find_by_root("ex-1", (PauseStatus.PENDING,))
        assert [p.pause_id for p in left] == ["3" * 32]

    async def test_pending_lists_the_owners_pauses_first_and_hides_a_channels_id(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write(
            [
                InsertPause(make_pause("c" * 32, "k1", answered_by=PauseAnswerer.CHANNEL)),
                InsertPause(make_pause("o" * 32, "k2")),
            ],
            fence=fence,
        )
        pending = await store.pauses.list_pending("ex-1")
        assert [p.answered_by for p in pending] == [
            PauseAnswerer.THREAD_OWNER,
            PauseAnswerer.CHANNEL,
        ]
        assert pending[0].pause_id == "o" * 32
        assert pending[1].pause_id != "c" * 32
        assert pending[0].ask.arguments == {"n": 1}
        # As every instance reads them back from the database (a store may keep what it
        # inserted): the inbox decodes each row.
        waiting = await store.pauses.list_waiting(WaitingQuery("acme"))
        assert sorted(pending, key=repr) == sorted((w.pause for w in waiting), key=repr)

    async def test_an_inbox_lists_a_tenants_waiting_pauses_oldest_first_by_keyset(
        self, store: Store
    ) -> None:
        first = await self._begin(store)
        second = await self._begin(store, make_row("ex-2", thread_id="th-2", owner_id="v"))
        later = NOW + timedelta(minutes=5)
        await store.write(
            [
                InsertPause(make_pause("a" * 32, "k1")),
                InsertPause(
                    replace(
                        make_pause("b" * 32, "k2", answered_by=PauseAnswerer.CHANNEL),
                        asked_at=later,
                    )
                ),
            ],
            fence=first,
        )
        await store.write(
            [
                InsertPause(
                    replace(
                        make_pause("c" * 32, "k1"),
                        root_execution_id="ex-2",
                        execution_id="ex-2",
                        child_execution_id=None,
                        asked_at=later + timedelta(minutes=1),
                    )
                )
            ],
            fence=second,
        )
        everything = await store.pauses.list_waiting(WaitingQuery("acme"))
        assert [w.pause.pause_id for w in everything] == ["a" * 32, None, "c" * 32]
        assert [w.owner_id for w in everything] == ["u", "u", "v"]
        assert everything[2].thread_id == "th-2"
        assert [w.input_json for w in everything] == ['{"text": "x"}'] * 3  # the request
        assert await store.pauses.count_waiting(WaitingQuery("acme")) == 3
        page = await store.pauses.list_waiting(WaitingQuery("acme", limit=2))
        last = page[-1]
        rest = await store.pauses.list_waiting(
            WaitingQuery("acme", after=(last.asked_at, last.root_execution_id, last.seq))
        )
        assert [w.pause.pause_id for w in page + rest] == ["a" * 32, None, "c" * 32]
        mine = WaitingQuery("acme", owner_id="v")
        assert [w.pause.pause_id for w in await store.pauses.list_waiting(mine)] == ["c" * 32]
        early = WaitingQuery("acme", asked_before=later)
        assert await store.pauses.count_waiting(early) == 1
        assert await store.pauses.count_waiting(WaitingQuery("other")) == 0
        elsewhere = WaitingQuery("acme", channel="another-channel")
        assert await store.pauses.list_waiting(elsewhere) == []

    async def test_an_inbox_lists_the_questions_that_name_a_voter_on_anyones_thread(
        self, store: Store
    ) -> None:
        first = await self._begin(store)  # u's thread
        second = await self._begin(store, make_row("ex-2", thread_id="th-2", owner_id="v"))
        named = PauseVotes(needed=2, eligible=("v", "w", "v"))
        await store.write(
            [
                InsertPause(replace(make_pause("a" * 32, "k1"), votes=named)),
                InsertPause(  # a channel role's voters answer on its side: not listed
                    replace(
                        make_pause("b" * 32, "k2", answered_by=PauseAnswerer.CHANNEL),
                        votes=named,
                    )
                ),
            ],
            fence=first,
        )
        own = replace(
            make_pause("c" * 32, "k1"),
            root_execution_id="ex-2",
            execution_id="ex-2",
            asked_at=NOW + timedelta(minutes=1),
        )
        await store.write([InsertPause(own)], fence=second)

        async def listed(asked: WaitingQuery) -> list[str | None]:
            found = [w.pause.pause_id for w in await store.pauses.list_waiting(asked)]
            if asked.after is None and asked.limit > len(found):  # a count is of every page
                assert await store.pauses.count_waiting(asked) == len(found)
            return found

        assert await listed(WaitingQuery("acme", voter="w")) == ["a" * 32]
        assert await listed(WaitingQuery("acme", owner_id="v", voter="v")) == ["a" * 32, "c" * 32]
        assert await listed(WaitingQuery("acme", owner_id="v", voter="v", limit=1)) == ["a" * 32]
        after = (NOW, "ex-1", 1)
        assert await listed(WaitingQuery("acme", owner_id="v", voter="v", after=after)) == [
            "c" * 32
        ]
        assert await listed(WaitingQuery("acme", owner_id="u", voter="u")) == ["a" * 32, None]
        assert await listed(WaitingQuery("acme", voter="x")) == []
        assert await listed(WaitingQuery("acme", voter="w", channel="another-channel")) == []
        await store.write(
            [await answer_of(store, "a" * 32)],
            fence=first,
        )
        assert await listed(WaitingQuery("acme", voter="w")) == []

    async def test_the_inbox_gives_each_deadline_and_lists_what_expires_before_a_time(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        soon = replace(make_pause("a" * 32, "k1"), expires_at=NOW + timedelta(hours=1))
        later = replace(make_pause("b" * 32, "k2"), expires_at=NOW + timedelta(days=2))
        never = make_pause("c" * 32, "k3")
        await store.write([InsertPause(p) for p in (soon, later, never)], fence=fence)
        listed = await store.pauses.list_waiting(WaitingQuery("acme"))
        assert [w.expires_at for w in listed] == [soon.expires_at, later.expires_at, None]
        found = await store.pauses.find_by_tenant_id_and_pause_id("acme", "a" * 32)
        assert found is not None
        assert found.expires_at == soon.expires_at
        expiring = WaitingQuery("acme", expiring_before=NOW + timedelta(hours=2))
        assert [w.pause.pause_id for w in await store.pauses.list_waiting(expiring)] == ["a" * 32]
        assert await store.pauses.count_waiting(expiring) == 1

    async def test_a_deadline_closes_a_pending_pause_once_and_no_answer_is_taken_after_it(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        due = NOW + timedelta(hours=1)
        asked = replace(make_pause(), expires_at=due)
        await store.write([InsertPause(asked)], fence=fence)
        assert await write_one(store, MarkPauseSent("acme", "p" * 32)) == PauseStatus.PENDING
        late = ResolvePause(asked, PauseStatus.RESOLVED, PauseResolution.REPLIED, ANSWER, due)
        assert await write_one(store, late) is None  # at the deadline: not taken
        rejected = PauseAnswer(
            decision=ToolCallApprovalDecisionDto(approved=False, reason="no answer within 1 h")
        )
        expire = ExpirePause("acme", "p" * 32, PauseStatus.TAKEN, rejected, due)
        expired = await write_one(store, expire, fence=fence)
        assert expired is not None
        assert (expired.status, expired.resolution) == (PauseStatus.TAKEN, PauseResolution.EXPIRED)
        assert expired.answer == rejected
        assert await write_one(store, expire, fence=fence) is None  # once
        [owed] = await store.pauses.find_due_withdrawals("ex-1")  # its channel is told
        assert owed.pause_id == "p" * 32
        [entry] = await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
            "acme", "ex-1"
        )
        assert (entry.resolution, entry.responder) == (PauseResolution.EXPIRED, None)

    async def test_an_answer_recorded_first_wins_over_the_deadline(self, store: Store) -> None:
        fence = await self._begin(store)
        asked = replace(make_pause(), expires_at=NOW + timedelta(hours=1))
        await store.write([InsertPause(asked)], fence=fence)
        answer = ResolvePause(asked, PauseStatus.RESOLVED, PauseResolution.REPLIED, ANSWER, NOW)
        assert await write_one(store, answer) is not None
        expire = ExpirePause("acme", "p" * 32, PauseStatus.CANCELLED, None, NOW + TTL)
        assert await write_one(store, expire, fence=fence) is None

    async def test_a_pause_climbs_its_ladder_one_step_at_a_time_and_only_while_pending(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        first = NOW + timedelta(hours=1)
        asked = replace(make_pause(), next_step_at=first)
        await store.write([InsertPause(asked)], fence=fence)
        found = await store.pauses.find_by_tenant_id_and_pause_id("acme", "p" * 32)
        assert found is not None
        assert (found.ladder_step, found.next_step_at) == (0, first)
        [waiting] = await store.pauses.list_waiting(WaitingQuery("acme"))
        assert (waiting.ladder_step, waiting.next_step_at) == (0, first)
        later = NOW + timedelta(hours=24)
        climb = ClimbLadder("acme", "p" * 32, 0, 1, later)
        assert await write_one(store, climb, fence=fence) is True
        assert await write_one(store, climb, fence=fence) is False  # taken once: it moved on
        found = await store.pauses.find_by_tenant_id_and_pause_id("acme", "p" * 32)
        assert found is not None
        assert (found.ladder_step, found.next_step_at) == (1, later)
        answer = ResolvePause(asked, PauseStatus.RESOLVED, PauseResolution.REPLIED, ANSWER, NOW)
        assert await write_one(store, answer) is not None
        last = ClimbLadder("acme", "p" * 32, 1, 2, None)
        assert await write_one(store, last, fence=fence) is False  # answered: no step left

    async def test_an_escalation_closes_the_pause_and_asks_anew_for_the_same_step_or_neither(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        first = make_pause()
        await store.write([InsertPause(first)], fence=fence)
        assert await write_one(store, MarkPauseSent("acme", "p" * 32, "desk/1")) is not None
        later = NOW + timedelta(hours=24)
        asked = replace(
            first, pause_id="q" * 32, channel="lead-channel", asked_at=later, escalation=1
        )
        escalated = await write_one(
            store, EscalatePause("acme", "p" * 32, asked, later), fence=fence
        )
        assert escalated is not None
        assert (escalated.closed.status, escalated.closed.resolution) == (
            PauseStatus.CANCELLED,
            PauseResolution.ESCALATED,
        )
        assert escalated.asked.seq > first.seq
        found = await store.pauses.find_by_step("ex-1", first.step_key)  # the step's newest
        assert found is not None
        assert (found.pause_id, found.escalation, found.status) == (
            "q" * 32,
            1,
            PauseStatus.PENDING,
        )
        [owed] = await store.pauses.find_due_withdrawals("ex-1")  # the first channel is told
        assert (owed.pause_id, owed.sent_reference) == ("p" * 32, "desk/1")
        again = EscalatePause("acme", "p" * 32, replace(asked, pause_id="r" * 32), later)
        assert await write_one(store, again, fence=fence) is None  # once
        assert await store.pauses.find_by_tenant_id_and_pause_id("acme", "r" * 32) is None
        answer = ResolvePause(asked, PauseStatus.RESOLVED, PauseResolution.REPLIED, ANSWER, later)
        assert await write_one(store, answer) is not None
        entries = await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
            "acme", "ex-1"
        )
        assert [(e.resolution, e.escalation) for e in entries] == [
            (PauseResolution.ESCALATED, 0),
            (PauseResolution.REPLIED, 1),
        ]

    async def test_an_answer_recorded_first_wins_over_the_escalation(self, store: Store) -> None:
        fence = await self._begin(store)
        first = make_pause()
        await store.write([InsertPause(first)], fence=fence)
        answer = ResolvePause(first, PauseStatus.RESOLVED, PauseResolution.REPLIED, ANSWER, NOW)
        assert await write_one(store, answer) is not None
        asked = replace(first, pause_id="q" * 32, escalation=1)
        assert (
            await write_one(store, EscalatePause("acme", "p" * 32, asked, NOW), fence=fence) is None
        )
        assert await store.pauses.find_by_tenant_id_and_pause_id("acme", "q" * 32) is None

    async def test_a_tree_rests_paused_with_its_lease_freed(self, store: Store) -> None:
        fence = await self._begin(store)
        await store.write([InsertPause(make_pause())], fence=fence)
        rested = await write_one(store, RestTree(fence, NOW, frozenset()), fence=fence)
        assert rested == Rested(cancelled=False, pending_ids=("p" * 32,))
        found = await store.executions.find_by_id("ex-1")
        assert found is not None
        assert found.status is ExecutionStatus.PAUSED
        taken = await write_one(store, AcquireLease("ex-1", "b", TTL, NOW))
        assert taken is not None  # freed

    async def test_a_rested_tree_names_its_pending_pauses_in_the_order_results_list_them(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write(
            [
                InsertPause(make_pause("c" * 32, "k1", answered_by=PauseAnswerer.CHANNEL)),
                InsertPause(make_pause("o" * 32, "k2")),
                InsertPause(make_pause("r" * 32, "k3")),
            ],
            fence=fence,
        )
        await store.write([await answer_of(store, "r" * 32)])
        rested = await write_one(store, RestTree(fence, NOW, frozenset({"r" * 32})), fence=fence)
        assert rested is not None
        assert rested.pending_ids == ("o" * 32, "c" * 32)  # the owner's first, then the channels'
        listed = await store.pauses.list_pending("ex-1")
        assert await store.pauses.list_pending("ex-1", rested.pending_ids) == listed
        assert await store.pauses.pending_ids("ex-1") == list(rested.pending_ids)
        # Listed by the ids given, in their order (an instance reads only those it does not
        # keep already).
        reversed_ids = list(reversed(rested.pending_ids))
        assert await store.pauses.list_pending("ex-1", reversed_ids) == listed[::-1]
        assert await store.pauses.list_pending("ex-1", []) == []

    async def test_a_tree_does_not_rest_on_an_answer_its_pass_has_not_tried(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write(
            [InsertPause(make_pause("1" * 32, "k1")), InsertPause(make_pause("2" * 32, "k2"))],
            fence=fence,
        )
        await store.write([await answer_of(store, "1" * 32)])
        assert await write_one(store, RestTree(fence, NOW, frozenset()), fence=fence) is None
        assert await write_one(store, AcquireLease("ex-1", "b", TTL, NOW)) is None  # still held
        found = await store.executions.find_by_id("ex-1")
        assert found is not None
        assert found.status is ExecutionStatus.RUNNING
        # An answer the pass has tried (and could not take) does not hold it.
        tried = frozenset({"1" * 32})
        rested = await write_one(store, RestTree(fence, NOW, tried), fence=fence)
        assert rested == Rested(cancelled=False, pending_ids=("2" * 32,))

    async def test_a_tree_rests_without_the_check_when_told_and_stays_cancelled(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write([InsertPause(make_pause())], fence=fence)
        await store.write([await answer_of(store)])
        await store.write([CancelExecutions("ex-1", NOW)])
        rested = await write_one(store, RestTree(fence, NOW, None), fence=fence)
        assert rested == Rested(cancelled=True, pending_ids=())
        found = await store.executions.find_by_id("ex-1")
        assert found is not None
        assert found.status is ExecutionStatus.CANCELLED
        taken = await write_one(store, AcquireLease("ex-1", "b", TTL, NOW))
        assert taken is not None

    async def test_a_pause_is_found_with_the_execution_it_waits_in(self, store: Store) -> None:
        fence = await self._begin(store)
        child = make_row("ex-1/2:launch#0@0", parent=make_row())
        await store.write([InsertChild(child)], fence=fence)
        await store.write(
            [
                InsertPause(make_pause("a" * 32, "k1")),
                InsertPause(make_pause("b" * 32, "k2", execution_id=child.execution_id)),
            ],
            fence=fence,
        )
        found = await store.pauses.find_with_execution("acme", "b" * 32)
        assert found is not None
        pause, execution = found
        assert pause == await store.pauses.find_by_tenant_id_and_pause_id("acme", "b" * 32)
        assert execution == await store.executions.find_by_id(child.execution_id)
        at_root = await store.pauses.find_with_execution("acme", "a" * 32)
        assert at_root is not None
        assert at_root[1].execution_id == "ex-1"
        assert await store.pauses.find_with_execution("other", "a" * 32) is None
        assert await store.pauses.find_with_execution("acme", "c" * 32) is None

    async def test_a_pause_is_found_by_its_reference_in_its_tenant_alone(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write([InsertPause(make_pause("a" * 32, "k1"))], fence=fence)
        found = await store.pauses.find_with_execution_by_ref("acme", pause_ref("a" * 32))
        assert found == await store.pauses.find_with_execution("acme", "a" * 32)
        assert found is not None
        by_ref = store.pauses.find_with_execution_by_ref
        assert await by_ref("other", pause_ref("a" * 32)) is None
        assert await by_ref("acme", pause_ref("b" * 32)) is None
        assert await by_ref("acme", "a" * 32) is None  # an id is no reference

    async def test_an_answer_to_a_pause_answered_before_adds_no_audit_entry(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        await store.write([InsertPause(make_pause())], fence=fence)
        stored = await store.pauses.find_by_tenant_id_and_pause_id("acme", "p" * 32)
        assert stored is not None
        await store.write([await answer_of(store)])
        later = PauseAnswer(decision=ToolCallApprovalDecisionDto(approved=False), responder="v")
        late = ResolvePause(stored, PauseStatus.RESOLVED, PauseResolution.REPLIED, later, NOW + TTL)
        assert await write_one(store, late) is None
        [entry] = await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
            "acme", "ex-1"
        )
        assert entry.responder == "u"
        found = await store.pauses.find_by_tenant_id_and_pause_id("acme", "p" * 32)
        assert found is not None
        assert found.answer == ANSWER

    async def test_a_pause_is_found_only_under_its_own_tenant(self, store: Store) -> None:
        fence = await self._begin(store)
        await store.write([InsertPause(make_pause())], fence=fence)
        assert await store.pauses.find_by_tenant_id_and_pause_id("other", "p" * 32) is None
        assert await write_one(store, MarkPauseSent("other", "p" * 32)) is None

    async def test_retention_removes_closed_pauses_whose_channels_were_told(
        self, store: Store
    ) -> None:
        fence = await self._begin(store)
        keys = ["pending", "resolved", "taken", "cancelled", "owed"]
        await store.write(
            [InsertPause(make_pause(str(i) * 32, key)) for i, key in enumerate(keys)], fence=fence
        )
        await store.write([MarkPauseSent("acme", "4" * 32)])
        await store.write(
            [
                await answer_of(store, "1" * 32),
                await answer_of(store, "2" * 32, PauseStatus.TAKEN),
                CancelPause("acme", "3" * 32, PauseResolution.CANCELLED, NOW),
                CancelPause("acme", "4" * 32, PauseResolution.CANCELLED, NOW),
            ]
        )
        assert await store.pauses.delete_resolved_before(NOW) == 0
        later = NOW + timedelta(seconds=1)
        assert await store.pauses.delete_resolved_before(later) == 2
        left = await store.pauses.find_by_root("ex-1", tuple(PauseStatus))
        assert [p.pause_id[0] for p in left] == ["0", "1", "4"]
        await store.write([MarkWithdrawn("acme", "4" * 32)])
        assert await store.pauses.delete_resolved_before(later) == 1

    async def test_an_audit_entry_is_written_once_per_pause(self, store: Store) -> None:
        fence = await self._begin(store)
        made = await write_one(store, InsertPause(make_pause()), fence=fence)
        entry = PauseAnswerRecord.of(made, PauseResolution.REPLIED, NOW, ANSWER)
        await store.records.save_pause_answer("acme", "ex-1", entry)
        other = PauseAnswerRecord.of(made, PauseResolution.CANCELLED, NOW, None)
        await store.records.save_pause_answer("acme", "ex-1", other)
        found = await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
            "acme", "ex-1"
        )
        assert found == [entry]
        assert (
            await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
                "other", "ex-1"
            )
            == []
        )
