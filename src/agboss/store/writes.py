"""The store's writes: what an engine transition changes, as data.

`Store.write` applies a list of writes as one transaction — all of them or none — after checking
the pass's fence when one is given, and returns their `Results`: ``results[write]`` is that
write's result, typed by the write (a ``Write[T]`` gives a ``T``); `write_one` applies one.
An engine transition (a step's journal row with the pause it took and the spend it adds; a
resolution with its audit entry; a launch's drop) is one such list, so a crash leaves it whole
or absent.

Each write is a frozen dataclass whose type parameter is its result. A SQL store turns each into
statements (`agboss.store.sql`); another store may apply them however it likes, as long as it
passes the contract suite (`agboss.testing.store_contract`).

Times are the application's Clock's, passed in; a lease's ``now`` may be ``None``, meaning the
store's own clock (the database server's), so that instances on several machines agree on when
a lease expires.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, ClassVar, TypeVar

from agboss.enums import Decider, ExecutionStatus, PauseResolution, PauseStatus
from agboss.models import Usage
from agboss.records import (
    Delegation,
    PauseAnswer,
    PauseRecord,
    PauseVote,
    PauseVotes,
    Reassignment,
    StandingDecision,
)
from agboss.store._build_writes import (
    ContinueTree,
    KeepInstance,
    LeaveInstance,
    MovedCall,
    RecordBuild,
)
from agboss.store._write import Results, Write, write_one
from agboss.store.protocol import (
    BranchRow,
    ExecutionRow,
    Fence,
    Signal,
    SignalKind,
    StepEntry,
)

if TYPE_CHECKING:
    pass

__all__ = [
    "AcquireLease",
    "Acquired",
    "AddLedgerEntry",
    "Announce",
    "AppendStep",
    "BeginExecution",
    "CancelExecutions",
    "CancelPause",
    "CancelPendingUnder",
    "CastVote",
    "ClaimPause",
    "ClimbLadder",
    "ContinueTree",
    "CutDecisionLog",
    "EscalatePause",
    "Escalated",
    "ExpirePause",
    "GrantDelegation",
    "GrantStanding",
    "InsertChild",
    "InsertPause",
    "JournalRead",
    "KeepInstance",
    "LeaveInstance",
    "LockTree",
    "MarkPauseSent",
    "MarkWithdrawn",
    "MovedCall",
    "ReassignPause",
    "RecordBuild",
    "ReleaseClaim",
    "ReleaseLease",
    "RenewLease",
    "ReopenExecution",
    "ReopenTree",
    "ResolvePause",
    "RestTree",
    "Rested",
    "Results",
    "RevokeDelegation",
    "RevokeStanding",
    "SaveBranch",
    "SavePiiTokens",
    "SetExecutionStatus",
    "StartLaunch",
    "TakePause",
    "TakeResolvedUnder",
    "Voted",
    "Write",
    "write_one",
]

T = TypeVar("T")


# ---- executions ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BeginExecution(Write[Fence]):
    """A new root execution: its thread (if new), the execution, and its lease, held.

    Raises (from `Store.write`):
        ThreadOwnerError: The thread exists with another owner; nothing is written.
    """

    durable: ClassVar[bool] = False

    row: ExecutionRow
    holder: str
    ttl: timedelta
    now: datetime | None = None
    build: RecordBuild | None = None
    """The build's definitions, kept in the same transaction (an instance's first begin)."""

    def changed_executions(self) -> tuple[str, ...]:
        return (self.row.execution_id,)


@dataclass(frozen=True, slots=True)
class InsertChild(Write[ExecutionRow]):
    """A child execution; the one that exists is returned if it was made before."""

    row: ExecutionRow

    def changed_executions(self) -> tuple[str, ...]:
        return (self.row.execution_id,)


@dataclass(frozen=True, slots=True)
class SetExecutionStatus(Write[bool]):
    """An execution's status (and output or failure). A cancelled execution stays cancelled:
    then nothing changes and the result is ``False``."""

    execution_id: str
    status: ExecutionStatus
    now: datetime
    output_json: str | None = None
    error_json: str | None = None

    def changed_executions(self) -> tuple[str, ...]:
        return (self.execution_id,)


@dataclass(frozen=True, slots=True)
class CancelExecutions(Write[list[str]]):
    """Cancels a running or paused execution and its descendants; the ids it cancelled."""

    execution_id: str
    now: datetime

    def changed_executions(self) -> None:
        return None  # its descendants too


@dataclass(frozen=True, slots=True)
class ReopenTree(Write[ExecutionRow | None]):
    """`App.retry`: a failed root set running again in the tree's next generation, its failure
    moved to the tree's retries (with when and by whom) — only if the root is still failed in
    ``generation`` (another retry meanwhile reopens nothing); the root as reopened, else
    ``None``. Written under the tree's lease: the pass that follows holds it."""

    root_execution_id: str
    generation: int
    retried_by: str | None
    now: datetime

    def changed_executions(self) -> tuple[str, ...]:
        return (self.root_execution_id,)


