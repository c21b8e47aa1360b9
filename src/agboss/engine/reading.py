"""An execution's `ExecutionOutput`, read from the store: its children, spend and record.

The tree's executions are read in one query (each row carries what its own steps spent), so
building ``result.children`` and the spends costs the same whatever the tree's size beyond the
rows themselves; only ``record=True`` reads each execution's journal.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import replace

from pydantic import BaseModel

from agboss.engine.runtime import Runtime
from agboss.enums import ExecutionStatus
from agboss.models.messages import Usage
from agboss.outputs import ExecutionOutput
from agboss.pauses.model import PauseAnswerRecord
from agboss.records.model import (
    ChildExecutionRecord,
    ExecutionRecord,
    LedgerRecord,
    Spend,
    StepRecord,
)
from agboss.store.protocol import ExecutionRow

__all__ = ["TreeReader"]


class _Tree:
    """A tree's rows, by parent, with each subtree's spend."""

    def __init__(self, rows: list[ExecutionRow]) -> None:
        self.children: dict[str, list[ExecutionRow]] = defaultdict(list)
        for row in rows:
            if row.parent_execution_id is not None:
                self.children[row.parent_execution_id].append(row)
        self._spend: dict[str, Usage] = {}

    def spend(self, row: ExecutionRow) -> Usage:
        """What an execution and its descendants spent."""
        found = self._spend.get(row.execution_id)
        if found is None:
            children = self.children.get(row.execution_id)
            found = row.spend
            if children:  # summed as numbers: one Usage for the subtree, not one per child
                parts = [row.spend, *(self.spend(child) for child in children)]
                found = Usage.model_construct(
                    input_tokens=sum(part.input_tokens for part in parts),
                    output_tokens=sum(part.output_tokens for part in parts),
                    cost=sum(part.cost for part in parts),
                    calls=sum(part.calls for part in parts),
                )
            self._spend[row.execution_id] = found
        return found


class TreeReader:
    """Builds outputs for one `App` instance."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def decoded_output(self, row: ExecutionRow) -> BaseModel | None:
        """An execution's stored output as its workflow's finish DTO."""
        if row.output_json is None:
            return None
        definition = self.runtime.assembly.workflows_by_name[row.workflow]
        return definition.graph.finish_output.model_validate_json(row.output_json)

    async def output(
        self,
        row: ExecutionRow,
        status: ExecutionStatus,
        output: BaseModel | None,
        *,
        record: bool,
        spent: Mapping[str, Usage] | None = None,
    ) -> ExecutionOutput:
        """The output of a root execution as it stands.

        Args:
            row: The execution, as read (at the start of the pass that moved it).
            status: Where it stands.
            output: Its output, if it finished.
            record: Whether to read the execution record too.
            spent: What the pass that moved it spent since ``row`` was read, by execution
                (an execution without children is then not read again).
        """
        store = self.runtime.store
        graph = self.runtime.assembly.workflows_by_name[row.workflow].graph
        if graph.has_children:
            rows = await store.executions.find_tree(row.root_execution_id)
        elif spent is not None:
            rows = [replace(row, spend=row.spend + spent.get(row.execution_id, Usage()))]
        else:
            found = await store.executions.find_by_id(row.execution_id)
            rows = [found or row]
        tree = _Tree(rows)
        stored = next((r for r in rows if r.execution_id == row.execution_id), row)
        pending = []
        if status is ExecutionStatus.PAUSED:
            pending = await store.pauses.list_pending(row.root_execution_id)
        execution_record = None
        if record:
            pauses = await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
                row.tenant_id, row.root_execution_id
            )
            ledger = [
                LedgerRecord(
                    caller=entry.caller,
                    execution_id=entry.execution_id,
                    usage=entry.usage,
                    at=entry.at.isoformat(),
                )
                for entry in await store.ledger.entries(row.root_execution_id)
            ]
            execution_record = ExecutionRecord(
                execution_id=row.execution_id,
                workflow=row.workflow,
                workflow_version=row.workflow_version,
                steps=await self._steps(row),
                pauses=pauses,
                spend=Spend.of(tree.spend(stored)),
                ledger=ledger,
                children=[
                    await self._child_record(child, tree, pauses)
                    for child in tree.children.get(row.execution_id, ())
                ],
            )
        children_records = execution_record.children if execution_record else None
        return ExecutionOutput(
            thread_id=row.thread_id,
            execution_id=row.execution_id,
            status=status,
            output=output,
            pending=pending,
            children=[
                self._child_output(child, tree, children_records[i] if children_records else None)
                for i, child in enumerate(tree.children.get(row.execution_id, ()))
            ],
            record=execution_record,
            spend=Spend.of(tree.spend(stored)),
        )

    def _child_output(
        self, row: ExecutionRow, tree: _Tree, record: ChildExecutionRecord | None
    ) -> ExecutionOutput:
        grandchildren = tree.children.get(row.execution_id, [])
        records = list(record.children) if record is not None else [None] * len(grandchildren)
        return ExecutionOutput(
            thread_id=row.thread_id,
            execution_id=row.execution_id,
            status=row.status,
            output=self.decoded_output(row),
            children=[
                self._child_output(child, tree, child_record)
                for child, child_record in zip(grandchildren, records, strict=True)
            ],
            record=record,
            spend=Spend.of(tree.spend(row)),
        )

    async def _steps(self, row: ExecutionRow) -> list[StepRecord]:
        entries = await self.runtime.store.journal.load(row.execution_id)
        ordered = sorted(entries.values(), key=lambda entry: entry.seq)
        return [StepRecord.model_validate_json(entry.record_json) for entry in ordered]

    async def _child_record(
        self, row: ExecutionRow, tree: _Tree, tree_pauses: list[PauseAnswerRecord]
    ) -> ChildExecutionRecord:
        steps = await self._steps(row)
        item_index = next((s.item_index for s in steps if s.item_index is not None), None)
        return ChildExecutionRecord(
            execution_id=row.execution_id,
            workflow=row.workflow,
            workflow_version=row.workflow_version,
            status=row.status,
            item_index=item_index,
            steps=steps,
            pauses=[entry for entry in tree_pauses if entry.execution_id == row.execution_id],
            spend=Spend.of(row.spend),
            children=[
                await self._child_record(child, tree, tree_pauses)
                for child in tree.children.get(row.execution_id, ())
            ],
        )
