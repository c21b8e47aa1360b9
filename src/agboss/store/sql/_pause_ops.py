"""Each write of a pause (`agboss.store.writes`) as statements: asked, sent, answered, taken,
closed — with its audit entry in the same transaction — up its ladder, escalated, reassigned,
withdrawn, and the repositories' own writes of pauses."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from agboss.enums import Decider, PauseAnswerer, PauseResolution, PauseStatus
from agboss.records import (
    DecisionEntry,
    PauseAnswer,
    PauseAnswerRecord,
    PauseRecord,
    PauseVotes,
    Reassignment,
    pause_ref,
)
from agboss.store._rows import PAUSE_COLUMNS, by_seq, pause_of
from agboss.store._times import from_micros, to_micros
from agboss.store.sql._decision_log import append, append_if_resolved
from agboss.store.sql._dialect import KEY_END, Deferred, Sql, computed
from agboss.store.sql._statements import Ops, do, many, many_later, one, one_later, when
from agboss.store.writes import (
    CancelPause,
    CancelPendingUnder,
    CastVote,
    ClaimPause,
    ClimbLadder,
    Escalated,
    EscalatePause,
    ExpirePause,
    InsertPause,
    MarkPauseSent,
    MarkWithdrawn,
    ReassignPause,
    ReleaseClaim,
    ResolvePause,
    TakePause,
    TakeResolvedUnder,
    Voted,
    Write,
)

__all__ = ["LOGS_DECISIONS", "PAUSE_OPS", "DeleteResolvedPauses", "SavePauseAnswer"]


def _insert_pause(write: InsertPause) -> Ops:
    pause = write.pause
    row = yield one_later(
        f"INSERT INTO pauses ({PAUSE_COLUMNS}, withdrawal, pause_ref) "
        "VALUES (?, ?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM pauses "
        "WHERE root_execution_id = ?), ?, NULL, FALSE, ?, ?, ?, ?, ?, NULL, ?, NULL, ?, ?, ?, "
        "NULL, ?, ?, ?, ?, ?, ?, ?, NULL, ?) RETURNING seq",
        pause.pause_id,
        pause.tenant_id,
        pause.step_key,
        pause.root_execution_id,
        pause.execution_id,
        pause.root_execution_id,
        pause.status.value,
        pause.answered_by.value,
        pause.channel,
        pause.agent,
        pause.ask.model_dump_json(),
        pause.step.model_dump_json(),
        to_micros(pause.asked_at),
        pause.path,
        pause.item_index,
        pause.generation,
        None if pause.expires_at is None else to_micros(pause.expires_at),
        pause.ladder_step,
        None if pause.next_step_at is None else to_micros(pause.next_step_at),
        pause.escalation,
        None if pause.votes is None else pause.votes.model_dump_json(),
        pause.claimed_by,  # a question handed to a person is asked claimed for them
        None if pause.claimed_until is None else to_micros(pause.claimed_until),
        pause_ref(pause.pause_id),
    )
    voters = _named_voters(pause)
    if voters:
        yield do(
            "INSERT INTO pause_voters (tenant_id, voter, pause_id) VALUES "
            + ", ".join(["(?, ?, ?)"] * len(voters)),
            *(value for voter in voters for value in (pause.tenant_id, voter, pause.pause_id)),
        )
    return when(row, lambda numbered: replace(pause, seq=int(numbered[0])))


def _named_voters(pause: PauseRecord) -> tuple[str, ...]:
    """The voters a thread-owner role's question names, each once: they answer it signed in,
    so their inboxes list it (a channel role's voters answer on its channel's side)."""
    if pause.answered_by is not PauseAnswerer.THREAD_OWNER or pause.votes is None:
        return ()
    return tuple(dict.fromkeys(pause.votes.eligible or ()))


def _mark_pause_sent(write: MarkPauseSent) -> Ops:
    # Closed while its send was returning: its channel is now owed a withdraw.
    row = yield one_later(
        "UPDATE pauses SET is_sent = TRUE, sent_reference = ?, withdrawal = CASE "
        "WHEN status = 'cancelled' AND withdrawal IS NULL THEN 'due' ELSE withdrawal END "
        "WHERE tenant_id = ? AND pause_id = ? RETURNING status",
        write.reference,
        write.tenant_id,
        write.pause_id,
    )
    return when(row, lambda found: None if found is None else PauseStatus(found[0]))


_AUDIT_COLUMNS = (
    "tenant_id, root_execution_id, seq, step_key, execution_id, generation, escalation, entry_json"
)


def _audit(
    pause: PauseRecord,
    resolution: PauseResolution,
    now: datetime,
    answer: PauseAnswer | None,
    *,
    by: Decider | None = None,
    who: str | None = None,
    reassigned: Reassignment | None = None,
) -> Ops:
    """A resolved pause's audit entry and its decision log entry (``by``, ``who``: who closed
    it unanswered, where its resolution does not say; ``reassigned``: where they handed it —
    the audit trail's ``responder`` is then who did)."""
    handed = None if reassigned is None else who
    yield _save_answer(
        pause.tenant_id,
        pause.root_execution_id,
        PauseAnswerRecord.of(pause, resolution, now, answer, who=handed, reassigned=reassigned),
    )
    yield append(
        pause.tenant_id,
        DecisionEntry.of(pause, resolution, now, answer, by=by, who=who, reassigned=reassigned),
    )


