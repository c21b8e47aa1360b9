"""The durable engine: executions begin, passes move them, recovery picks up the interrupted.

A pass holds the tree's lease (renewed on the Clock while it runs), replays each execution's
journal and runs its flow from the start: journaled steps return their results, new ones run
once. A pass ends when the flow finishes or fails (or, with pauses, when nothing can move).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Any

from pydantic import BaseModel, ValidationError

from agboss.agents.loop import Waiting, describe_validation_error
from agboss.assembly.assemble import WorkflowDefinition
from agboss.context import DEFAULT_TENANT_ID
from agboss.engine.frame import ExecutionFrame, PassState
from agboss.engine.hooks import ApplicationHooks
from agboss.engine.interpreter import FlowRunner, pickle_error, stored_error
from agboss.engine.runtime import Runtime
from agboss.enums import ExecutionStatus, PauseResolution, PauseStatus
from agboss.errors import (
    AgbossError,
    DtoValidationError,
    LeaseLostError,
    ThreadOwnerError,
    UnknownExecutionError,
    UnknownWorkflowError,
)
from agboss.observability.tracing import span
from agboss.outputs import ExecutionOutput
from agboss.pauses.model import ExecutionPauseEvent, PauseAnswerRecord, PauseRecord
from agboss.pauses.withdrawing import close_pending_pauses
from agboss.records.model import ChildExecutionRecord, ExecutionRecord, LedgerRecord, Spend
from agboss.store.protocol import ExecutionRow, Fence

__all__ = ["Engine"]


def _new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


class Engine:
    """Begins, moves and recovers executions for one `App` instance."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.hooks = ApplicationHooks(runtime)
        self.flows = FlowRunner(runtime)

    # ---- beginning -----------------------------------------------------------------

    def definition(self, workflow: type[Any]) -> WorkflowDefinition:
        """The workflow's definition in this application."""
        definition = self.runtime.assembly.workflows.get(workflow)
        if definition is None:
            name = getattr(workflow, "__qualname__", repr(workflow))
            raise UnknownWorkflowError(f"{name} is not a workflow of this application")
        return definition

    async def execute(
        self,
        workflow: type[Any],
        input: BaseModel | dict[str, Any],
        *,
        tenant_id: str | None,
        owner_id: str,
        thread_id: str | None,
        record: bool,
    ) -> ExecutionOutput:
        """Begins an execution and runs its first pass."""
        definition = self.definition(workflow)
        start = definition.graph.start_node
        value = _validate_input(start.input, input, definition.spec.name)
        if not owner_id:
            raise ThreadOwnerError(
                "owner_id is empty", hint="pass the id of the person the execution acts for"
            )
        tenant = tenant_id or DEFAULT_TENANT_ID
        if thread_id is not None:
            thread = await self.runtime.store.executions.find_thread(tenant, thread_id)
            if thread is not None and thread.owner_id != owner_id:
                raise ThreadOwnerError(f"thread {thread_id} belongs to another owner")
        now = self.runtime.clock.now()
        execution_id = _new_id("ex")
        row = ExecutionRow.starting(
            execution_id=execution_id,
            parent=None,
            tenant_id=tenant,
            thread_id=thread_id or _new_id("th"),
            owner_id=owner_id,
            workflow=definition.spec.name,
            workflow_version=definition.spec.version,
            input_json=value.model_dump_json(),
            now=now,
        )
        fence = await self.runtime.store.executions.begin(
            row, holder=self.runtime.holder, lease_until=now + self.runtime.lease_ttl
        )
        return await self._pass(row, fence, record=record, fresh=True)

    # ---- passes --------------------------------------------------------------------

    async def _pass(
        self, row: ExecutionRow, fence: Fence, *, record: bool, fresh: bool = False
    ) -> ExecutionOutput:
        with span(
            "pass",
            execution_id=row.execution_id,
            workflow=row.workflow,
            tenant_id=row.tenant_id,
            holder=fence.holder,
            epoch=fence.epoch,
        ) as current:
            result = await self._moved(row, fence, record=record, fresh=fresh)
            current.set_attribute("agboss.status", result.status.value)
            current.set_attribute("agboss.pending", len(result.pending))
            return result

    async def _moved(
        self, row: ExecutionRow, fence: Fence, *, record: bool, fresh: bool
    ) -> ExecutionOutput:
        runtime = self.runtime
        state = PassState()
        renewal = asyncio.ensure_future(self._renew(fence))
        output: BaseModel | None = None
        frame = ExecutionFrame(runtime, row, fence, state=state)
        try:
            if row.status is not ExecutionStatus.RUNNING:
                await self._finish(frame, ExecutionStatus.RUNNING, None, None)
            resolved = [] if fresh else await self._resolved(row)  # a new tree has no answers
            tried: set[str] = set()
            while True:
                tried.update(pause.pause_id for pause in resolved)
                state.resolved_paths = [pause.path for pause in resolved]
                frame = ExecutionFrame(runtime, row, fence, state=state)
                try:
                    outcome = await self.flows.run_flow(frame)
                except LeaseLostError:
                    raise  # another instance owns the tree now: leave its state to it
                except AgbossError as error:
                    # Its tree ended before an answer: the pauses still waiting are cancelled.
                    await close_pending_pauses(runtime, row, PauseResolution.CANCELLED)
                    await self._finish(frame, ExecutionStatus.FAILED, None, error)
                    raise
                if not isinstance(outcome, Waiting):
                    await close_pending_pauses(runtime, row, PauseResolution.CANCELLED)
                    output, status = outcome, ExecutionStatus.COMPLETED
                else:
                    resolved = await self._resolved(row)
                    if any(pause.pause_id not in tried for pause in resolved):
                        continue  # the drain: take decisions recorded while this pass ran
                    status = ExecutionStatus.PAUSED
                if not await self._finish(frame, status, output, None):
                    status, output = ExecutionStatus.CANCELLED, None
                break
        finally:
            renewal.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewal
            await runtime.store.leases.release(fence)
        result = await self._output(frame, status, output, record=record)
        if status is ExecutionStatus.PAUSED:
            await self.hooks.on_pause(
                ExecutionPauseEvent(row.tenant_id, row.thread_id, row.execution_id, result.pending)
            )
        return result

    async def _resolved(self, root: ExecutionRow) -> list[PauseRecord]:
        """The tree's resolved pauses no step has taken yet (one taken before a crash, its
        step already journaled, is marked taken here)."""
        store = self.runtime.store
        found = []
        for pause in await store.pauses.find_by_root(root.execution_id, (PauseStatus.RESOLVED,)):
            if pause.step_key in await store.journal.load(pause.execution_id, pause.step_key):
                await store.pauses.take(pause.tenant_id, pause.pause_id)
            else:
                found.append(pause)
        return found

    async def _finish(
        self,
        frame: ExecutionFrame,
        status: ExecutionStatus,
        output: BaseModel | None,
        error: BaseException | None,
    ) -> bool:
        if isinstance(error, LeaseLostError):
            return False  # the new holder owns the execution's state now
        return await self.runtime.store.executions.finish(
            frame.fence,
            frame.row.execution_id,
            status=status,
            output_json=None if output is None else output.model_dump_json(),
            error=None if error is None else pickle_error(error),
            now=self.runtime.clock.now(),
        )

    async def move(self, root_execution_id: str, *, record: bool) -> ExecutionOutput:
        """Moves a tree after an answer: takes its lease (waiting for a holder to end its pass,
        or for its lease to expire) and runs a pass, which takes every resolved pause."""
        runtime = self.runtime
        delay = 0.002
        while True:
            fence = await runtime.store.leases.acquire(
                root_execution_id, runtime.holder, now=runtime.clock.now(), ttl=runtime.lease_ttl
            )
            if fence is not None:
                break
            await asyncio.sleep(delay)  # a holder is in its pass: wait for it to end
            delay = min(delay * 2, 0.05)
        row = await runtime.store.executions.find_by_id(root_execution_id)
        assert row is not None
        if row.status not in (ExecutionStatus.RUNNING, ExecutionStatus.PAUSED):
            await runtime.store.leases.release(fence)
            return await self.get(root_execution_id, tenant_id=row.tenant_id, record=record)
        return await self._pass(row, fence, record=record)

    async def _renew(self, fence: Fence) -> None:
        runtime = self.runtime
        interval = runtime.lease_ttl / 3
        while True:
            await runtime.clock.sleep(interval)
            if not await runtime.store.leases.renew(
                fence, now=runtime.clock.now(), ttl=runtime.lease_ttl
            ):
                return

    async def _output(
        self,
        frame: ExecutionFrame,
        status: ExecutionStatus,
        output: BaseModel | None,
        *,
        record: bool,
    ) -> ExecutionOutput:
        store = self.runtime.store
        row = frame.row
        spend = Spend.of(await store.executions.spend_of(row.execution_id, tree=True))
        pending = []
        if status is ExecutionStatus.PAUSED:
            pending = await store.pauses.list_pending(row.root_execution_id)
        child_rows = (
            await store.executions.find_children(row.execution_id)
            if self.runtime.assembly.workflows_by_name[row.workflow].graph.has_children
            else []
        )
        execution_record = None
        child_records: list[ChildExecutionRecord | None] = [None] * len(child_rows)
        if record:
            pauses = await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
                row.tenant_id, row.root_execution_id
            )
            child_records = [await self._child_record(child, pauses) for child in child_rows]
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
                steps=await frame.records(),
                pauses=pauses,
                spend=spend,
                ledger=ledger,
                children=[child for child in child_records if child is not None],
            )
        children = [
            await self._child_output(child, child_record)
            for child, child_record in zip(child_rows, child_records, strict=True)
        ]
        return ExecutionOutput(
            thread_id=row.thread_id,
            execution_id=row.execution_id,
            status=status,
            output=output,
            pending=pending,
            children=children,
            record=execution_record,
            spend=spend,
        )

    def _decoded_output(self, row: ExecutionRow) -> BaseModel | None:
        if row.output_json is None:
            return None
        definition = self.runtime.assembly.workflows_by_name[row.workflow]
        return definition.graph.finish_output.model_validate_json(row.output_json)

    async def _child_output(
        self, row: ExecutionRow, record: ChildExecutionRecord | None
    ) -> ExecutionOutput:
        store = self.runtime.store
        grandchildren = await store.executions.find_children(row.execution_id)
        records: list[ChildExecutionRecord | None] = [None] * len(grandchildren)
        if record is not None:
            records = list(record.children)
        children = [
            await self._child_output(child, child_record)
            for child, child_record in zip(grandchildren, records, strict=True)
        ]
        return ExecutionOutput(
            thread_id=row.thread_id,
            execution_id=row.execution_id,
            status=row.status,
            output=self._decoded_output(row),
            children=children,
            record=record,
            spend=Spend.of(await store.executions.spend_of(row.execution_id, tree=True)),
        )

    async def _child_record(
        self, row: ExecutionRow, tree_pauses: list[PauseAnswerRecord]
    ) -> ChildExecutionRecord:
        store = self.runtime.store
        frame = ExecutionFrame(self.runtime, row, Fence(row.root_execution_id, "", 0))
        steps = await frame.records()
        item_index = next((s.item_index for s in steps if s.item_index is not None), None)
        return ChildExecutionRecord(
            execution_id=row.execution_id,
            workflow=row.workflow,
            workflow_version=row.workflow_version,
            status=row.status,
            item_index=item_index,
            steps=steps,
            pauses=[entry for entry in tree_pauses if entry.execution_id == row.execution_id],
            spend=Spend.of(await store.executions.spend_of(row.execution_id, tree=False)),
            children=[
                await self._child_record(child, tree_pauses)
                for child in await store.executions.find_children(row.execution_id)
            ],
        )

    # ---- reading and recovery ------------------------------------------------------

    async def get(
        self, execution_id: str, *, tenant_id: str | None, record: bool
    ) -> ExecutionOutput:
        """The current output of an execution, without moving it."""
        store = self.runtime.store
        row = await store.executions.find(tenant_id or DEFAULT_TENANT_ID, execution_id)
        if row is None:
            raise UnknownExecutionError(
                f"no execution {execution_id} is known for this tenant",
                hint="pass the execution_id an ExecutionOutput gave, under the same tenant",
            )
        if row.status is ExecutionStatus.FAILED:
            raise stored_error(row)
        frame = ExecutionFrame(self.runtime, row, Fence(row.root_execution_id, "", 0))
        return await self._output(frame, row.status, self._decoded_output(row), record=record)

    async def recover(self, *, limit: int = 100) -> list[ExecutionOutput]:
        """Continues root executions whose holder died (their lease expired)."""
        runtime = self.runtime
        outputs: list[ExecutionOutput] = []
        for execution_id in await runtime.store.executions.find_interrupted(
            runtime.clock.now(), limit
        ):
            fence = await runtime.store.leases.acquire(
                execution_id, runtime.holder, now=runtime.clock.now(), ttl=runtime.lease_ttl
            )
            if fence is None:
                continue  # another instance took it first
            row = await runtime.store.executions.find_by_id(execution_id)
            if row is None or row.status not in (ExecutionStatus.RUNNING, ExecutionStatus.PAUSED):
                await runtime.store.leases.release(fence)
                continue
            try:
                outputs.append(await self._pass(row, fence, record=False))
            except AgbossError:
                runtime.logger.warning(
                    "run.recovered-failed: execution %s failed when recovered",
                    execution_id,
                    exc_info=True,
                )
        return outputs


def _validate_input(
    dto: type[BaseModel], value: BaseModel | dict[str, Any], where: str
) -> BaseModel:
    if isinstance(value, dto):
        return value
    try:
        raw = value.model_dump() if isinstance(value, BaseModel) else value
        return dto.model_validate(raw)
    except ValidationError as error:
        raise DtoValidationError(
            f"the input of {where} is not a valid {dto.__name__}: "
            f"{describe_validation_error(error)}",
            hint=f"pass a {dto.__name__} (or a mapping of its fields)",
        ) from error