@dataclass(frozen=True, slots=True)
class ReopenExecution(Write[bool]):
    """A child execution that failed or was cancelled in an earlier generation of its tree,
    set running in ``generation`` (the pass that retries the tree reached it) — unless its
    root was cancelled meanwhile; whether it was reopened."""

    execution_id: str
    root_execution_id: str
    generation: int
    now: datetime

    def changed_executions(self) -> tuple[str, ...]:
        return (self.execution_id,)


# ---- the journal and the spend -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AppendStep(Write[None]):
    """A journaled step; its usage joins its execution's spend in the same transaction."""

    execution_id: str
    entry: StepEntry
    now: datetime

    def changed_executions(self) -> tuple[str, ...]:
        return () if self.entry.usage is None else (self.execution_id,)  # its spend


@dataclass(frozen=True, slots=True)
class AddLedgerEntry(Write[None]):
    """One model call counted against a tree's budgets."""

    root_execution_id: str
    execution_id: str
    caller: str
    usage: Usage
    now: datetime


@dataclass(frozen=True, slots=True)
class SavePiiTokens(Write[None]):
    """Tokens a PII rule issued in a tree, with the values they stand for (a token already
    stored keeps its value)."""

    root_execution_id: str
    tokens: tuple[tuple[str, str], ...]


# ---- pauses --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class InsertPause(Write[PauseRecord]):
    """A new Pending pause; the result carries the ``seq`` the store numbered it with."""

    pause: PauseRecord


@dataclass(frozen=True, slots=True)
class MarkPauseSent(Write[PauseStatus | None]):
    """Its channel's ``send`` returned; the result is the pause's status as it is now.

    ``reference`` is what the channel keeps of the question it posted (a message's id), for
    its ``withdraw`` (`ChannelOutcome.await_reply`).
    """

    durable: ClassVar[bool] = False

    tenant_id: str
    pause_id: str
    reference: str | None = None


@dataclass(frozen=True, slots=True)
class ResolvePause(Write[PauseRecord | None]):
    """Pending → ``status`` (Resolved, or Taken when its channel decided at once), with the
    pause's audit entry; ``None`` (and nothing written) when the pause was not Pending.

    ``pause`` is the record as the store gave it (read, or returned by `InsertPause`): a
    pause's fields other than its state never change, so its audit entry is made from it and
    the write needs no read of its own.

    ``tell``: the pause's channel shows answers (``answered``): a sent pause is marked, in the
    same commit, as owing it that word (``withdrawal = 'due'``, as a withdraw is owed).

    ``answerer``: the person whose answer it is, when their role takes no one else's answer
    while a question is claimed: nothing is written (``None``) if someone else's claim holds
    at ``now``.
    """

    pause: PauseRecord
    status: PauseStatus
    resolution: PauseResolution
    answer: PauseAnswer
    now: datetime
    tell: bool = False
    answerer: str | None = None


@dataclass(frozen=True, slots=True)
class ClaimPause(Write[PauseRecord | None]):
    """A Pending pause claimed by ``by`` until ``until`` (`App.claim`) — or its claim renewed,
    when ``by`` holds it: the pause as claimed; ``None`` (nothing written) when it is not
    Pending, or someone else's claim holds at ``now``."""

    tenant_id: str
    pause_id: str
    by: str
    until: datetime
    now: datetime


@dataclass(frozen=True, slots=True)
class ReleaseClaim(Write[bool]):
    """``by``'s claim on a Pending pause ends (`App.release`); ``False`` when ``by`` held no
    claim on it that still held at ``now``."""

    tenant_id: str
    pause_id: str
    by: str
    now: datetime


@dataclass(frozen=True, slots=True)
class Voted:
    """What `CastVote` did.

    Attributes:
        votes: The question's votes after it (``None``: the question was not Pending, or its
            deadline had passed: nothing was written).
        counted: The vote was added; ``False`` when its voter had voted already (their vote
            is in ``votes``) or nothing was written.
        resolved: The pause as this vote resolved it — the quorum reached, or no longer
            reachable — else ``None``.
    """

    votes: PauseVotes | None
    counted: bool = False
    resolved: PauseRecord | None = None


