"""An execution's `ExecutionOutput`, read from the store: its children, spend and record.

The tree's executions are read in one query of the few columns an output needs (each row
carries what its own steps spent); the spends are summed as numbers and ``result.children`` is
built when first read, so a call that moves a tree of hundreds of children does not decode
them all. Only ``record=True`` reads each execution's journal (and builds the children then).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import overload

from pydantic import BaseModel

from agboss.engine.instance import Outline, Runtime
from agboss.engine.trees._failures import failure_record
from agboss.engine.trees._frame import ATTEMPT, ATTEMPT_FAILED
from agboss.enums import ExecutionStatus
from agboss.models import Usage
from agboss.pii import PiiPolicy
from agboss.records import (
    ChildExecutionRecord,
    ContinuationRecord,
    ContinuedCall,
    ExecutionOutput,
    ExecutionRecord,
    LedgerRecord,
    PauseAnswerRecord,
    PendingPause,
    RetryRecord,
    Spend,
    StepRecord,
)
from agboss.store.protocol import ExecutionRow, TreeNode

__all__ = ["PassChanges", "PassEnd", "TreeReader"]


class _Tree:
    """A tree's executions, by parent, with each subtree's spend.

    What the root's output needs (its direct children, the whole tree's spend) is one pass
    over the rows; the rest is built when a child's output is first read.
    """

    def __init__(self, nodes: Sequence[TreeNode]) -> None:
        self._nodes = nodes
        self._children: dict[str, list[TreeNode]] | None = None
        self._totals: dict[str, list[float]] | None = None
        self._pending: defaultdict[str, list[PendingPause]] | None = None

    @property
    def children(self) -> dict[str, list[TreeNode]]:
        """Each execution's children, in the order the rows came."""
        if self._children is None:
            self._children = defaultdict(list)
            for node in self._nodes:
                if node.parent_execution_id is not None:
                    self._children[node.parent_execution_id].append(node)
        return self._children

    def kids(self, node: TreeNode) -> list[TreeNode]:
        """An execution's children (for the root, read off the rows without grouping them)."""
        if self._children is None and node.parent_execution_id is None:
            return [n for n in self._nodes if n.parent_execution_id == node.execution_id]
        return self.children.get(node.execution_id, [])

    def _subtree_totals(self) -> dict[str, list[float]]:
        if self._totals is not None:
            return self._totals
        children = self.children
        # Each subtree summed once as plain numbers: in reverse preorder every child comes
        # before its parent, whatever order the rows were read in.
        order = [node for node in self._nodes if node.parent_execution_id is None]
        at = 0
        while at < len(order):
            order.extend(children.get(order[at].execution_id, ()))
            at += 1
        totals: dict[str, list[float]] = {}
        for node in reversed(order):
            total = totals.get(node.execution_id)
            if total is None:
                total = totals[node.execution_id] = [0, 0, 0.0, 0]
            total[0] += node.input_tokens
            total[1] += node.output_tokens
            total[2] += node.cost
            total[3] += node.calls
            parent = node.parent_execution_id
            if parent is not None:
                above = totals.get(parent)
                if above is None:
                    totals[parent] = list(total)
                else:
                    above[0] += total[0]
                    above[1] += total[1]
                    above[2] += total[2]
                    above[3] += total[3]
        self._totals = totals
        return totals

    def pending_under(self, node: TreeNode, pending: list[PendingPause]) -> list[PendingPause]:
        """The waiting pauses of an execution's subtree, in the root's order."""
        if not pending:
            return []
        if self._pending is None:
            # A child's id extends its parent's (``<parent>/<place>``): each pause belongs to
            # its execution and every execution above it.
            self._pending = defaultdict(list)
            for pause in pending:
                at = pause.child_execution_id
                while at is not None and "/" in at:
                    self._pending[at].append(pause)
                    at = at.rsplit("/", 1)[0]
        return list(self._pending.get(node.execution_id, ()))

    def spend(self, node: TreeNode) -> Spend:
        """What an execution and its descendants spent."""
        if self._totals is None and node.parent_execution_id is None:
            # The root's subtree is every row read.
            nodes = self._nodes
            total = [
                sum(n.input_tokens for n in nodes),
                sum(n.output_tokens for n in nodes),
                sum(n.cost for n in nodes),
                sum(n.calls for n in nodes),
            ]
        else:
            total = self._subtree_totals()[node.execution_id]
        return Spend.model_construct(
            input_tokens=int(total[0]),
            output_tokens=int(total[1]),
            cost=total[2],
            model_calls=int(total[3]),
        )


