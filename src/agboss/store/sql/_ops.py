"""Each write (`agboss.store.writes`) as statements, written once for every dialect.

A write is a unit of work (`agboss.store.sql._driver.Work`): a generator that yields its
statements and receives their rows. `work_of` chains a list of writes into one unit, which the
driver runs as one transaction.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from agboss.enums import ExecutionStatus, PauseStatus
from agboss.errors import ThreadOwnerError
from agboss.store._rows import (
    AT_NOW,
    EXECUTION_COLUMNS,
    EXECUTION_READ,
    PAUSE_COLUMNS,
    PENDING_IDS,
    QUESTION_DUE,
    STEPS_UNDER,
    TREE_DUE,
    by_seq,
    execution_of,
    pause_of,
    step_of,
)
from agboss.store._times import from_micros, to_micros
from agboss.store.protocol import ExecutionRow, Fence
from agboss.store.sql._builds import BUILD_OPS, record_build
from agboss.store.sql._decision_log import cut_decision_log, seal
from agboss.store.sql._delegations import DELEGATION_OPS
from agboss.store.sql._dialect import KEY_END, Deferred, Dialect, Sql
from agboss.store.sql._driver import Shape
from agboss.store.sql._pause_ops import LOGS_DECISIONS, PAUSE_OPS, DeleteResolvedPauses
from agboss.store.sql._standing import STANDING_OPS
from agboss.store.sql._statements import Ops, do, many_later, one_later, when
from agboss.store.writes import (
    Acquired,
    AcquireLease,
    AddLedgerEntry,
    Announce,
    AppendStep,
    BeginExecution,
    CancelExecutions,
    ClaimPause,
    CutDecisionLog,
    InsertChild,
    JournalRead,
    LockTree,
    MarkPauseSent,
    MarkWithdrawn,
    ReleaseClaim,
    ReleaseLease,
    RenewLease,
    ReopenExecution,
    ReopenTree,
    Rested,
    RestTree,
    SaveBranch,
    SavePiiTokens,
    SetExecutionStatus,
    StartLaunch,
    TakePause,
    TakeResolvedUnder,
    Write,
)

__all__ = ["shape_of", "work_of"]


def _micros(now: datetime | None) -> int | None:
    return None if now is None else to_micros(now)


def _ttl(ttl: timedelta) -> int:
    return int(ttl.total_seconds() * 1_000_000)


# ---- executions ----------------------------------------------------------------------------


_THREAD_OWNED = "SELECT 1 FROM threads WHERE tenant_id = ? AND thread_id = ? AND owner_id = ?"


def _execution_values(row: ExecutionRow) -> tuple[Any, ...]:
    created = to_micros(row.created_at)
    return (
        row.execution_id,
        row.root_execution_id,
        row.parent_execution_id,
        row.tenant_id,
        row.thread_id,
        row.owner_id,
        row.workflow,
        row.workflow_version,
        row.status.value,
        row.input_json,
        row.output_json,
        row.error_json,
        created,
        created,
        row.generation,
        _micros(row.wake_at),
        row.fingerprint,
    )


def _insert_execution(row: ExecutionRow) -> Sql:
    # A second insert of the same id (a child re-entered after a crash) changes nothing.
    return do(
        f"INSERT INTO executions ({EXECUTION_COLUMNS}) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        *_execution_values(row),
    )


def _begin_execution(write: BeginExecution) -> Ops:
    # One round trip: the execution and its lease are written only if the thread is the
    # owner's, and whether they were is returned with them (nothing is written for another).
    row = write.row
    owned = (row.tenant_id, row.thread_id, row.owner_id)
    if write.build is not None:
        yield from record_build(write.build)
    yield do(
        "INSERT INTO threads (tenant_id, thread_id, owner_id, created_at) "
        "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
        *owned,
        to_micros(row.created_at),
    )
    inserted = yield one_later(
        f"INSERT INTO executions ({EXECUTION_COLUMNS}) "
        "SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? "
        f"WHERE EXISTS ({_THREAD_OWNED}) RETURNING 1",
        *_execution_values(row),
        *owned,
    )
    yield do(
        "INSERT INTO leases (root_execution_id, holder, epoch, expires_at) "
        f"SELECT ?, ?, 1, {AT_NOW} + ? WHERE EXISTS ({_THREAD_OWNED})",
        row.root_execution_id,
        write.holder,
        _micros(write.now),
        _ttl(write.ttl),
        *owned,
    )

    def begun() -> Fence:
        if inserted.rows is None:
            raise ThreadOwnerError(
                f"thread {row.thread_id} belongs to another owner",
                hint="pass the thread's owner as owner_id, or start a new thread",
            )
        return Fence(row.root_execution_id, write.holder, 1)

    return Deferred(begun)


def _insert_child(write: InsertChild) -> Ops:
    yield _insert_execution(write.row)
    found = yield one_later(
        f"SELECT {EXECUTION_READ} FROM executions WHERE execution_id = ?",
        write.row.execution_id,
    )
    return when(found, execution_of)


def _set_execution_status(write: SetExecutionStatus) -> Ops:
    changed = yield one_later(
        "UPDATE executions SET status = ?, output_json = ?, error_json = ?, updated_at = ?, "
        "wake_at = NULL, resting_until = NULL, resting_paths = NULL "
        "WHERE execution_id = ? AND status != 'cancelled' RETURNING 1",
        write.status.value,
        write.output_json,
        write.error_json,
        to_micros(write.now),
        write.execution_id,
    )
    return when(changed, lambda row: row is not None)


def _cancel_executions(write: CancelExecutions) -> Ops:
    rows = yield many_later(  # the execution, and its descendants: <id>/<place>…
        "UPDATE executions SET status = 'cancelled', updated_at = ? "
        "WHERE (execution_id = ? OR (execution_id >= ? AND execution_id < ?)) "
        "AND status IN ('running', 'paused', 'waiting') RETURNING execution_id",
        to_micros(write.now),
        write.execution_id,
        write.execution_id + "/",
        write.execution_id + "/" + KEY_END,
    )
    return when(rows, lambda found: sorted(str(row[0]) for row in found))


def _reopen_tree(write: ReopenTree) -> Ops:
    # The failure goes to the history first (read from the row it replaces), then the row:
    # both only if the root is still failed in the generation the caller saw.
    unchanged = (write.root_execution_id, write.generation)
    yield do(
        "INSERT INTO retries (root_execution_id, generation, retried_at, retried_by, "
        "error_json) SELECT execution_id, generation + 1, ?, ?, error_json FROM executions "
        "WHERE execution_id = ? AND status = 'failed' AND generation = ?",
        to_micros(write.now),
        write.retried_by,
        *unchanged,
    )
    row = yield one_later(
        "UPDATE executions SET status = 'running', error_json = NULL, output_json = NULL, "
        "generation = generation + 1, updated_at = ? "
        "WHERE execution_id = ? AND status = 'failed' AND generation = ? "
        f"RETURNING {EXECUTION_READ}",
        to_micros(write.now),
        *unchanged,
    )
    return when(row, lambda found: None if found is None else execution_of(found))


def _reopen_execution(write: ReopenExecution) -> Ops:
    row = yield one_later(
        "UPDATE executions SET status = 'running', error_json = NULL, output_json = NULL, "
        "generation = ?, updated_at = ? "
        "WHERE execution_id = ? AND status IN ('failed', 'cancelled') AND generation < ? "
        "AND NOT EXISTS (SELECT 1 FROM executions AS root WHERE root.execution_id = ? "
        "AND root.status = 'cancelled') RETURNING 1",
        write.generation,
        to_micros(write.now),
        write.execution_id,
        write.generation,
        write.root_execution_id,
    )
    return when(row, lambda found: found is not None)


# ---- the journal and the ledger ------------------------------------------------------------


def _append_step(write: AppendStep) -> Ops:
    entry = write.entry
    yield do(
        "INSERT INTO steps "
        "(execution_id, step_key, seq, kind, result_json, record_json, created_at) "
        "VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM steps WHERE execution_id = ?), "
        "?, ?, ?, ?)",
        write.execution_id,
        entry.key,
        write.execution_id,
        entry.kind,
        entry.result_json,
        entry.record_json,
        to_micros(write.now),
    )
    usage = entry.usage
    if usage is not None:
        yield do(
            "UPDATE executions SET input_tokens = input_tokens + ?, "
            "output_tokens = output_tokens + ?, cost = cost + ?, "
            "model_calls = model_calls + ? WHERE execution_id = ?",
            usage.input_tokens,
            usage.output_tokens,
            usage.cost,
            usage.calls,
            write.execution_id,
        )


def _add_ledger_entry(write: AddLedgerEntry) -> Ops:
    usage = write.usage
    yield do(
        "INSERT INTO budget_ledger (root_execution_id, execution_id, caller, input_tokens, "
        "output_tokens, cost, calls, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        write.root_execution_id,
        write.execution_id,
        write.caller,
        usage.input_tokens,
        usage.output_tokens,
        usage.cost,
        usage.calls,
        to_micros(write.now),
    )


def _save_pii_tokens(write: SavePiiTokens) -> Ops:
    for token, value in write.tokens:
        yield do(
            "INSERT INTO pii_tokens (root_execution_id, token, value) VALUES (?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            write.root_execution_id,
            token,
            value,
        )


# ---- launches ------------------------------------------------------------------------------


def _start_launch(write: StartLaunch) -> Ops:
    yield do(
        "INSERT INTO launches (execution_id, place, started_at) VALUES (?, ?, ?) "
        "ON CONFLICT DO NOTHING",
        write.execution_id,
        write.place,
        to_micros(write.now),
    )
    row = yield one_later(
        "SELECT started_at FROM launches WHERE execution_id = ? AND place = ?",
        write.execution_id,
        write.place,
    )
    return when(row, lambda found: from_micros(int(found[0])))


def _save_branch(write: SaveBranch) -> Ops:
    branch = write.branch
    yield do(
        "INSERT INTO branches (execution_id, place, status, output_json, error_json, "
        "updated_at, generation) VALUES (?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (execution_id, place) DO UPDATE SET "
        "status = excluded.status, output_json = excluded.output_json, "
        "error_json = excluded.error_json, updated_at = excluded.updated_at, "
        "generation = excluded.generation",
        write.execution_id,
        branch.place,
        branch.status.value,
        branch.output_json,
        branch.error_json,
        to_micros(write.now),
        branch.generation,
    )


# ---- leases --------------------------------------------------------------------------------


def _acquire_lease(write: AcquireLease) -> Ops:
    root_execution_id, holder, ttl = write.root_execution_id, write.holder, write.ttl
    now, start_pass = write.now, write.start_pass
    at = _micros(now)
    taken = yield one_later(
        "INSERT INTO leases (root_execution_id, holder, epoch, expires_at, grant_id) "
        f"VALUES (?, ?, 1, {AT_NOW} + ?, ?) "
        "ON CONFLICT (root_execution_id) DO UPDATE SET previous_holder = leases.holder, "
        "holder = excluded.holder, epoch = leases.epoch + 1, expires_at = excluded.expires_at, "
        "grant_id = excluded.grant_id "
        f"WHERE leases.holder IS NULL OR leases.expires_at <= {AT_NOW} "
        "RETURNING epoch, previous_holder",
        root_execution_id,
        holder,
        at,
        _ttl(ttl),
        write.grant_id,
        at,
    )
    # Written only if this grant is the lease's now (it acquired the lease) and the answer was
    # recorded by this transaction: the intent of the tool the answer lets run, journaled
    # before the pass that runs it begins.
    intents = []
    answered = write.answered
    for intent in write.intents if write.grant_id is not None else ():
        if answered is None:
            break
        entry = intent.entry
        intents.append(
            (
                yield one_later(
                    "INSERT INTO steps "
                    "(execution_id, step_key, seq, kind, result_json, record_json, created_at) "
                    "SELECT ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM steps "
                    "WHERE execution_id = ?), ?, ?, ?, ? "
                    "WHERE EXISTS (SELECT 1 FROM leases WHERE root_execution_id = ? "
                    "AND grant_id = ?) AND EXISTS (SELECT 1 FROM pauses WHERE tenant_id = ? "
                    "AND pause_id = ? AND status = ? AND resolved_at = ? AND answer_json = ?) "
                    "AND EXISTS (SELECT 1 FROM executions WHERE execution_id = ? "
                    "AND workflow_version = COALESCE(?, workflow_version)) "
                    "ON CONFLICT DO NOTHING RETURNING step_key",
                    intent.execution_id,
                    entry.key,
                    intent.execution_id,
                    entry.kind,
                    entry.result_json,
                    entry.record_json,
                    to_micros(intent.now),
                    root_execution_id,
                    write.grant_id,
                    answered.pause.tenant_id,
                    answered.pause.pause_id,
                    answered.status.value,
                    to_micros(answered.now),
                    answered.answer.model_dump_json(),
                    root_execution_id,
                    write.version,
                )
            )
        )
    found = yield one_later(
        f"SELECT {EXECUTION_READ} FROM executions WHERE execution_id = ?", root_execution_id
    )
    started = resolved = pending = None
    if start_pass:
        # Only if this call acquired the lease (the row is ours, just granted) and an answer waits
        # to be moved: a pass begins, and one cut off leaves the tree running, which is how
        # recovery finds it.
        started = yield one_later(
            "UPDATE executions SET status = 'running' WHERE execution_id = ? "
            "AND status IN ('paused', 'waiting') AND EXISTS (SELECT 1 FROM leases "
            "WHERE root_execution_id = ? AND holder = ? "
            f"AND expires_at > {AT_NOW}) "
            "AND (EXISTS (SELECT 1 FROM pauses WHERE root_execution_id = ? "
            f"AND status = 'resolved') OR {TREE_DUE}) "
            "RETURNING 1",
            root_execution_id,
            root_execution_id,
            holder,
            at,
            root_execution_id,
            at,
        )
        # What the pass takes first, read here so that it starts without a read of its own:
        # the answers, and — only in a tree that is due, a condition the database checks once
        # before it looks at a row — the questions whose deadline or ladder step has come (the
        # branches a pass woken by time enters): an answer in a tree of many waiting questions
        # reads none of them.
        resolved = yield many_later(
            f"SELECT {PAUSE_COLUMNS} FROM pauses "
            "WHERE root_execution_id = ? AND status = 'resolved' "
            f"UNION ALL SELECT {PAUSE_COLUMNS} FROM pauses "
            f"WHERE root_execution_id = ? AND status = 'pending' AND {QUESTION_DUE} "
            f"AND EXISTS (SELECT 1 FROM executions WHERE execution_id = ? AND {TREE_DUE})",
            root_execution_id,
            root_execution_id,
            at,
            at,
            root_execution_id,
            at,
        )
        # Whether the pass that ends the tree must close waiting pauses (read which).
        pending = yield one_later(
            "SELECT 1 FROM pauses WHERE root_execution_id = ? AND status = 'pending' LIMIT 1",
            root_execution_id,
        )
    journal, steps = write.journal, None
    if journal is not None:
        # What the pass replays first (the answered step's scope): no one else journals this
        # tree's steps while the lease is held, so the rows stay true for the pass.
        execution_id, prefix = journal
        steps = yield many_later(STEPS_UNDER, execution_id, prefix, prefix + KEY_END)

    def acquired() -> Acquired | None:
        if taken.rows is None:
            return None
        read = (
            [] if resolved is None else sorted((pause_of(row) for row in resolved.rows), key=by_seq)
        )
        root = None if found.rows is None else execution_of(found.rows)
        status = None if root is None else root.status
        if root is not None and started is not None and started.rows is not None:
            root = replace(root, status=ExecutionStatus.RUNNING)
        return Acquired(
            fence=Fence(root_execution_id, holder, int(taken.rows[0])),
            previous_holder=None if taken.rows[1] is None else str(taken.rows[1]),
            status=status,
            row=root,
            resolved=(
                None
                if resolved is None
                else tuple(pause for pause in read if pause.status is PauseStatus.RESOLVED)
            ),
            due=tuple(pause for pause in read if pause.status is PauseStatus.PENDING),
            any_pending=None if pending is None else pending.rows is not None,
            intents=frozenset(str(row.rows[0]) for row in intents if row.rows is not None),
            journal=(
                None
                if journal is None or steps is None
                else JournalRead(*journal, {str(row[0]): step_of(row) for row in steps.rows})
            ),
        )

    return Deferred(acquired)


def _renew_lease(write: RenewLease) -> Ops:
    fence = write.fence
    row = yield one_later(
        f"UPDATE leases SET expires_at = {AT_NOW} + ? "
        "WHERE root_execution_id = ? AND holder = ? AND epoch = ? RETURNING 1",
        _micros(write.now),
        _ttl(write.ttl),
        fence.root_execution_id,
        fence.holder,
        fence.epoch,
    )
    return when(row, lambda found: found is not None)


def _lock_tree(write: LockTree) -> Ops:
    yield do("SELECT 1 FROM leases WHERE root_execution_id = ?{row_lock}", write.root_execution_id)


def _announce(write: Announce) -> Ops:
    # Nothing to write: its signal goes with the transaction's notice (`work_of`).
    yield from ()


def _release_lease(write: ReleaseLease) -> Ops:
    fence = write.fence
    yield do(
        "UPDATE leases SET holder = NULL, expires_at = 0 "
        "WHERE root_execution_id = ? AND holder = ? AND epoch = ?",
        fence.root_execution_id,
        fence.holder,
        fence.epoch,
    )


def _rest_tree(write: RestTree) -> Ops:
    fence, tried = write.fence, write.tried
    root = fence.root_execution_id
    unless = ""
    others: tuple[str, ...] = ()
    if tried is not None:
        # Seen by each statement as it runs: a later one may see an answer an earlier did
        # not (never the reverse), and the lease, kept then, is what says the pass goes on.
        marks = ", ".join("?" * len(tried))
        unless = (
            " AND NOT EXISTS (SELECT 1 FROM pauses WHERE root_execution_id = ? "
            f"AND status = 'resolved'{f' AND pause_id NOT IN ({marks})' if tried else ''})"
        )
        others = (root, *sorted(tried))
    # Waiting on time alone, unless a question is pending (then paused, with its wake-up).
    paused = yield one_later(
        "UPDATE executions SET status = CASE WHEN EXISTS (SELECT 1 FROM pauses "
        "WHERE root_execution_id = ? AND status = 'pending') THEN 'paused' ELSE ? END, "
        "output_json = NULL, error_json = NULL, wake_at = ?, resting_until = ?, "
        "resting_paths = ?, "
        f"updated_at = ? WHERE execution_id = ? AND status != 'cancelled'{unless} RETURNING 1",
        root,
        "paused" if write.wake_at is None else "waiting",
        _micros(write.wake_at),
        _micros(write.resting_until),
        None if write.resting_paths is None else json.dumps(list(write.resting_paths)),
        to_micros(write.now),
        root,
        *others,
    )
    released = yield one_later(
        "UPDATE leases SET holder = NULL, expires_at = 0 "
        f"WHERE root_execution_id = ? AND holder = ? AND epoch = ?{unless} RETURNING 1",
        root,
        fence.holder,
        fence.epoch,
        *others,
    )
    # What the result lists, read as the tree rested.
    pending = yield many_later(PENDING_IDS, root)

    def rested() -> Rested | None:
        if released.rows is None:
            return None
        return Rested(paused.rows is None, tuple(str(row[0]) for row in pending.rows))

    return Deferred(rested)


_OPS: dict[type[Any], Callable[[Any], Ops]] = {
    **PAUSE_OPS,
    **DELEGATION_OPS,
    **STANDING_OPS,
    **BUILD_OPS,
    CutDecisionLog: cut_decision_log,
    AcquireLease: _acquire_lease,
    AddLedgerEntry: _add_ledger_entry,
    Announce: _announce,
    AppendStep: _append_step,
    BeginExecution: _begin_execution,
    CancelExecutions: _cancel_executions,
    InsertChild: _insert_child,
    LockTree: _lock_tree,
    ReleaseLease: _release_lease,
    RenewLease: _renew_lease,
    ReopenExecution: _reopen_execution,
    ReopenTree: _reopen_tree,
    RestTree: _rest_tree,
    SaveBranch: _save_branch,
    SavePiiTokens: _save_pii_tokens,
    SetExecutionStatus: _set_execution_status,
    StartLaunch: _start_launch,
}


def work_of(
    writes: Sequence[Write[Any]], dialect: Dialect, notice: Sql | None = None
) -> Callable[[], Ops]:
    """The writes as one unit of work, in ``dialect``; its result is each write's, in order.
    ``notice``: the statement that announces their signals with the commit, run last."""
    for write in writes:
        if type(write) not in _OPS:
            raise TypeError(f"{type(write).__name__} is not a write of agboss.store.writes")

    logs = any(isinstance(write, LOGS_DECISIONS) for write in writes)

    def work() -> Ops:
        results = []
        for write in writes:
            results.append((yield from _OPS[type(write)](write)))
        if logs:  # last: the tenant's head is the last row the transaction locks
            yield from seal(dialect)
        if notice is not None:
            yield notice
        return results

    return work


_SINGLE_STATEMENT = (
    AddLedgerEntry,
    CancelExecutions,
    ClaimPause,
    DeleteResolvedPauses,
    MarkPauseSent,
    MarkWithdrawn,
    ReleaseClaim,
    ReleaseLease,
    RenewLease,
    SaveBranch,
    SetExecutionStatus,
    TakePause,
    TakeResolvedUnder,
)


def shape_of(writes: Sequence[Write[Any]], fence: Fence | None, notice: Sql | None = None) -> Shape:
    """What a driver may know of writes before it runs them (``notice``: the statement that
    announces their signals, run with them)."""
    return Shape(
        single=fence is None
        and notice is None
        and len(writes) == 1
        and isinstance(writes[0], _SINGLE_STATEMENT),
        durable=any(write.durable for write in writes),
    )