@dataclass(frozen=True, slots=True)
class CastVote(Write[Voted]):
    """A vote on a Pending question whose role takes several approvals, with its own audit
    entry; under the pause row's lock, so that concurrent voters count each other: the vote
    that reaches the quorum, or makes it unreachable, resolves the pause in the same
    transaction (Pending → Resolved, its audit entry with the decision the votes made).

    ``pause`` is the record as the store gave it: its fields other than its state and its
    votes never change, and the votes are read again under the lock.
    """

    pause: PauseRecord
    vote: PauseVote
    now: datetime
    tell: bool = False
    """As `ResolvePause.tell`, for the vote that decides."""


@dataclass(frozen=True, slots=True)
class TakePause(Write[None]):
    """Resolved → Taken: its step took the decision."""

    tenant_id: str
    pause_id: str


@dataclass(frozen=True, slots=True)
class TakeResolvedUnder(Write[int]):
    """Resolved → Taken for every pause under a branch path (a dropped branch's answers,
    which no step will take); how many."""

    root_execution_id: str
    path: str


@dataclass(frozen=True, slots=True)
class CancelPause(Write[PauseRecord | None]):
    """Pending → Cancelled, with its audit entry; a pause whose ``send`` had returned is marked
    for its channel's ``withdraw``. ``None`` when it was not Pending."""

    tenant_id: str
    pause_id: str
    resolution: PauseResolution
    now: datetime


@dataclass(frozen=True, slots=True)
class ExpirePause(Write[PauseRecord | None]):
    """Pending → ``status`` by its deadline (`PauseResolution.EXPIRED`), with its audit entry:
    Taken with the decision ``on_expiry`` made (the step takes it in the same pass), or
    Cancelled for `OnExpiry.WITHDRAW` (no answer). A pause whose ``send`` had returned is
    marked for its channel's ``withdraw``. ``None`` when it was not Pending: an answer won."""

    tenant_id: str
    pause_id: str
    status: PauseStatus
    answer: PauseAnswer | None
    now: datetime


@dataclass(frozen=True, slots=True)
class ClimbLadder(Write[bool]):
    """A Pending pause moves up its role's ladder, from step ``from_step`` to ``to_step``
    (the steps that were due happened), its next step due at ``next_step_at``. ``False``
    when it was no longer Pending, or another pass moved it first."""

    tenant_id: str
    pause_id: str
    from_step: int
    to_step: int
    next_step_at: datetime | None


@dataclass(frozen=True, slots=True)
class Escalated:
    """What `EscalatePause` or `ReassignPause` did: the pause it closed, and the one it asked
    instead."""

    closed: PauseRecord
    asked: PauseRecord


@dataclass(frozen=True, slots=True)
class EscalatePause(Write[Escalated | None]):
    """Pending → Cancelled (`PauseResolution.ESCALATED`, with its audit entry; its channel owed
    a ``withdraw`` if it was sent), and ``asked`` — the question asked of another role, under
    a new id, for the same step — inserted with it: both or neither. ``None`` when it was no
    longer Pending (an answer won)."""

    tenant_id: str
    pause_id: str
    asked: PauseRecord
    now: datetime


@dataclass(frozen=True, slots=True)
class ReassignPause(Write[Escalated | None]):
    """Pending → Cancelled (`PauseResolution.REASSIGNED`, with its audit entry and its
    decision log entry saying who handed it on, where and why; its channel owed a
    ``withdraw`` if it was sent), and ``asked`` — the question asked again of the role or
    person it was handed to, under a new id, for the same step, not sent yet — inserted with
    it: both or neither. The root is due at ``now``, so that a sweep sends the new question if
    the pass that was to send it is cut off. ``None`` when it was no longer Pending, its
    deadline had come, or someone other than ``by`` holds a claim on it.

    Attributes:
        by: Who handed it on.
        reassigned: Where, and why.
    """

    tenant_id: str
    pause_id: str
    asked: PauseRecord
    now: datetime
    by: str
    reassigned: Reassignment

    def changed_executions(self) -> tuple[str, ...] | None:
        return (self.asked.root_execution_id,)


@dataclass(frozen=True, slots=True)
class CancelPendingUnder(Write[list[PauseRecord]]):
    """`CancelPause` for every Pending pause of a tree under a branch path (``""``: all).

    Attributes:
        by: Who closed them, in kind, for the decision log: the flow (a branch dropped, a
            tree failed), a person or the application's code (a thread cancelled).
        who: Who closed them, by name (the person who cancelled the thread).
    """

    root_execution_id: str
    path: str
    resolution: PauseResolution
    now: datetime
    by: Decider = Decider.FLOW
    who: str | None = None