def _save_answer(tenant_id: str, root_execution_id: str, answer: PauseAnswerRecord) -> Sql:
    return do(
        f"INSERT INTO pause_answers ({_AUDIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT DO NOTHING",
        tenant_id,
        root_execution_id,
        answer.seq,
        answer.step.key,
        answer.execution_id,
        answer.generation,
        answer.escalation,
        answer.model_dump_json(),
    )


def _resolve_pause(write: ResolvePause) -> Ops:
    pause, answer = write.pause, write.answer
    at = to_micros(write.now)
    # A person's answer is not taken while someone else's claim holds (their role says so).
    claimed = "" if write.answerer is None else _UNCLAIMED
    row = yield one_later(
        "UPDATE pauses SET status = ?, resolution = ?, answer_json = ?, resolved_at = ?, "
        "withdrawal = CASE WHEN ? AND is_sent THEN 'due' ELSE withdrawal END "
        "WHERE tenant_id = ? AND pause_id = ? AND status = 'pending' "
        f"AND (expires_at IS NULL OR expires_at > ?){claimed} "
        "RETURNING is_sent, sent_reference, ladder_step, next_step_at",
        write.status.value,
        write.resolution.value,
        answer.model_dump_json(),
        at,
        write.tell,
        pause.tenant_id,
        pause.pause_id,
        at,  # an answer at or past the deadline is not taken: the deadline decides
        *(() if write.answerer is None else (write.answerer, at)),
    )
    # Its audit entry, only if the update above resolved it: sent with it, nothing read first.
    # A pause another call resolved (at another moment, or already audited) adds no entry.
    entry = PauseAnswerRecord.of(pause, write.resolution, write.now, answer)
    yield do(
        f"INSERT INTO pause_answers ({_AUDIT_COLUMNS}) "
        "SELECT tenant_id, root_execution_id, seq, step_key, execution_id, generation, "
        "escalation, ? "
        "FROM pauses "
        "WHERE tenant_id = ? AND pause_id = ? AND status = ? AND resolved_at = ? "
        "ON CONFLICT DO NOTHING",
        entry.model_dump_json(),
        pause.tenant_id,
        pause.pause_id,
        write.status.value,
        at,
    )
    logged = DecisionEntry.of(pause, write.resolution, write.now, answer)
    yield append_if_resolved(pause.tenant_id, logged, pause.pause_id, write.status.value, at)

    def resolved(found: Any) -> PauseRecord | None:
        # What changes while a pause waits is read back: the record given may predate its
        # send (a question this instance asked, answered without a read) or a reminder.
        if found is None:
            return None
        return replace(
            pause,
            status=write.status,
            resolution=write.resolution,
            answer=answer,
            resolved_at=write.now,
            is_sent=bool(found[0]),
            sent_reference=None if found[1] is None else str(found[1]),
            ladder_step=int(found[2]),
            next_step_at=None if found[3] is None else from_micros(int(found[3])),
        )

    return when(row, resolved)


