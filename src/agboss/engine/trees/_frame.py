"""An execution frame in a pass: its row, its journal, the pass's writes, and the journal's
vocabulary (a step's intents and failed attempts).

The step machine (`agboss.engine.steps.run_step`) runs every journaled step against a frame.
The journal is loaded by scope (an agent's visit, a launch's join), so a pass reads only the
branches it moves.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from agboss.context import ExecutionContext, StepContext, Tenant
from agboss.engine.instance import Runtime
from agboss.engine.trees._lease import PassWrites
from agboss.pii import PiiSeam, TreeTokens
from agboss.records import PauseRecord, StepRecord
from agboss.store.protocol import ExecutionRow, Fence, StepEntry
from agboss.store.writes import JournalRead, SavePiiTokens

__all__ = [
    "ATTEMPT",
    "ATTEMPT_FAILED",
    "TOOL_STEP",
    "ExecutionFrame",
    "PassState",
    "attempt_key",
    "execution_context",
    "failed_key",
    "intent_of",
    "interrupted_key",
    "maybe_await",
    "step_context",
]

T = TypeVar("T")


def execution_context(row: ExecutionRow, step: StepContext | None = None) -> ExecutionContext:
    """The `ExecutionContext` of an execution, at a step: the one place one is made."""
    return ExecutionContext(
        tenant=Tenant(row.tenant_id),
        owner_id=row.owner_id,
        thread_id=row.thread_id,
        execution_id=row.execution_id,
        root_execution_id=row.root_execution_id,
        workflow=row.workflow,
        step=step,
    )


def step_context(record: StepRecord, kind: str | None = None) -> StepContext:
    """The `StepContext` of a step, from its record (as another ``kind`` of step at the same
    place: a tool-run step's channel-send): the one place one is made."""
    return StepContext(
        node_id=record.node_id,
        kind=kind or record.kind,
        idempotency_key=record.key,
        call_id=None if record.tool_call is None else record.tool_call.call_id,
        visit=record.visit,
        tool_loop_iteration=record.tool_loop_iteration,
        validation_attempts=record.validation_attempts,
        copy_index=record.copy_index,
        item_index=record.item_index,
    )


async def maybe_await(value: T | Awaitable[T]) -> T:
    """Awaits a handler's result if it is awaitable (handlers may be sync or async)."""
    if inspect.isawaitable(value):
        return await value
    return value


TOOL_STEP = "tool-run"
"""The kind of a tool's step (its journal row, its record, its approval pause's step)."""

ATTEMPT = "tool-attempt"
"""The kind of an intent's journal row: a tool's call begun (``<step>/attempt-<n>``)."""


def attempt_key(key: str, attempt: int) -> str:
    """The journal key of a step's ``attempt``-th intent."""
    return f"{key}/attempt-{attempt}"


ATTEMPT_FAILED = "attempt-failed"
"""The kind of the journal row of an attempt that failed and is tried again (`RetryPolicy`)."""


def interrupted_key(key: str, attempt: int) -> str:
    """The step key of the question whether to run again a call whose ``attempt`` may have
    run: never the key of the call's own approval."""
    return f"{key}/interrupted-{attempt}"


def failed_key(key: str, attempt: int) -> str:
    """The journal key of a step's failed ``attempt`` (its error, when the next is due)."""
    return f"{attempt_key(key, attempt)}/failed"


def intent_of(key: str, attempt: int, record: StepRecord) -> StepEntry:
    """The journal row that says a step's ``attempt``-th run is about to begin."""
    return StepEntry(
        key=attempt_key(key, attempt),
        kind=ATTEMPT,
        result_json=json.dumps({"attempt": attempt}),
        record_json=record.model_dump_json(),
        usage=None,
    )


@dataclass(slots=True)
class PassState:
    """What one pass knows about its tree: the branch paths of the pauses resolved for it.

    A waiting branch (or child) is re-entered only if a resolved pause waits under it — or
    every one, in a pass that recovers a tree whose last pass was cut off (``recovering``):
    what that pass did is read back from the store, not assumed.

    Attributes:
        resolved_paths: The branch paths of the pauses resolved for this pass, and of those
            found due (`due_paths`).
        recovering: Whether every waiting branch and paused child is re-entered.
        dropping: The branch paths of branches being dropped (their sends finish first).
    """

    resolved_paths: list[str] = field(default_factory=list)
    recovering: bool = False
    dropping: set[str] = field(default_factory=set)
    fresh: bool = False
    """The first run of a new tree's flow: nothing is stored for it yet, nothing is read."""
    pii_tokens: TreeTokens | None = None
    """The tree's PII tokens, read at the pass's first model call that needs them."""

    resolved: dict[tuple[str, str], PauseRecord] = field(default_factory=dict)
    """The pauses resolved for this pass, by their execution and step: a step re-entered
    finds its answer here, without a read."""

    due: dict[tuple[str, str], PauseRecord] = field(default_factory=dict)
    """The pending pauses whose deadline or ladder step had come when the pass acquired the lease,
    by their execution and step: a step re-entered finds its pause here once, without a read."""
    due_paths: tuple[str, ...] = ()
    """Their branch paths, and those of the resting steps whose wait is due (``rested``):
    entered as those of the answers are."""
    rested: bool = False
    """The pass was woken by its tree's resting steps: it enters every branch one rests in,
    so what rests after it is what its flow says (none is kept from before)."""
    reminding: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held while a channel is reminded and the step recorded: one at a time in a tree, so a
    crash repeats one reminder, never every branch's."""
    generation: int = 0
    """The tree's generation (`ExecutionRow.generation` of its root): what failed or was
    withdrawn in an earlier one is run, or asked, again when this pass reaches it."""

    new_thread: bool = False
    """The tree began a thread: it has no earlier exchange to read (`History`)."""
    begun: frozenset[str] = frozenset()
    """The journal keys of the tool intents written for this pass with its lease (the answer
    that lets the tool run): this pass's own, not a call cut off."""

    replay: JournalRead | None = None
    """Steps read with the pass's lease (the answered step's scope), used by the first load
    they cover instead of a read; the first run of the flow uses them or drops them."""

    def replayed(self, execution_id: str, prefix: str) -> dict[str, StepEntry] | None:
        """The steps of ``execution_id`` under ``prefix`` read with the lease, if that read
        covers them (taken once: what the pass journals after is not in it)."""
        replay = self.replay
        if replay is None or replay.execution_id != execution_id:
            return None
        if not prefix.startswith(replay.prefix):
            return None
        self.replay = None
        return {key: step for key, step in replay.steps.items() if key.startswith(prefix)}

    async def stored(self, read: Callable[[], Awaitable[T]], nothing: T) -> T:
        """What ``read`` finds in the store — or ``nothing`` in the first run of a new tree's
        flow, of which nothing is stored yet: the one place that shortcut is taken."""
        return nothing if self.fresh else await read()

    def take(self, resolved: Sequence[PauseRecord]) -> None:
        """Sets the pauses resolved for the next run of the flow."""
        self.resolved_paths = [pause.path for pause in resolved] + list(self.due_paths)
        self.resolved = {(pause.execution_id, pause.step_key): pause for pause in resolved}

    def affected(self, path: str) -> bool:
        """Whether a waiting branch or child at the branch path ``path`` is re-entered."""
        return self.recovering or any(resolved.startswith(path) for resolved in self.resolved_paths)

    def reopens(self, generation: int) -> bool:
        """Whether what failed, was dropped or was withdrawn in ``generation`` is run or asked
        again now: it was, before the tree was retried (`App.retry`)."""
        return generation < self.generation

    def dropped(self, path: str) -> bool:
        """Whether the branch path ``path`` lies under a branch being dropped."""
        return any(path.startswith(dropping) for dropping in self.dropping)


class ExecutionFrame:
    """One execution during one pass.

    Attributes:
        path: The branch path of this execution in its tree (``""`` for the root).
        item_index: The item of the nearest per-item launch above this execution, if any.
    """

    def __init__(
        self,
        runtime: Runtime,
        row: ExecutionRow,
        writes: PassWrites | None,
        *,
        state: PassState | None = None,
        path: str = "",
        item_index: int | None = None,
    ) -> None:
        self.runtime = runtime
        self.row = row
        self._writes = writes
        self.state = state or PassState()
        self.path = path
        self.item_index = item_index
        self.journal: dict[str, StepEntry] = {}
        self._loaded: set[str] = set()

    @property
    def writes(self) -> PassWrites:
        """The pass's writes (a frame that only reads records has none)."""
        if self._writes is None:
            raise RuntimeError("this frame only reads an execution's records; it moves nothing")
        return self._writes

    @property
    def fence(self) -> Fence:
        """The pass's fence."""
        return self.writes.lease.fence

    def child(self, row: ExecutionRow, *, path: str, item_index: int | None) -> ExecutionFrame:
        """The frame of a child execution in the same pass.

        A child started outside a per-item launch (a workflow step, a parallel branch) is in
        the item of the nearest per-item launch above it, if any: its pauses and steps carry
        that ``item_index``.
        """
        return ExecutionFrame(
            self.runtime,
            row,
            self._writes,
            state=self.state,
            path=path,
            item_index=self.item_index if item_index is None else item_index,
        )

    async def pii_seam(self) -> PiiSeam | None:
        """The seam this execution's model calls go through; ``None`` without PII rules."""
        policy = self.runtime.assembly.pii_policy(self.row.workflow)
        if not policy.active:
            return None
        state = self.state
        if state.pii_tokens is None:
            store, root = self.runtime.store, self.row.root_execution_id
            # A new tree has none stored; another's are read when a call needs them.
            state.pii_tokens = TreeTokens(
                load=None if state.fresh else lambda: store.executions.pii_tokens(root)
            )
        return PiiSeam(policy, state.pii_tokens)

    def keep_tokens(self, seam: PiiSeam | None) -> None:
        """Stores the tokens a model call issued with the pass's next commit — the one that
        journals the call, so that a token and the answer that may name it are one."""
        if seam is None:
            return
        issued = seam.tokens.take_issued()
        if issued:
            self.writes.add(SavePiiTokens(self.row.root_execution_id, tuple(issued)))

    def idempotency_key(self, step_key: str) -> str:
        """A step's idempotency key: unique in the store, the same on every re-entry."""
        return f"{self.row.execution_id}/{step_key}"

    def branch_path(self, scope: str) -> str:
        """The branch path of a place in this execution."""
        return f"{self.path}{self.row.execution_id}|{scope}/"

    def context(self, step: StepContext | None = None) -> ExecutionContext:
        """The `ExecutionContext` of this execution, at a step."""
        return execution_context(self.row, step)

    async def load(self, prefix: str = "") -> None:
        """Reads the journaled steps whose keys start with ``prefix`` (once per prefix)."""
        if prefix in self._loaded or "" in self._loaded:
            return
        entries = self.state.replayed(self.row.execution_id, prefix)
        if entries is None:
            journal, execution_id = self.runtime.store.journal, self.row.execution_id
            none: dict[str, StepEntry] = {}
            entries = await self.state.stored(lambda: journal.load(execution_id, prefix), none)
        for key, entry in entries.items():
            self.journal.setdefault(key, entry)
        self._loaded.add(prefix)

    def journaled(self, key: str) -> StepEntry | None:
        """The journal entry of a step, if it ran (its scope must be loaded)."""
        return self.journal.get(key)

    def attempts(self, key: str) -> int:
        """How many times a step with an intent was begun (its scope must be loaded): with no
        journal row of its own, the last one may have run — the step is in doubt."""
        count = 0
        while attempt_key(key, count + 1) in self.journal:
            count += 1
        return count

    def failed_attempts(self, key: str) -> int:
        """How many attempts of a step failed and were tried again (its scope loaded)."""
        count = 0
        while failed_key(key, count + 1) in self.journal:
            count += 1
        return count

    def next_attempt(self, key: str) -> int:
        """The attempt a step runs as now: the one written for this pass with its lease (the
        answer's commit), else the one after the last begun or failed."""
        begun = self.attempts(key)
        if begun and attempt_key(key, begun) in self.state.begun:
            return begun
        return max(begun, self.failed_attempts(key)) + 1

    def in_doubt(self, key: str, ended: int = 0) -> int:
        """The attempt of a step that may have run — begun, never ended (``ended``: how many
        of its attempts ended otherwise; one that failed and is tried again ended too), and not
        begun for this pass; 0 if none."""
        begun = self.attempts(key)
        if begun <= ended or key in self.journal or failed_key(key, begun) in self.journal:
            return 0
        return 0 if attempt_key(key, begun) in self.state.begun else begun

    async def records(self) -> list[StepRecord]:
        """The records of every journaled step, in the order they ran (read from the store,
        which numbers the steps as they are journaled)."""
        entries = await self.runtime.store.journal.load(self.row.execution_id)
        ordered = sorted(entries.values(), key=lambda entry: entry.seq)
        return [
            StepRecord.model_validate_json(entry.record_json)
            for entry in ordered
            if entry.kind not in (ATTEMPT, ATTEMPT_FAILED)  # not steps that ran
        ]