@dataclass(frozen=True, slots=True)
class CutDecisionLog(Write[int]):
    """Retention: removes a tenant's entries decided before ``before`` — from the start of
    its chain, never one after an entry kept — and records where the chain was cut (the last
    removed entry's place and digest, which the first kept one follows), so that what is kept
    stays verifiable. How many were removed."""

    tenant_id: str
    before: datetime


@dataclass(frozen=True, slots=True)
class MarkWithdrawn(Write[None]):
    """Its channel was told (``withdraw`` returned, failed or timed out): not told again."""

    tenant_id: str
    pause_id: str


# ---- launches --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StartLaunch(Write[datetime]):
    """When a launch began: ``now`` the first time, the stored time after."""

    execution_id: str
    place: str
    now: datetime


@dataclass(frozen=True, slots=True)
class SaveBranch(Write[None]):
    """Where a launch's branch stands."""

    durable: ClassVar[bool] = False

    execution_id: str
    branch: BranchRow
    now: datetime


# ---- standing decisions --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GrantStanding(Write[None]):
    """A standing decision granted (`App.allow`)."""

    decision: StandingDecision


@dataclass(frozen=True, slots=True)
class FindStanding(Write[StandingDecision | None]):
    """Reads, in its transaction, the standing decision that approves a call (as
    `StandingDecisionRepository.covering`), and writes nothing: a question asked reads it in
    the commit that stores it, not in a round trip of its own."""

    tenant_id: str
    tool: str
    role: str
    thread_id: str
    owner_id: str
    now: datetime

    durable: ClassVar[bool] = False


@dataclass(frozen=True, slots=True)
class RevokeStanding(Write[StandingDecision | None]):
    """A standing decision revoked (`App.revoke`); the result is the decision as revoked, or
    ``None`` (nothing written) when there is no such decision or it was revoked before."""

    tenant_id: str
    decision_id: str
    revoked_by: str
    now: datetime


@dataclass(frozen=True, slots=True)
class GrantDelegation(Write[None]):
    """A delegation granted (`App.delegate`)."""

    delegation: Delegation


@dataclass(frozen=True, slots=True)
class RevokeDelegation(Write[Delegation | None]):
    """A delegation revoked (`App.revoke_delegation`); the result is the delegation as
    revoked, or ``None`` (nothing written) when there is no such delegation or it was revoked
    before."""

    tenant_id: str
    delegation_id: str
    revoked_by: str
    now: datetime


# ---- leases --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Acquired:
    """A lease acquired.

    Attributes:
        fence: What the pass's writes carry.
        previous_holder: Who held it before, when it was taken over from a holder whose lease
            expired (``None`` when it was free).
        status: The root execution's status when the lease was acquired (``None`` if it has no
            row): `ExecutionStatus.RUNNING` means a pass was cut off.
        row: The root execution as it is now (``None`` if it has no row).
        resolved: With ``start_pass``: the tree's Resolved pauses, in the order asked, read in
            the same transaction (what the pass takes first); ``None`` otherwise.
        due: With ``start_pass``: the tree's pending pauses whose deadline or ladder step has
            come, read with the resolved ones (the branches a pass woken by time enters).
        journal: With ``journal``: the steps journaled under that prefix of that execution,
            read in the same transaction (what the pass replays first); ``None`` otherwise.
        any_pending: With ``start_pass``: whether the tree had pending pauses (only a lease holder
            asks, so none appear while the lease is held but the pass's own); ``None``
            otherwise.
    """

    fence: Fence
    previous_holder: str | None
    status: ExecutionStatus | None
    row: ExecutionRow | None = None
    resolved: tuple[PauseRecord, ...] | None = None
    journal: JournalRead | None = None
    any_pending: bool | None = None
    due: tuple[PauseRecord, ...] = ()
    intents: frozenset[str] = frozenset()
    """The keys of the ``intents`` journaled with the lease (all, or none)."""


@dataclass(frozen=True, slots=True)
class JournalRead:
    """An execution's journaled steps under a key prefix, as a lease's transaction read them.

    Only a lease holder journals a tree's steps, so what was read with the lease stays true
    until its holder writes more.

    Attributes:
        execution_id: The execution.
        prefix: The key prefix read.
        steps: The steps journaled under it, by key.
    """

    execution_id: str
    prefix: str
    steps: Mapping[str, StepEntry]