_UNCLAIMED = " AND (claimed_by IS NULL OR claimed_by = ? OR claimed_until <= ?)"
"""No claim but the answerer's own holds at the time given."""


def _claim_pause(write: ClaimPause) -> Ops:
    row = yield one_later(
        "UPDATE pauses SET claimed_by = ?, claimed_until = ? "
        f"WHERE tenant_id = ? AND pause_id = ? AND status = 'pending'{_UNCLAIMED} "
        f"RETURNING {PAUSE_COLUMNS}",
        write.by,
        to_micros(write.until),
        write.tenant_id,
        write.pause_id,
        write.by,
        to_micros(write.now),
    )
    return when(row, lambda found: None if found is None else pause_of(found))


def _release_claim(write: ReleaseClaim) -> Ops:
    row = yield one_later(
        "UPDATE pauses SET claimed_by = NULL, claimed_until = NULL "
        "WHERE tenant_id = ? AND pause_id = ? AND status = 'pending' AND claimed_by = ? "
        "AND claimed_until > ? RETURNING 1",
        write.tenant_id,
        write.pause_id,
        write.by,
        to_micros(write.now),
    )
    return when(row, lambda found: found is not None)


def _cast_vote(write: CastVote) -> Ops:
    pause, vote = write.pause, write.vote
    at = to_micros(write.now)
    # An update that changes nothing takes the row's lock and reads its votes under it: a
    # concurrent vote waits, then reads this one's (both dialects, any isolation level).
    row = yield one(
        "UPDATE pauses SET votes_json = votes_json "
        "WHERE tenant_id = ? AND pause_id = ? AND status = 'pending' "
        "AND (expires_at IS NULL OR expires_at > ?) AND votes_json IS NOT NULL "
        "RETURNING votes_json",
        pause.tenant_id,
        pause.pause_id,
        at,  # a vote at or past the deadline is not taken, as an answer is not
    )
    if row is None:
        return Voted(None)
    votes = PauseVotes.model_validate_json(row[0])
    if votes.of(vote.voter) is not None or votes.counts(vote.cast_by or vote.voter):
        return Voted(votes)  # a seat takes one vote, and a person counts once: theirs stands
    votes = votes.adding(vote)
    yield do(
        "UPDATE pauses SET votes_json = ? WHERE tenant_id = ? AND pause_id = ?",
        votes.model_dump_json(),
        pause.tenant_id,
        pause.pause_id,
    )
    yield do(
        "INSERT INTO pause_votes (tenant_id, root_execution_id, seq, voter, place, voted_at, "
        "entry_json) VALUES (?, ?, ?, ?, ?, ?, ?)",
        pause.tenant_id,
        pause.root_execution_id,
        pause.seq,
        vote.voter,
        len(votes.votes),  # its place in the order cast
        at,
        vote.model_dump_json(),
    )
    yield append(pause.tenant_id, DecisionEntry.voted(pause, vote))
    decision = votes.outcome()
    if decision is None:
        return Voted(votes, counted=True)
    answer = PauseAnswer(decision=decision, responder=votes.deciders(), usage=votes.usage())
    resolve = ResolvePause(
        replace(pause, votes=votes),
        PauseStatus.RESOLVED,
        PauseResolution.REPLIED,
        answer,
        write.now,
        write.tell,
    )
    resolved = yield from _resolve_pause(resolve)
    return Deferred(lambda: Voted(votes, counted=True, resolved=computed(resolved)))


def _take_pause(write: TakePause) -> Ops:
    yield do(
        "UPDATE pauses SET status = 'taken' "
        "WHERE tenant_id = ? AND pause_id = ? AND status = 'resolved'",
        write.tenant_id,
        write.pause_id,
    )


def _take_resolved_under(write: TakeResolvedUnder) -> Ops:
    rows = yield many_later(
        "UPDATE pauses SET status = 'taken' WHERE root_execution_id = ? AND status = 'resolved' "
        "AND branch_path >= ? AND branch_path < ? RETURNING 1",
        write.root_execution_id,
        write.path,
        write.path + KEY_END,
    )
    return when(rows, len)