class _Children(Sequence[ExecutionOutput]):
    """An execution's child outputs, built when first read.

    A tree's outputs come back from every call that moves it; a caller that never reads
    ``children`` does not pay for decoding hundreds of them. Pickled or copied as a list.
    """

    __slots__ = ("_build", "_items", "_length")

    def __init__(self, length: int, build: Callable[[], list[ExecutionOutput]]) -> None:
        self._length = length
        self._build: Callable[[], list[ExecutionOutput]] | None = build
        self._items: list[ExecutionOutput] | None = None

    def _list(self) -> list[ExecutionOutput]:
        if self._items is None:
            assert self._build is not None
            self._items, self._build = self._build(), None
        return self._items

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> ExecutionOutput: ...

    @overload
    def __getitem__(self, index: slice) -> list[ExecutionOutput]: ...

    def __getitem__(self, index: int | slice) -> ExecutionOutput | list[ExecutionOutput]:
        return self._list()[index]

    def __iter__(self) -> Iterator[ExecutionOutput]:
        return iter(self._list())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return self._list() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a sequence that compares by its items

    def __repr__(self) -> str:
        return repr(self._list())

    def __reduce__(self) -> tuple[type[list[ExecutionOutput]], tuple[list[ExecutionOutput]]]:
        return list, (self._list(),)


def _node_of(row: ExecutionRow, spend: Usage) -> TreeNode:
    return TreeNode(
        execution_id=row.execution_id,
        parent_execution_id=row.parent_execution_id,
        thread_id=row.thread_id,
        workflow=row.workflow,
        workflow_version=row.workflow_version,
        status=row.status,
        output_json=row.output_json,
        input_tokens=spend.input_tokens,
        output_tokens=spend.output_tokens,
        cost=spend.cost,
        calls=spend.calls,
        fingerprint=row.fingerprint,
    )


@dataclass(frozen=True, slots=True)
class PassChanges:
    """Which rows of the tree a pass of this instance changed, for reading its outline.

    Attributes:
        epoch: The epoch of the pass's lease.
        changed: The executions whose rows its commits changed (``None``: not known).
    """

    epoch: int
    changed: frozenset[str] | None


@dataclass(frozen=True, slots=True)
class PassEnd:
    """What a pass of this instance knows of the tree it moved as it ends, so that reading the
    tree's output does not read it again: the one value the reader gets from the pass.

    Attributes:
        spent: What its steps spent since the root's row was read, by execution (an
            execution without children is then not read again).
        changes: The rows it changed (``None``: read the tree whole — another writer, a
            canceller, wrote it too).
        pending_ids: The ids of the tree's pending pauses, when the pass read them as it
            rested.
        wake_at: When the tree the pass rested moves by itself, if it does.
    """

    spent: Mapping[str, Usage]
    changes: PassChanges | None = None
    pending_ids: Sequence[str] | None = None
    wake_at: datetime | None = None
    """When the tree the pass rested moves by itself (a retry's wait), if it does."""


