"""The flow runner: runs an execution's compiled flow in a pass, node by node.

Agent nodes run the tool loop; a workflow step runs its child execution (in its own frame);
a launch runs its branches (`LaunchRun`). Anything that cannot finish in this pass — it waits
for an answer, or rests until its next attempt — returns a `Waiting` that says when it moves by
itself, and the execution rests once nothing else can move. A child (or branch) that waits,
and under which no pause was resolved for this pass, is not re-entered at all.
"""

from __future__ import annotations

from dataclasses import replace

from pydantic import BaseModel

from agboss.assembly import WorkflowDefinition
from agboss.components import AgentSpec
from agboss.engine.instance import Runtime
from agboss.engine.runs._agent import AgentRun
from agboss.engine.runs._launch import LaunchRun
from agboss.engine.trees import WAITING, ExecutionFrame, Waiting, stored_error
from agboss.enums import ExecutionStatus
from agboss.errors import (
    AgbossError,
    PassStoppingError,
)
from agboss.flow import StepKind
from agboss.store import encode_failure
from agboss.store.protocol import ExecutionRow
from agboss.store.writes import InsertChild, ReopenExecution, SetExecutionStatus

__all__ = ["FlowRunner"]


_CLOSED = (ExecutionStatus.FAILED, ExecutionStatus.CANCELLED)


class FlowRunner:
    """Runs flows for the passes of one `App` instance."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    async def run_flow(self, frame: ExecutionFrame) -> BaseModel | Waiting:
        """Runs an execution's flow from its start; journaled steps replay."""
        assembly = self.runtime.assembly
        graph = assembly.workflows_by_name[frame.row.workflow].graph
        node = graph.start_node
        value: BaseModel = node.input.model_validate_json(frame.row.input_json)
        visits: dict[str, int] = {}
        while True:
            visit = visits.get(node.node_id, 0)
            visits[node.node_id] = visit + 1
            answer: BaseModel | Waiting = value
            if node.kind is StepKind.AGENT:
                assert node.component is not None
                spec = assembly.component_spec(node.component, AgentSpec)
                answer = await AgentRun(frame, node, visit, spec, value).run()
            elif node.kind is StepKind.WORKFLOW:
                assert node.component is not None
                answer = await self.run_child(
                    frame,
                    f"{node.node_id}#{visit}",
                    assembly.workflows_by_name[node.name],
                    value,
                    item_index=None,
                )
            elif node.kind is StepKind.LAUNCH:
                answer = await LaunchRun(self, frame, node, visit, value).run()
            elif node.kind is StepKind.FINISH:
                return value
            if isinstance(answer, Waiting):
                return answer
            value = answer
            if node.next is None:  # pragma: no cover - assembly guarantees a finish
                return value
            node = graph.nodes[node.next]

    async def run_child(
        self,
        frame: ExecutionFrame,
        place: str,
        definition: WorkflowDefinition,
        value: BaseModel,
        *,
        item_index: int | None,
    ) -> BaseModel | Waiting:
        """Runs a child execution started at ``place`` of ``frame`` (created the first time)."""
        runtime = self.runtime
        store = runtime.store
        parent = frame.row
        child_id = f"{parent.execution_id}/{place}"
        path = frame.branch_path(place)
        row = await frame.state.stored(lambda: store.executions.find_by_id(child_id), None)
        state = frame.state
        if row is None:
            row = ExecutionRow.starting(
                execution_id=child_id,
                parent=parent,
                tenant_id=parent.tenant_id,
                thread_id=parent.thread_id,
                owner_id=parent.owner_id,
                workflow=definition.spec.name,
                workflow_version=definition.spec.version,
                input_json=value.model_dump_json(),
                now=runtime.clock.now(),
                generation=state.generation,
                fingerprint=definition.fingerprint,
            )
            frame.writes.add(InsertChild(row))
        elif row.status in _CLOSED and state.reopens(row.generation):
            # It failed, or was dropped, before its tree was retried: it runs again (a
            # cancelled tree's children stay cancelled: the write checks its root).
            frame.writes.add(
                ReopenExecution(
                    child_id, row.root_execution_id, state.generation, runtime.clock.now()
                )
            )
            row = replace(
                row, status=ExecutionStatus.RUNNING, error_json=None, generation=state.generation
            )
        if row.status is ExecutionStatus.COMPLETED:
            assert row.output_json is not None
            return definition.graph.finish_output.model_validate_json(row.output_json)
        if row.status is ExecutionStatus.FAILED:
            raise stored_error(row, runtime.assembly.error_classes)
        if row.status is ExecutionStatus.CANCELLED:
            return WAITING
        if row.status is ExecutionStatus.PAUSED and not state.affected(path):
            return WAITING  # nothing was answered under it: it is not re-entered at all
        child = frame.child(row, path=path, item_index=item_index)
        try:
            outcome = await self.run_flow(child)
        except PassStoppingError:
            raise
        except AgbossError as error:
            self._set(child, ExecutionStatus.FAILED, None, error)
            raise
        if isinstance(outcome, Waiting):
            if row.status is not ExecutionStatus.PAUSED:
                self._set(child, ExecutionStatus.PAUSED, None, None)
            return outcome
        self._set(child, ExecutionStatus.COMPLETED, outcome, None)
        return outcome

    def _set(
        self,
        frame: ExecutionFrame,
        status: ExecutionStatus,
        output: BaseModel | None,
        error: BaseException | None,
    ) -> None:
        frame.writes.add(
            SetExecutionStatus(
                frame.row.execution_id,
                status,
                self.runtime.clock.now(),
                output_json=None if output is None else output.model_dump_json(),
                error_json=None if error is None else encode_failure(error),
            )
        )