_CANCEL = (
    "UPDATE pauses SET status = 'cancelled', resolution = ?, resolved_at = ?, "
    "withdrawal = CASE WHEN is_sent THEN 'due' ELSE NULL END "
)


def _close_pending(
    update: str,
    params: tuple[Any, ...],
    tenant_id: str,
    pause_id: str,
    resolution: PauseResolution,
    now: datetime,
    answer: PauseAnswer | None,
) -> Ops:
    """One pause Pending → closed by ``update`` (its ``SET`` clause and ``params``), with its
    audit entry; ``None`` (and no entry) when it was not Pending."""
    row = yield one(
        update + "WHERE tenant_id = ? AND pause_id = ? AND status = 'pending' "
        f"RETURNING {PAUSE_COLUMNS}",
        *params,
        tenant_id,
        pause_id,
    )
    if row is None:
        return None
    pause = pause_of(row)
    yield from _audit(pause, resolution, now, answer)
    return pause


def _expire_pause(write: ExpirePause) -> Ops:
    return (
        yield from _close_pending(
            "UPDATE pauses SET status = ?, resolution = 'expired', answer_json = ?, "
            "resolved_at = ?, withdrawal = CASE WHEN is_sent THEN 'due' ELSE NULL END ",
            (
                write.status.value,
                None if write.answer is None else write.answer.model_dump_json(),
                to_micros(write.now),
            ),
            write.tenant_id,
            write.pause_id,
            PauseResolution.EXPIRED,
            write.now,
            write.answer,
        )
    )


def _climb_ladder(write: ClimbLadder) -> Ops:
    row = yield one_later(
        "UPDATE pauses SET ladder_step = ?, next_step_at = ? "
        "WHERE tenant_id = ? AND pause_id = ? AND status = 'pending' AND ladder_step = ? "
        "RETURNING ladder_step",
        write.to_step,
        None if write.next_step_at is None else to_micros(write.next_step_at),
        write.tenant_id,
        write.pause_id,
        write.from_step,
    )
    return when(row, lambda found: found is not None)


def _escalate_pause(write: EscalatePause) -> Ops:
    closed = yield from _close_pending(
        "UPDATE pauses SET status = 'cancelled', resolution = 'escalated', resolved_at = ?, "
        "withdrawal = CASE WHEN is_sent THEN 'due' ELSE NULL END ",
        (to_micros(write.now),),
        write.tenant_id,
        write.pause_id,
        PauseResolution.ESCALATED,
        write.now,
        None,
    )
    if closed is None:
        return None  # answered first: nothing is asked instead
    asked = yield from _insert_pause(InsertPause(write.asked))
    return Deferred(lambda: Escalated(closed, computed(asked)))


def _reassign_pause(write: ReassignPause) -> Ops:
    at = to_micros(write.now)
    row = yield one(
        "UPDATE pauses SET status = 'cancelled', resolution = 'reassigned', resolved_at = ?, "
        "withdrawal = CASE WHEN is_sent THEN 'due' ELSE NULL END "
        "WHERE tenant_id = ? AND pause_id = ? AND status = 'pending' "
        f"AND (expires_at IS NULL OR expires_at > ?){_UNCLAIMED} RETURNING {PAUSE_COLUMNS}",
        at,
        write.tenant_id,
        write.pause_id,
        at,  # at its deadline, the deadline decides
        write.by,
        at,
    )
    if row is None:
        return None  # answered, closed, past its deadline, or someone else's to handle
    closed = pause_of(row)
    yield from _audit(
        closed,
        PauseResolution.REASSIGNED,
        write.now,
        None,
        by=Decider.PERSON,
        who=write.by,
        reassigned=write.reassigned,
    )
    asked = yield from _insert_pause(InsertPause(write.asked))
    # Due now: a sweep finds the tree and sends the new question if no pass of ours does.
    yield do(
        "UPDATE executions SET wake_at = ? WHERE execution_id = ? "
        "AND (wake_at IS NULL OR wake_at > ?)",
        at,
        closed.root_execution_id,
        at,
    )
    return Deferred(lambda: Escalated(closed, computed(asked)))


