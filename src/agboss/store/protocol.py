"""The store's protocol: repositories that read, and `Store.write`, which changes state.

Every change goes through `Store.write`: a list of writes (`agboss.store.writes`) applied as one
transaction after the pass's fence is checked, so that an engine transition is whole or absent
and an instance that lost its lease writes nothing. The repositories read, but for the two
changes the specification makes through them, which no write makes: retention's
``PausedExecutionRepository.delete_resolved_before`` and an audit entry saved on its own,
``ExecutionRecordRepository.save_pause_answer`` (the engine writes audit entries with the
resolution that makes them). The specification's ``cancelByTenantIdAndPauseId`` is the
`CancelPause` write: the engine closes a pause inside a pass's fenced commit. So every change
has one way. Times are passed in (``now``) from the application's Clock, so a test clock drives
retention and deadlines as it drives everything else; a lease's time may instead be the
store's own clock (``now=None``).

A store also carries `Signals`: what its commits announce (a tree's lease released, an
answer recorded that no instance took) reaches every instance that listens — through the
database on PostgreSQL (``LISTEN``/``NOTIFY``), in memory within a process on SQLite — so that
an instance moves a tree, and a caller waiting for a lease goes on, without waiting for a
sweep. A signal is a hint, never a record: what it says is read from the store again.

Every store passes one contract suite, `agboss.testing.store_contract`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from agboss.enums import ExecutionStatus, PauseStatus
from agboss.errors import LeaseLostError
from agboss.models import Usage
from agboss.records import (
    DecisionChain,
    Delegation,
    LoggedDecision,
    PauseAnswerRecord,
    PauseRecord,
    PendingPause,
)

if TYPE_CHECKING:
    from agboss.store.writes import Results, Write

from agboss.store._builds import (
    BuildRepository,
    Served,
    StrandedQuery,
    WaitingBuild,
    WaitingCall,
)
from agboss.store._grants import DelegationRepository, StandingDecisionRepository

__all__ = [
    "BranchRepository",
    "BranchRow",
    "BranchStatus",
    "BudgetLedgerRepository",
    "BuildRepository",
    "DelegationRepository",
    "Exchange",
    "ExecutionRecordRepository",
    "ExecutionRepository",
    "ExecutionRow",
    "ExecutionsQuery",
    "FailedQuery",
    "Fence",
    "Hearer",
    "LedgerEntry",
    "PausedExecutionRepository",
    "RetryRow",
    "Served",
    "Signal",
    "SignalKind",
    "Signals",
    "StandingDecisionRepository",
    "StepEntry",
    "StepJournalRepository",
    "Store",
    "StrandedQuery",
    "ThreadRow",
    "TreeNode",
    "WaitingBuild",
    "WaitingCall",
    "WaitingPause",
    "WaitingQuery",
    "lease_lost",
]


@dataclass(frozen=True, slots=True)
class Fence:
    """Proof that a pass holds a tree's lease: every write of the pass carries it.

    A holder that lost its lease (its epoch is no longer the lease's) can write nothing.
    """

    root_execution_id: str
    holder: str
    epoch: int


def lease_lost(fence: Fence) -> LeaseLostError:
    """The error of acting on a tree whose lease the fence no longer holds."""
    return LeaseLostError(
        f"this instance lost the lease on execution tree {fence.root_execution_id}",
        hint="another instance took the tree over; its pass carries on the work",
    )


class SignalKind(StrEnum):
    """What a signal announces."""

    RELEASED = "released"
    """A tree's lease was freed: a caller waiting for it may take it now."""
    ANSWERED = "answered"
    """An answer was recorded that the instance recording it does not move: any other
    instance may acquire the tree's lease and move it."""


@dataclass(frozen=True, slots=True)
class Signal:
    """What a commit announced to every instance that listens.

    Attributes:
        kind: What happened.
        root_execution_id: The tree it happened to.
        origin: The holder id of the instance that announced it (``None``: not said).
    """

    kind: SignalKind
    root_execution_id: str
    origin: str | None = None


class Hearer(Protocol):
    """What listens to a store's signals (an instance's engine). Called on the event loop it
    listened from; it must return at once (it schedules what takes time)."""

    def heard(self, signal: Signal) -> None:
        """A signal arrived."""
        ...

    def missed(self) -> None:
        """Signals may have been lost (the listening connection was cut and is back): what
        they would have said is read from the store instead."""
        ...


class Signals(Protocol):
    """How a store's commits reach the instances that listen (see the module's docstring)."""

    @property
    def reaches_every_instance(self) -> bool:
        """Whether every instance on the store hears what any commits (``False``: only the
        instances in this process, so a waiter also looks again by itself)."""
        ...

    async def listen(self, hearer: Hearer) -> Callable[[], None]:
        """Starts delivering signals to ``hearer``: every signal committed after this returns
        reaches it. Returns what stops it."""
        ...


@dataclass(frozen=True, slots=True)
class ThreadRow:
    """A conversation: its tenant and its owner, fixed by the execution that opened it."""

    tenant_id: str
    thread_id: str
    owner_id: str


@dataclass(frozen=True, slots=True)
class Exchange:
    """One earlier request of a thread and its answer: a completed root execution's input and
    output, as stored."""

    execution_id: str
    workflow: str
    input_json: str
    output_json: str


@dataclass(frozen=True, slots=True)
class ExecutionRow:
    """One execution of a workflow: the root of a tree, or a child in it."""

    execution_id: str
    root_execution_id: str
    parent_execution_id: str | None
    tenant_id: str
    thread_id: str
    owner_id: str
    workflow: str
    workflow_version: str
    status: ExecutionStatus
    input_json: str
    output_json: str | None
    error_json: str | None
    created_at: datetime
    updated_at: datetime
    spend: Usage = field(default_factory=Usage)
    """What the execution's own steps spent (not its children's)."""
    generation: int = 0
    """How many times its tree was retried (`App.retry`) when it was made or last reopened:
    a root's is the tree's; a child failed or cancelled in an earlier generation is reopened
    when the pass that retries the tree reaches it."""
    wake_at: datetime | None = None
    """When a root that rests moves by itself (a retry's wait, a question's deadline or ladder
    step is due), else ``None``."""
    resting_until: datetime | None = None
    """When the earliest resting step (a retry's wait) of a root that rests is due, else
    ``None``: a pass woken before it enters only the branches of the questions due."""
    resting_paths: tuple[str, ...] | None = None
    """The branch paths of a resting root's resting steps: a pass woken by them enters only
    those branches. ``None`` when none rests, or when they are not known (a tree that rested
    before they were kept): then that pass re-enters every branch."""
    fingerprint: str | None = None
    """What its journal depends on, digested, as its build defined it when it began
    (`WorkflowDefinition.fingerprint`); ``None`` for an execution begun before builds were
    fingerprinted."""

    @classmethod
    def starting(
        cls,
        *,
        execution_id: str,
        parent: ExecutionRow | None,
        tenant_id: str,
        thread_id: str,
        owner_id: str,
        workflow: str,
        workflow_version: str,
        input_json: str,
        now: datetime,
        generation: int = 0,
        fingerprint: str | None = None,
    ) -> ExecutionRow:
        """A new running execution: a root (``parent=None``) or a child of ``parent``."""
        return cls(
            execution_id=execution_id,
            root_execution_id=execution_id if parent is None else parent.root_execution_id,
            parent_execution_id=None if parent is None else parent.execution_id,
            tenant_id=tenant_id,
            thread_id=thread_id,
            owner_id=owner_id,
            workflow=workflow,
            workflow_version=workflow_version,
            status=ExecutionStatus.RUNNING,
            input_json=input_json,
            output_json=None,
            error_json=None,
            created_at=now,
            updated_at=now,
            generation=generation,
            fingerprint=fingerprint,
        )


@dataclass(frozen=True, slots=True)
class StepEntry:
    """A journaled step: its result, read back instead of running the step again.

    Attributes:
        key: The step's idempotency key, unique in its execution.
        kind: ``model-call``, ``tool-run``, …
        result_json: The step's result.
        record_json: The step's `StepRecord`, for the execution record.
        seq: The order steps were journaled in, within the execution (set by the store).
        usage: What the step spent on models: added to its execution's spend when it is
            journaled.
    """

    key: str
    kind: str
    result_json: str
    record_json: str
    seq: int = 0
    usage: Usage | None = None


class TreeNode(NamedTuple):
    """What an execution's output needs of its row: read for every execution of a tree.

    The spend is the execution's own steps' (not its children's), as the store summed it.
    A named tuple: a tree of hundreds is read on every call that moves it, and a tuple is
    made several times faster than a frozen dataclass.
    """

    execution_id: str
    parent_execution_id: str | None
    thread_id: str
    workflow: str
    workflow_version: str
    status: ExecutionStatus
    output_json: str | None
    input_tokens: int
    output_tokens: int
    cost: float
    calls: int
    fingerprint: str | None = None
    """Its build's fingerprint when it began (`ExecutionRow.fingerprint`)."""


@dataclass(frozen=True, slots=True)
class WaitingQuery:
    """Which waiting pauses an inbox lists: a tenant's, narrowed by the optional fields.

    Attributes:
        tenant_id: The tenant.
        owner_id: Only the pauses of this owner's threads (and, with ``voter``, the voter's).
        voter: Only the pauses that name this person among their voters, on anyone's thread
            (a thread-owner role's quorum); with ``owner_id``, those and the owner's.
        channel: Only the pauses asked through this channel (a role's name, or a channel's).
        asked_before: Only the pauses asked before this time.
        after: The keyset of the last pause of the page before: ``(asked_at, root, seq)``.
        limit: The most to list.
        expiring_before: Only the pauses whose deadline comes before this time.
        delegated: And the pauses these delegations hand to the person listing them: each
            principal's threads' (and those naming the principal a voter), within the
            delegation's role and tool.
    """

    tenant_id: str
    owner_id: str | None = None
    channel: str | None = None
    asked_before: datetime | None = None
    after: tuple[datetime, str, int] | None = None
    limit: int = 50
    expiring_before: datetime | None = None
    voter: str | None = None
    delegated: tuple[Delegation, ...] = ()


@dataclass(frozen=True, slots=True)
class ExecutionsQuery:
    """Which execution trees a listing reads: a tenant's roots, newest change first.

    Attributes:
        tenant_id: The tenant.
        status: Only roots of this status (``None``: every status).
        owner_id: Only the executions of this owner's threads.
        workflow: Only those of this workflow.
        since: Only those changed at or after it.
        after: The keyset of the last of the page before: ``(updated_at, execution_id)``.
        limit: The most to list.
    """

    tenant_id: str
    status: ExecutionStatus | None = None
    owner_id: str | None = None
    workflow: str | None = None
    since: datetime | None = None
    after: tuple[datetime, str] | None = None
    limit: int = 50


@dataclass(frozen=True, slots=True)
class FailedQuery:
    """Which failed executions a listing reads: a tenant's failed roots, newest first.

    Attributes:
        tenant_id: The tenant.
        owner_id: Only the executions of this owner's threads.
        after: The keyset of the last of the page before: ``(failed_at, execution_id)``.
        limit: The most to list.
    """

    tenant_id: str
    owner_id: str | None = None
    after: tuple[datetime, str] | None = None
    limit: int = 50


@dataclass(frozen=True, slots=True)
class RetryRow:
    """One `App.retry` of a tree: what it replaced, as stored.

    Attributes:
        generation: The tree's generation it opened (1 for the first retry).
        retried_at: When, on the application's Clock.
        retried_by: Who asked for it, as they said (``None``: not said).
        error_json: The failure it replaced (`agboss.store._failures`).
    """

    generation: int
    retried_at: datetime
    retried_by: str | None
    error_json: str | None


@dataclass(frozen=True, slots=True)
class WaitingPause:
    """A pause waiting anywhere in a tenant, as an inbox lists it (its id shown only for a
    thread-owner pause, as in ``pending``)."""

    pause: PendingPause
    root_execution_id: str
    workflow: str
    thread_id: str
    owner_id: str
    asked_at: datetime
    seq: int
    input_json: str | None = None
    """The root execution's input, as stored: what was asked of the tree (the request)."""
    expires_at: datetime | None = None
    """Its deadline (``expires_after``), if it has one."""
    ladder_step: int = 0
    """How many steps of its role's ladder happened."""
    next_step_at: datetime | None = None
    """When its ladder's next step is due, if one is left."""
    claimed_by: str | None = None
    """Who claimed it (`App.claim`), if anyone did: the claim may have ended."""
    claimed_until: datetime | None = None
    """Until when that claim holds."""


class ExecutionRepository(Protocol):
    """Threads and executions."""

    async def find_thread(self, tenant_id: str, thread_id: str) -> ThreadRow | None:
        """The thread, or ``None``."""
        ...

    async def find(self, tenant_id: str, execution_id: str) -> ExecutionRow | None:
        """The execution of this tenant, or ``None``."""
        ...

    async def find_by_id(self, execution_id: str) -> ExecutionRow | None:
        """The execution, whatever its tenant (for recovery, which knows only ids)."""
        ...

    async def outline(self, root_execution_id: str) -> list[TreeNode]:
        """Every execution of a tree (the root first, then in the order they were made), only
        what their outputs need (a tree's outputs are built
        on every call that moves it, so the read stays small however many children it has)."""
        ...

    async def outline_of(
        self, root_execution_id: str, execution_ids: Sequence[str]
    ) -> list[TreeNode]:
        """`outline`'s rows of these executions of a tree (any order; an unknown id is left
        out): what a pass changed, read again into an outline read before."""
        ...

    async def pii_tokens(self, root_execution_id: str) -> dict[str, str]:
        """The tokens PII rules issued in a tree, and the values they stand for."""
        ...

    async def find_roots(self, tenant_id: str, thread_id: str) -> list[ExecutionRow]:
        """The thread's root executions that are running or paused, oldest first."""
        ...

    async def find_exchanges(
        self, tenant_id: str, thread_id: str, before: ExecutionRow, limit: int | None
    ) -> list[Exchange]:
        """The thread's root executions other than ``before`` that were begun and completed
        by the time it was begun, as exchanges, oldest first: the ``limit`` most recent (all
        for ``None``)."""
        ...

    async def list_roots(self, query: ExecutionsQuery) -> list[ExecutionRow]:
        """A tenant's root executions, newest change first, as ``query`` filters them, from
        an index (one per status, one across them)."""
        ...

    async def list_failed(self, query: FailedQuery) -> list[ExecutionRow]:
        """A tenant's failed root executions, newest first by ``(updated_at, execution_id)``
        (``updated_at``: when it failed), after ``query.after``: read by keyset from an index,
        so a page costs the same however many failed."""
        ...

    async def retries(self, root_execution_id: str) -> list[RetryRow]:
        """A tree's retries (`App.retry`), oldest first, with the failures they replaced."""
        ...

    async def find_interrupted(
        self, now: datetime | None, limit: int, served: Sequence[Served] | None = None
    ) -> list[str]:
        """Root executions whose lease is free or expired and that a pass must move: running
        (a pass was cut off), paused with a resolved pause (an answer nobody moved), or with a
        channel still to be told of a withdrawn pause. ``now=None``: the store's clock.
        ``served``: only the trees still to move whose workflow and version one of them
        serves (an ended tree owed a withdrawal is anyone's); ``None``: every tree."""
        ...


class StepJournalRepository(Protocol):
    """The step journal: each step's result under its key."""

    async def load(self, execution_id: str, prefix: str = "") -> dict[str, StepEntry]:
        """The journaled steps of an execution whose keys start with ``prefix``, by key, in
        the order they were journaled."""
        ...


class BranchStatus(StrEnum):
    """Where a launch's branch stands (its row, written as it comes back)."""

    WAITING = "waiting"
    """A pause under it waits for an answer."""
    DONE = "done"
    """It came back with its output."""
    FAILED = "failed"
    """It failed (its failure is stored)."""
    CANCELLED = "cancelled"
    """It was dropped: a FailFast sibling failed, or its launch's quorum was decided."""


@dataclass(frozen=True, slots=True)
class BranchRow:
    """Where a launch's branch stands.

    Attributes:
        place: ``<node>#<visit>@<index>`` in its execution.
        status: Where it stands.
        output_json: A done branch's output.
        error_json: A failed branch's failure (`agboss.store._failures`).
        generation: The tree's generation it was written in (`ExecutionRow.generation`): a
            branch that failed or was dropped in an earlier one runs again when its launch
            is re-entered.
    """

    place: str
    status: BranchStatus
    output_json: str | None = None
    error_json: str | None = None
    generation: int = 0


class BranchRepository(Protocol):
    """Launches' bookkeeping: where each branch stands."""

    async def load(self, execution_id: str, prefix: str) -> dict[str, BranchRow]:
        """The branch rows of a launch (places starting with ``prefix``), by place."""
        ...

    async def load_places(self, execution_id: str, places: Sequence[str]) -> dict[str, BranchRow]:
        """The rows of these branches (those that have one), by place."""
        ...

    async def count(self, execution_id: str, prefix: str) -> dict[BranchStatus, int]:
        """How many branch rows of a launch are in each status (only those present)."""
        ...


class PausedExecutionRepository(Protocol):
    """The application's pauses: one record per waiting step, keyed by its step.

    Its state changes are writes (`InsertPause`, `ResolvePause`, `TakePause`, `CancelPause`,
    …), each one conditional statement: of two callers racing for the same pause, exactly one
    wins.
    """

    async def find_by_step(self, execution_id: str, step_key: str) -> PauseRecord | None:
        """The pause of a waiting step, if it was asked."""
        ...

    async def find_by_tenant_id_and_pause_id(
        self, tenant_id: str, pause_id: str
    ) -> PauseRecord | None:
        """The pause with this id of this tenant, or ``None`` (unknown, or past retention)."""
        ...

    async def find_with_execution(
        self, tenant_id: str, pause_id: str
    ) -> tuple[PauseRecord, ExecutionRow] | None:
        """The pause with this id of this tenant and the execution it waits in, in one read
        (an answer's checks need both), or ``None``."""
        ...

    async def find_with_execution_by_ref(
        self, tenant_id: str, pause_ref: str
    ) -> tuple[PauseRecord, ExecutionRow] | None:
        """This tenant's pause whose reference (`pause_ref`) this is and the execution it waits
        in, in one read, or ``None`` (unknown, another tenant's, or past retention)."""
        ...

    async def find_by_root(
        self, root_execution_id: str, statuses: tuple[PauseStatus, ...]
    ) -> list[PauseRecord]:
        """A tree's pauses in these statuses, in the order they were asked."""
        ...

    async def list_pending(
        self, root_execution_id: str, ids: Sequence[str] | None = None
    ) -> list[PendingPause]:
        """A tree's Pending pauses as ``ExecutionOutput.pending`` lists them: the thread
        owner's (which carry their id) first, then the channels', each in the order asked
        (read without the records' full detail: it is on every resume's path).

        Args:
            root_execution_id: The tree.
            ids: Their ids in that order, when they were read already (`Rested.pending_ids`,
                `pending_ids`): those pauses are listed, in that order.
        """
        ...

    async def pending_ids(self, root_execution_id: str) -> list[str]:
        """The ids of a tree's Pending pauses, in the order `list_pending` lists them."""
        ...

    async def list_waiting(self, query: WaitingQuery) -> list[WaitingPause]:
        """A tenant's waiting pauses, oldest first (then by tree and order asked), from the
        keyset ``query.after`` on: an index serves it, however many pauses wait."""
        ...

    async def count_waiting(self, query: WaitingQuery) -> int:
        """How many waiting pauses ``query`` would list without its limit and keyset."""
        ...

    async def waiting_total(self) -> int:
        """How many questions wait for an answer, across tenants (the waiting questions'
        gauge)."""
        ...

    async def find_due_withdrawals(self, root_execution_id: str) -> list[PauseRecord]:
        """A tree's closed pauses whose channel is still to be told (``withdraw``)."""
        ...

    async def delete_resolved_before(self, cutoff: datetime) -> int:
        """Removes Taken and Cancelled records resolved before ``cutoff``; how many."""
        ...


class ExecutionRecordRepository(Protocol):
    """The permanent execution records: the pause audit trail."""

    async def save_pause_answer(
        self, tenant_id: str, root_execution_id: str, answer: PauseAnswerRecord
    ) -> None:
        """Writes a pause's entry, once: a second save of the same pause changes nothing."""
        ...

    async def find_pause_answers_by_tenant_id_and_root_execution_id(
        self, tenant_id: str, root_execution_id: str
    ) -> list[PauseAnswerRecord]:
        """Every entry of a tree, in the order its pauses were asked."""
        ...

    async def decision_log(
        self, tenant_id: str, *, after: int = 0, since: datetime | None = None, limit: int = 500
    ) -> list[LoggedDecision]:
        """A tenant's decision log in its chain's order: at most ``limit`` entries after place
        ``after``, decided at or after ``since`` when given."""
        ...

    async def decision_chain(self, tenant_id: str) -> DecisionChain | None:
        """A tenant's chain head (``None``: nothing was ever logged for it)."""
        ...

    async def decision_tenants(self) -> list[str]:
        """The tenants that have a decision log, in order."""
        ...


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One model call counted against a tree's budgets.

    Attributes:
        execution_id: The execution it was made in (a pause's execution for an interpreter).
        caller: ``agent:<name>`` or ``reply-interpreter:<name>``.
        usage: What it spent.
        at: When it was counted, on the application's Clock.
    """

    execution_id: str
    caller: str
    usage: Usage
    at: datetime


class BudgetLedgerRepository(Protocol):
    """What each execution tree spent on models, call by call."""

    async def total(self, root_execution_id: str) -> Usage:
        """What the tree spent."""
        ...

    async def entries(self, root_execution_id: str) -> list[LedgerEntry]:
        """The tree's counted calls, in order."""
        ...


class Store(Protocol):
    """A durable store: the repositories of one database, and its one way to change it."""

    @property
    def executions(self) -> ExecutionRepository:
        """Threads and executions."""
        ...

    @property
    def journal(self) -> StepJournalRepository:
        """The step journal."""
        ...

    @property
    def pauses(self) -> PausedExecutionRepository:
        """The pauses."""
        ...

    @property
    def records(self) -> ExecutionRecordRepository:
        """The execution records."""
        ...

    @property
    def branches(self) -> BranchRepository:
        """Launches' bookkeeping."""
        ...

    @property
    def ledger(self) -> BudgetLedgerRepository:
        """The budgets' ledger."""
        ...

    @property
    def standing(self) -> StandingDecisionRepository:
        """The standing decisions."""
        ...

    @property
    def delegations(self) -> DelegationRepository:
        """The delegations."""
        ...

    @property
    def builds(self) -> BuildRepository:
        """The builds that began executions."""
        ...

    @property
    def signals(self) -> Signals:
        """What its commits announce (`Write.announces`), to every instance that listens."""
        ...

    async def write(self, writes: Sequence[Write[Any]], *, fence: Fence | None = None) -> Results:
        """Applies ``writes`` as one transaction, in order; their results, each read by its
        write (``results[write]``). What they announce (`Write.announces`) is sent with the
        commit, and only if it commits.

        Raises:
            LeaseLostError: ``fence`` no longer holds its tree's lease; nothing is written.
            StoreError: The store failed (busy past its wait, unreachable, a value it cannot
                keep); nothing is written.
        """
        ...

    def session(self) -> AbstractAsyncContextManager[None]:
        """Binds what runs inside it (and the tasks it starts) to one connection, where the
        store has several: a pass's statements share one."""
        ...

    async def open(self, *, migrate: bool = True) -> None:
        """Opens the store; brings its schema to this version of agboss when ``migrate``.

        Raises:
            StoreError: It cannot be opened, its schema is older and ``migrate`` is false, or
                it was written by a newer agboss.
        """
        ...

    async def migrate(self) -> int:
        """Brings the schema to this version of agboss; the schema version it is at."""
        ...

    async def schema_version(self) -> int:
        """The version of the schema the store holds (0: none yet)."""
        ...

    async def close(self) -> None:
        """Releases the store's connections."""
        ...