@dataclass(frozen=True, slots=True)
class AcquireLease(Write[Acquired | None]):
    """Takes a tree's lease if it is free or expired (``None`` while another holds it).

    With ``start_pass``, a paused root with a resolved pause is set running in the same
    transaction: a pass begins, and one cut off leaves the tree running, which is how recovery
    finds it (a root with nothing to move stays paused).
    """

    root_execution_id: str
    holder: str
    ttl: timedelta
    now: datetime | None = None
    start_pass: bool = False
    journal: tuple[str, str] | None = None
    """An execution of the tree and a key prefix whose steps are read with the lease
    (`Acquired.journal`): a pass that moves an answer replays them without a read."""
    intents: tuple[AppendStep, ...] = ()
    """Journal rows written only if this write acquired the lease — the intent of the tool the
    answer lets run, for the pass that runs it (`Acquired.intents`)."""
    grant_id: str | None = None
    """What tells this grant of the lease apart (needed with ``intents``)."""
    answered: ResolvePause | None = None
    """The answer the ``intents`` wait on, committed before this write in its transaction:
    they are journaled only if it recorded that answer (a late answer to a pause resolved
    before journals none)."""
    version: str | None = None
    """The root's version the ``intents`` were made under: journaled only if the root still
    runs under it (a continuation may have moved it to a later build meanwhile)."""

    def changed_executions(self) -> tuple[str, ...]:
        return (self.root_execution_id,) if self.start_pass else ()


@dataclass(frozen=True, slots=True)
class LockTree(Write[None]):
    """Holds a tree's lease row until the transaction ends, waiting first for a pass's
    transaction on the tree to end: the first write of a transaction without a fence that
    changes a tree's pauses or executions (an answer that acquires the lease, a cancellation).

    A pass's transactions acquire the lease row (its fence) before the tree's rows; so must every
    other transaction that may wait on both, or two of them can each hold what the other
    waits for (a late answer that locked its pause, then waits for the lease row).
    """

    root_execution_id: str


@dataclass(frozen=True, slots=True)
class RenewLease(Write[bool]):
    """Extends a held lease; ``False`` if it was lost."""

    durable: ClassVar[bool] = False

    fence: Fence
    ttl: timedelta
    now: datetime | None = None


def _freed(fence: Fence) -> tuple[Signal, ...]:
    """What a commit that frees a lease announces."""
    return (Signal(SignalKind.RELEASED, fence.root_execution_id, fence.holder),)


@dataclass(frozen=True, slots=True)
class ReleaseLease(Write[None]):
    """Frees the lease if the fence still holds it."""

    durable: ClassVar[bool] = False

    fence: Fence

    def announces(self) -> tuple[Signal, ...]:
        return _freed(self.fence)


@dataclass(frozen=True, slots=True)
class Announce(Write[None]):
    """Announces ``signal`` with the transaction's commit, and writes nothing: an answer
    recorded without its tree's lease says that its tree is `SignalKind.ANSWERED`."""

    durable: ClassVar[bool] = False

    signal: Signal

    def announces(self) -> tuple[Signal, ...]:
        return (self.signal,)


@dataclass(frozen=True, slots=True)
class Rested:
    """A tree `RestTree` rested.

    Attributes:
        cancelled: Its root was cancelled meanwhile (``app.cancel``): it stays cancelled.
        pending_ids: The ids of its pending pauses as it rested, in the order
            ``ExecutionOutput.pending`` lists them (read in the same transaction: the result
            that lists them needs no read of its own).
    """

    cancelled: bool
    pending_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RestTree(Write[Rested | None]):
    """A pass ends on its tree's questions: the root Paused and the lease freed — unless a
    pause was resolved that the pass has not tried (its id is not in ``tried``), checked in
    the same statements, so that the pass goes on with that answer instead of a read first.

    ``tried=None`` rests without that check (the caller read the resolved pauses itself).

    Result: ``None`` when an answer waits (the lease is still held, the pass goes on), else
    the tree `Rested`.
    """

    durable: ClassVar[bool] = False

    fence: Fence
    now: datetime
    tried: frozenset[str] | None
    wake_at: datetime | None = None
    """When the tree moves by itself (a step's next attempt, a question's deadline or ladder
    step is due): it rests `WAITING` then, unless a pause is pending (`PAUSED`, with the same
    wake-up)."""
    resting_until: datetime | None = None
    """When its earliest resting step (a retry's wait) is due (`ExecutionRow.resting_until`)."""
    resting_paths: tuple[str, ...] | None = None
    """The branch paths of its resting steps (`ExecutionRow.resting_paths`); ``None``: not
    known (every branch is re-entered when they are due)."""

    def changed_executions(self) -> tuple[str, ...]:
        return (self.fence.root_execution_id,)

    def announces(self) -> tuple[Signal, ...]:
        # Said even when an answer kept the lease (the pass goes on): a waiter looks again.
        return _freed(self.fence)