def _cancel_pause(write: CancelPause) -> Ops:
    return (
        yield from _close_pending(
            _CANCEL,
            (write.resolution.value, to_micros(write.now)),
            write.tenant_id,
            write.pause_id,
            write.resolution,
            write.now,
            None,
        )
    )


def _cancel_pending_under(write: CancelPendingUnder) -> Ops:
    rows = yield many(
        _CANCEL + "WHERE root_execution_id = ? AND status = 'pending' "
        f"AND branch_path >= ? AND branch_path < ? RETURNING {PAUSE_COLUMNS}",
        write.resolution.value,
        to_micros(write.now),
        write.root_execution_id,
        write.path,
        write.path + KEY_END,
    )
    pauses = sorted((pause_of(row) for row in rows), key=by_seq)
    for pause in pauses:
        yield from _audit(pause, write.resolution, write.now, None, by=write.by, who=write.who)
    return pauses


def _mark_withdrawn(write: MarkWithdrawn) -> Ops:
    yield do(
        "UPDATE pauses SET withdrawal = 'done' "
        "WHERE tenant_id = ? AND pause_id = ? AND withdrawal = 'due'",
        write.tenant_id,
        write.pause_id,
    )


# The repositories' own writes (the specification names them there), not `Store.write`'s.


@dataclass(frozen=True, slots=True)
class SavePauseAnswer(Write[None]):
    """`ExecutionRecordRepository.save_pause_answer` as a unit of work: a pause's audit
    entry, once (a second save of the same pause changes nothing), and its decision log
    entry."""

    tenant_id: str
    root_execution_id: str
    answer: PauseAnswerRecord


@dataclass(frozen=True, slots=True)
class DeleteResolvedPauses(Write[int]):
    """`PausedExecutionRepository.delete_resolved_before` as a unit of work: removes Taken and
    Cancelled pause records resolved before ``cutoff`` (their channels told); how many."""

    cutoff: datetime


def _save_pause_answer(write: SavePauseAnswer) -> Ops:
    yield _save_answer(write.tenant_id, write.root_execution_id, write.answer)
    yield append(write.tenant_id, DecisionEntry.recorded(write.root_execution_id, write.answer))


def _delete_resolved_pauses(write: DeleteResolvedPauses) -> Ops:
    rows = yield many_later(
        "DELETE FROM pauses WHERE status IN ('taken', 'cancelled') AND resolved_at < ? "
        "AND (withdrawal IS NULL OR withdrawal = 'done') RETURNING 1",
        to_micros(write.cutoff),
    )
    # The voters of the questions gone (few: a thread-owner role's quorums').
    yield do(
        "DELETE FROM pause_voters WHERE NOT EXISTS (SELECT 1 FROM pauses p "
        "WHERE p.tenant_id = pause_voters.tenant_id AND p.pause_id = pause_voters.pause_id)"
    )
    return when(rows, len)


PAUSE_OPS: dict[type[Any], Callable[[Any], Ops]] = {
    CancelPause: _cancel_pause,
    CancelPendingUnder: _cancel_pending_under,
    CastVote: _cast_vote,
    ClaimPause: _claim_pause,
    ClimbLadder: _climb_ladder,
    DeleteResolvedPauses: _delete_resolved_pauses,
    EscalatePause: _escalate_pause,
    ExpirePause: _expire_pause,
    InsertPause: _insert_pause,
    MarkPauseSent: _mark_pause_sent,
    MarkWithdrawn: _mark_withdrawn,
    ReassignPause: _reassign_pause,
    ReleaseClaim: _release_claim,
    ResolvePause: _resolve_pause,
    SavePauseAnswer: _save_pause_answer,
    TakePause: _take_pause,
    TakeResolvedUnder: _take_resolved_under,
}
"""The writes of pauses, each as its unit of work."""

LOGS_DECISIONS: tuple[type[Any], ...] = (
    CancelPause,
    CancelPendingUnder,
    CastVote,
    EscalatePause,
    ExpirePause,
    ReassignPause,
    ResolvePause,
    SavePauseAnswer,
)
"""The writes that may append to the decision log: a transaction of one seals the chain."""
