"""The store's repository protocols: every store implements them and passes one contract suite.

State changes that must be atomic (lease acquire and renew, fenced writes, a pause's Pending →
Resolved) are single statements or single transactions in each implementation, never a read
followed by a write in Python. Times are passed in (``now``) from the application's Clock, so
that a test clock drives leases and retention as it drives everything else.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from agboss.enums import ExecutionStatus, PauseResolution, PauseStatus
from agboss.models.messages import Usage
from agboss.outputs import PendingPause
from agboss.pauses.model import PauseAnswer, PauseAnswerRecord, PauseRecord

__all__ = [
    "BranchRepository",
    "BranchRow",
    "BudgetLedgerRepository",
    "ExecutionRecordRepository",
    "ExecutionRepository",
    "ExecutionRow",
    "Fence",
    "LeaseRepository",
    "LedgerEntry",
    "PausedExecutionRepository",
    "StepEntry",
    "StepJournalRepository",
    "Store",
    "ThreadRow",
]


@dataclass(frozen=True, slots=True)
class Fence:
    """Proof that a pass holds a tree's lease: every write of the pass carries it.

    A holder that lost its lease (its epoch is no longer the lease's) can write nothing.
    """

    root_execution_id: str
    holder: str
    epoch: int


@dataclass(frozen=True, slots=True)
class ThreadRow:
    """A conversation: its tenant and its owner, fixed by the execution that opened it."""

    tenant_id: str
    thread_id: str
    owner_id: str


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
    error: bytes | None
    created_at: datetime
    updated_at: datetime

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
            error=None,
            created_at=now,
            updated_at=now,
        )


@dataclass(frozen=True, slots=True)
class StepEntry:
    """A journaled step: its result, read back instead of running the step again.

    Attributes:
        key: The step's idempotency key, unique in its execution.
        kind: ``model-call``, ``tool-run``, …
        result_json: The step's result.
        record_json: The step's `StepRecord`, for the execution record.
        seq: The order steps were journaled in, within the execution.
    """

    key: str
    kind: str
    result_json: str
    record_json: str
    seq: int = 0
    usage: Usage | None = None
    """What the step spent on models: added to its execution's spend when it is journaled."""


class ExecutionRepository(Protocol):
    """Threads and executions."""

    async def find_thread(self, tenant_id: str, thread_id: str) -> ThreadRow | None:
        """The thread, or ``None``."""
        ...

    async def begin(self, row: ExecutionRow, *, holder: str, lease_until: datetime) -> Fence:
        """Creates the thread if it is new, the execution, and its lease, in one transaction.

        Raises:
            ThreadOwnerError: The thread exists with another owner.
        """
        ...

    async def find(self, tenant_id: str, execution_id: str) -> ExecutionRow | None:
        """The execution of this tenant, or ``None``."""
        ...

    async def find_by_id(self, execution_id: str) -> ExecutionRow | None:
        """The execution, whatever its tenant (for recovery, which knows only ids)."""
        ...

    async def finish(
        self,
        fence: Fence,
        execution_id: str,
        *,
        status: ExecutionStatus,
        output_json: str | None,
        error: bytes | None,
        now: datetime,
    ) -> bool:
        """Sets an execution's status (and output or error) under the pass's fence.

        A cancelled execution stays cancelled: then nothing changes and it returns ``False``.

        Raises:
            LeaseLostError: The fence no longer holds.
        """
        ...

    async def find_interrupted(self, now: datetime, limit: int) -> list[str]:
        """Root executions a dead holder left: running with an expired lease, or paused with a
        resolved pause and a free lease (the answer was recorded, nobody moved the tree)."""
        ...

    async def insert_child(self, fence: Fence, row: ExecutionRow) -> ExecutionRow:
        """Creates a child execution under the pass's fence, or returns the one that exists."""
        ...

    async def find_children(self, execution_id: str) -> list[ExecutionRow]:
        """The executions a step of this execution started, oldest first."""
        ...

    async def spend_of(self, execution_id: str, *, tree: bool) -> Usage:
        """What an execution's steps spent (``tree``: with its descendants')."""
        ...

    async def cancel_under(self, fence: Fence, execution_id: str, *, now: datetime) -> None:
        """Cancels a running or paused execution and its descendants, under the fence."""
        ...

    async def cancel(self, tenant_id: str, thread_id: str, *, now: datetime) -> list[str]:
        """Cancels the thread's running and paused root executions; their ids."""
        ...


class StepJournalRepository(Protocol):
    """The step journal: each step's result under its idempotency key."""

    async def load(self, execution_id: str, prefix: str = "") -> dict[str, StepEntry]:
        """The journaled steps of an execution whose keys start with ``prefix``, by key."""
        ...

    async def append(
        self, fence: Fence, execution_id: str, entry: StepEntry, *, now: datetime
    ) -> None:
        """Journals a step under the pass's fence.

        Raises:
            LeaseLostError: The fence no longer holds.
        """
        ...


@dataclass(frozen=True, slots=True)
class BranchRow:
    """Where a launch's branch stands.

    Attributes:
        place: ``<node>#<visit>@<index>`` in its execution.
        status: ``waiting``, ``done``, ``failed`` or ``cancelled``.
        output_json: A done branch's output.
        error: A failed branch's error, pickled.
    """

    place: str
    status: str
    output_json: str | None
    error: bytes | None


class BranchRepository(Protocol):
    """Launches' bookkeeping: when each began, and where each branch stands."""

    async def start_launch(
        self, fence: Fence, execution_id: str, place: str, *, now: datetime
    ) -> datetime:
        """When the launch began: now the first time, the stored time after."""
        ...

    async def load(self, execution_id: str, prefix: str) -> dict[str, BranchRow]:
        """The branch rows of a launch (places starting with ``prefix``), by place."""
        ...

    async def save(
        self, fence: Fence, execution_id: str, branch: BranchRow, *, now: datetime
    ) -> None:
        """Records where a branch stands, under the pass's fence."""
        ...


class LeaseRepository(Protocol):
    """Leases on execution trees: one holder moves a tree at a time."""

    async def acquire(
        self, root_execution_id: str, holder: str, *, now: datetime, ttl: timedelta
    ) -> Fence | None:
        """Takes the lease if it is free or expired; ``None`` while another holds it."""
        ...

    async def renew(self, fence: Fence, *, now: datetime, ttl: timedelta) -> bool:
        """Extends a held lease; ``False`` if it was lost."""
        ...

    async def release(self, fence: Fence) -> None:
        """Frees the lease if the fence still holds it."""
        ...


class PausedExecutionRepository(Protocol):
    """The application's pauses: one record per waiting step, keyed by its idempotency key.

    Pending → Resolved, Pending → Taken (decided), Resolved → Taken and Pending → Cancelled are
    each one conditional statement: of two callers racing for the same pause, exactly one wins.
    """

    async def find_by_step(self, execution_id: str, step_key: str) -> PauseRecord | None:
        """The pause of a waiting step, if it was asked."""
        ...

    async def insert(self, fence: Fence, pause: PauseRecord) -> PauseRecord:
        """Records a new Pending pause under the pass's fence; its ``seq`` is assigned here.

        Raises:
            LeaseLostError: The fence no longer holds.
        """
        ...

    async def find_by_tenant_id_and_pause_id(
        self, tenant_id: str, pause_id: str
    ) -> PauseRecord | None:
        """The pause with this id of this tenant, or ``None`` (unknown, or past retention)."""
        ...

    async def mark_sent(self, tenant_id: str, pause_id: str) -> PauseStatus | None:
        """Notes that its channel's ``send`` returned; the pause's status as it is now."""
        ...

    async def resolve(
        self,
        tenant_id: str,
        pause_id: str,
        *,
        status: PauseStatus,
        resolution: PauseResolution,
        answer: PauseAnswer,
        now: datetime,
    ) -> PauseRecord | None:
        """Pending → ``status`` (Resolved, or Taken when decided at once), atomically.

        Returns:
            The resolved record, or ``None`` when the pause was not Pending.
        """
        ...

    async def take(self, tenant_id: str, pause_id: str) -> None:
        """Resolved → Taken: its step took the decision."""
        ...

    async def cancel_by_tenant_id_and_pause_id(
        self,
        tenant_id: str,
        pause_id: str,
        *,
        resolution: PauseResolution,
        now: datetime,
    ) -> PauseRecord | None:
        """Pending → Cancelled, atomically.

        Returns:
            The record as it was (with ``is_sent``), or ``None`` when it was not Pending.
        """
        ...

    async def find_by_root(
        self, root_execution_id: str, statuses: tuple[PauseStatus, ...]
    ) -> list[PauseRecord]:
        """A tree's pauses in these statuses, in the order they were asked."""
        ...

    async def list_pending(self, root_execution_id: str) -> list[PendingPause]:
        """A tree's Pending pauses as ``ExecutionOutput.pending`` lists them: the thread
        owner's (which carry their id) first, then the channels', each in the order asked
        (read without the records' full detail: it is on every resume's path)."""
        ...

    async def find_under(
        self, root_execution_id: str, path: str, statuses: tuple[PauseStatus, ...]
    ) -> list[PauseRecord]:
        """A tree's pauses in these statuses that wait under a branch path (its prefix)."""
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

    async def add(
        self, root_execution_id: str, execution_id: str, caller: str, usage: Usage, *, now: datetime
    ) -> None:
        """Counts one model call."""
        ...

    async def total(self, root_execution_id: str) -> Usage:
        """What the tree spent."""
        ...

    async def entries(self, root_execution_id: str) -> list[LedgerEntry]:
        """The tree's counted calls, in order."""
        ...


class Store(Protocol):
    """A durable store: the repositories of one database."""

    @property
    def executions(self) -> ExecutionRepository:
        """Threads and executions."""
        ...

    @property
    def journal(self) -> StepJournalRepository:
        """The step journal."""
        ...

    @property
    def leases(self) -> LeaseRepository:
        """Tree leases."""
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

    async def open(self) -> None:
        """Creates the schema if needed; idempotent."""
        ...

    async def close(self) -> None:
        """Releases the store's connections."""
        ...