class TreeReader:
    """Builds outputs for one `App` instance.

    It keeps the outline of the trees its passes moved last, with their lease's epoch: only
    a lease holder writes a tree's executions, so when this instance's next pass holds the
    next epoch, no other one wrote in between, and only what that pass changed is read again
    (a tree of hundreds of children is not read whole on every resume).
    """

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.outside = runtime.assembly.pii_outside

    async def _outline(self, root: str, changes: PassChanges | None) -> list[TreeNode]:
        store = self.runtime.store
        if changes is None:  # read without a pass of this instance: whole, and not kept
            return await store.executions.outline(root)
        outlines = self.runtime.memory.outlines
        kept = outlines.take(root)
        if changes.changed is not None and kept is not None and kept.epoch == changes.epoch - 1:
            again = await store.executions.outline_of(root, sorted(changes.changed | {root}))
            if all(node.execution_id in kept.ids for node in again):  # else: new children
                fresh = {node.execution_id: node for node in again}
                kept = Outline(
                    changes.epoch, [fresh.get(n.execution_id, n) for n in kept.nodes], kept.ids
                )
            else:
                kept = None
        else:
            kept = None
        if kept is None:
            nodes = await store.executions.outline(root)
            kept = Outline(changes.epoch, nodes, frozenset(node.execution_id for node in nodes))
        outlines.keep(root, kept)
        return kept.nodes

    def decoded_output(self, row: ExecutionRow | TreeNode) -> BaseModel | None:
        """An execution's stored output as its workflow's finish DTO."""
        if row.output_json is None:
            return None
        definition = self.runtime.assembly.workflows_by_name.get(row.workflow)
        if definition is None:  # a workflow this build no longer has: shown without it
            return None
        return definition.graph.finish_output.model_validate_json(row.output_json)

    async def output(
        self,
        row: ExecutionRow,
        status: ExecutionStatus,
        output: BaseModel | None,
        *,
        record: bool,
        ended: PassEnd | None = None,
    ) -> ExecutionOutput:
        """The output of a root execution as it stands.

        Args:
            row: The execution, as read (at the start of the pass that moved it).
            status: Where it stands.
            output: Its output, if it finished.
            record: Whether to read the execution record too.
            ended: What the pass of this instance that moved it knows as it ends, if one did.
        """
        spent = None if ended is None else ended.spent
        changes = None if ended is None else ended.changes
        pending_ids = None if ended is None else ended.pending_ids
        store = self.runtime.store
        definition = self.runtime.assembly.workflows_by_name.get(row.workflow)
        if definition is None or definition.graph.has_children:  # unknown: read as a tree
            nodes = await self._outline(row.root_execution_id, changes)
        elif spent is not None:
            nodes = [_node_of(row, row.spend + spent.get(row.execution_id, Usage()))]
        else:
            found = await store.executions.find_by_id(row.execution_id) or row
            nodes = [_node_of(found, found.spend)]
        tree = _Tree(nodes)
        node = next((n for n in nodes if n.execution_id == row.execution_id), nodes[0])
        waiting = []
        if status is ExecutionStatus.PAUSED:
            memory = self.runtime.memory
            waiting = await memory.pending.listed(store, row.root_execution_id, pending_ids)
            if self.outside.masks:
                policy = self.outside.policy(row.workflow)
                waiting = [self.outside.pending(pause, policy) for pause in waiting]
        execution_record = None
        kids = tree.kids(node)
        children: Sequence[ExecutionOutput]
        if record:
            policy = self.outside.policy(row.workflow)
            trail = await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
                row.tenant_id, row.root_execution_id
            )
            # What a reason, a reply or a tool error may quote of the tree: its input's marked
            # values and its calls' (a kind of one's own is found by no detector).
            known = self.outside.input_values(row.workflow, row.input_json)
            for entry in trail:
                known += self.outside.call_values(entry.step)
            pauses = [self.outside.answer(entry, policy, known) for entry in trail]
            ledger = [
                LedgerRecord(
                    caller=entry.caller,
                    execution_id=entry.execution_id,
                    usage=entry.usage,
                    at=entry.at.isoformat(),
                )
                for entry in await store.ledger.entries(row.root_execution_id)
            ]
            records = [await self._child_record(kid, tree, pauses, known) for kid in kids]
            retries = [
                RetryRecord(
                    generation=retry.generation,
                    retried_at=retry.retried_at.isoformat(),
                    retried_by=retry.retried_by,
                    failure=failure_record(self.runtime.assembly, row.workflow, retry.error_json),
                )
                for retry in await store.executions.retries(row.root_execution_id)
            ]
            execution_record = ExecutionRecord(
                execution_id=row.execution_id,
                workflow=row.workflow,
                workflow_version=row.workflow_version,
                workflow_fingerprint=row.fingerprint,
                steps=await self._steps(row.execution_id, row.workflow, known),
                pauses=pauses,
                spend=tree.spend(node),
                ledger=ledger,
                children=records,
                retries=retries,
                continuations=await self._continuations(row, policy),
            )
            children = [
                self._child_output(kid, tree, kid_record, waiting)
                for kid, kid_record in zip(kids, records, strict=True)
            ]
        else:
            children = self._children(kids, tree, waiting)
        return ExecutionOutput(
            thread_id=row.thread_id,
            execution_id=row.execution_id,
            status=status,
            output=output,
            pending=waiting,
            children=children,
            record=execution_record,
            spend=tree.spend(node),
            wake_at=row.wake_at if ended is None else ended.wake_at,
            workflow_version=row.workflow_version,
            workflow_fingerprint=row.fingerprint,
        )

    def _children(
        self, kids: list[TreeNode], tree: _Tree, pending: list[PendingPause]
    ) -> Sequence[ExecutionOutput]:
        if not kids:
            return []
        return _Children(
            len(kids), lambda: [self._child_output(kid, tree, None, pending) for kid in kids]
        )

    def _child_output(
        self,
        node: TreeNode,
        tree: _Tree,
        record: ChildExecutionRecord | None,
        pending: list[PendingPause],
    ) -> ExecutionOutput:
        kids = tree.children.get(node.execution_id, [])
        children: Sequence[ExecutionOutput]
        if record is None:
            children = self._children(kids, tree, pending)
        else:
            children = [
                self._child_output(kid, tree, kid_record, pending)
                for kid, kid_record in zip(kids, record.children, strict=True)
            ]
        return ExecutionOutput(
            thread_id=node.thread_id,
            execution_id=node.execution_id,
            status=node.status,
            output=self.decoded_output(node),
            pending=tree.pending_under(node, pending),
            children=children,
            record=record,
            spend=tree.spend(node),
            workflow_version=node.workflow_version,
            workflow_fingerprint=node.fingerprint,
        )

    async def _continuations(
        self, row: ExecutionRow, policy: PiiPolicy
    ) -> list[ContinuationRecord]:
        """A root's moves to a new build, each call's arguments masked as a step's are."""
        moves = await self.runtime.store.builds.continuations(row.execution_id)
        if not self.outside.masks:
            return moves
        return [
            move.model_copy(update={"calls": [self._masked(call, policy) for call in move.calls]})
            for move in moves
        ]

    def _masked(self, call: ContinuedCall, policy: PiiPolicy) -> ContinuedCall:
        found = self.runtime.assembly.tool_named(call.agent, call.tool)
        dto = None if found is None else found[1].input
        shown = self.outside.arguments
        return call.model_copy(
            update={
                # The earlier build's tool may be gone: its arguments are masked by kind.
                "before_arguments": shown(call.before_arguments, None, policy),
                "arguments": shown(call.arguments, dto, policy),
            }
        )

    async def _steps(
        self, execution_id: str, workflow: str, known: list[tuple[str, str]]
    ) -> list[StepRecord]:
        """An execution's steps as a record shows them: masked by the marked values its tree
        holds (``known``) and its own calls'."""
        entries = await self.runtime.store.journal.load(execution_id)
        ordered = sorted(entries.values(), key=lambda entry: entry.seq)
        policy = self.outside.policy(workflow)
        steps = [
            StepRecord.model_validate_json(entry.record_json)
            for entry in ordered
            if entry.kind not in (ATTEMPT, ATTEMPT_FAILED)  # not steps that ran
        ]
        values = [*known, *(value for step in steps for value in self.outside.call_values(step))]
        return [self.outside.step(step, policy, values) for step in steps]

    async def _child_record(
        self,
        row: TreeNode,
        tree: _Tree,
        tree_pauses: list[PauseAnswerRecord],
        known: list[tuple[str, str]],
    ) -> ChildExecutionRecord:
        steps = await self._steps(row.execution_id, row.workflow, known)
        item_index = next((s.item_index for s in steps if s.item_index is not None), None)
        return ChildExecutionRecord(
            execution_id=row.execution_id,
            workflow=row.workflow,
            workflow_version=row.workflow_version,
            workflow_fingerprint=row.fingerprint,
            status=row.status,
            item_index=item_index,
            steps=steps,
            pauses=[entry for entry in tree_pauses if entry.execution_id == row.execution_id],
            spend=Spend.model_construct(
                input_tokens=row.input_tokens,
                output_tokens=row.output_tokens,
                cost=row.cost,
                model_calls=row.calls,
            ),
            children=[
                await self._child_record(child, tree, tree_pauses, known)
                for child in tree.children.get(row.execution_id, ())
            ],
        )
