"""The durable engine: executions begin, passes move them, recovery picks up the interrupted.

A pass holds the tree's lease (renewed on the Clock while it runs), replays each execution's
journal and runs its flow from the start: journaled steps return their results, new ones run
once. A pass ends when the flow finishes or fails (or, with pauses, when nothing can move).
"""

from __future__ import annotations

import asyncio
import contextlib
import pickle
import uuid
from typing import Any

from pydantic import BaseModel, ValidationError

from agboss.agents.loop import AgentRun, Waiting, describe_validation_error
from agboss.assembly.assemble import WorkflowDefinition
from agboss.components.specs import AgentSpec
from agboss.context import DEFAULT_TENANT_ID
from agboss.engine.frame import ExecutionFrame
from agboss.engine.hooks import ApplicationHooks
from agboss.engine.runtime import Runtime
from agboss.enums import ExecutionStatus, PauseResolution, PauseStatus
from agboss.errors import (
    AgbossError,
    DtoValidationError,
    ExecutionFailedError,
    LeaseLostError,
    ThreadOwnerError,
    UnknownExecutionError,
    UnknownWorkflowError,
)
from agboss.flow.dsl import StepKind
from agboss.outputs import ExecutionOutput
from agboss.pauses.model import ExecutionPauseEvent
from agboss.pauses.withdrawing import close_pending_pauses
from agboss.records.model import ExecutionRecord, LedgerRecord, Spend
from agboss.store.protocol import ExecutionRow, Fence

__all__ = ["Engine"]


def _new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


class Engine:
    """Begins, moves and recovers executions for one `App` instance."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.hooks = ApplicationHooks(runtime)

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
        row = ExecutionRow(
            execution_id=execution_id,
            root_execution_id=execution_id,
            parent_execution_id=None,
            tenant_id=tenant,
            thread_id=thread_id or _new_id("th"),
            owner_id=owner_id,
            workflow=definition.spec.name,
            workflow_version=definition.spec.version,
            status=ExecutionStatus.RUNNING,
            input_json=value.model_dump_json(),
            output_json=None,
            error=None,
            created_at=now,
            updated_at=now,
        )
        fence = await self.runtime.store.executions.begin(
            row, holder=self.runtime.holder, lease_until=now + self.runtime.lease_ttl
        )
        return await self._pass(row, fence, {}, record=record)

    # ---- passes --------------------------------------------------------------------

    async def _pass(
        self,
        row: ExecutionRow,
        fence: Fence,
        journal: dict[str, Any],
        *,
        record: bool,
    ) -> ExecutionOutput:
        runtime = self.runtime
        frame = ExecutionFrame(runtime, row, journal, fence)
        renewal = asyncio.ensure_future(self._renew(fence))
        output: BaseModel | None = None
        try:
            if row.status is not ExecutionStatus.RUNNING:
                await self._finish(frame, ExecutionStatus.RUNNING, None, None)
            while True:
                try:
                    outcome = await self._run_flow(frame)
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
                elif await self._resolved_meanwhile(frame):
                    continue  # the drain: take decisions recorded while this pass ran
                else:
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

    async def _resolved_meanwhile(self, frame: ExecutionFrame) -> bool:
        """Whether a pause of the tree was resolved and its step has not taken it yet."""
        pauses = self.runtime.store.pauses
        found = False
        for pause in await pauses.find_by_root(
            frame.row.root_execution_id, (PauseStatus.RESOLVED,)
        ):
            if frame.journaled(pause.step_key) is not None:
                await pauses.take(pause.tenant_id, pause.pause_id)  # taken before a crash
            else:
                found = True
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
            error=None if error is None else _pickle_error(error),
            now=self.runtime.clock.now(),
        )

    async def _run_flow(self, frame: ExecutionFrame) -> BaseModel | Waiting:
        definition = self.runtime.assembly.workflows_by_name[frame.row.workflow]
        graph = definition.graph
        node = graph.start_node
        value: BaseModel = node.input.model_validate_json(frame.row.input_json)
        visits: dict[str, int] = {}
        while True:
            visit = visits.get(node.node_id, 0)
            visits[node.node_id] = visit + 1
            if node.kind is StepKind.AGENT:
                spec = self.runtime.assembly.component_spec(node.component, AgentSpec)
                answer = await AgentRun(frame, node, visit, spec, value).run()
                if isinstance(answer, Waiting):
                    return answer
                value = answer
            elif node.kind is StepKind.FINISH:
                return value
            if node.next is None:  # pragma: no cover - assembly guarantees a finish
                return value
            node = graph.nodes[node.next]

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
        journal = await runtime.store.journal.load(root_execution_id)
        return await self._pass(row, fence, journal, record=record)

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
        spend = Spend.of(frame.usage())
        pending = []
        if status is ExecutionStatus.PAUSED:
            waiting = await store.pauses.find_by_root(row.root_execution_id, (PauseStatus.PENDING,))
            pending = [pause.pending() for pause in waiting]
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
                steps=frame.records(),
                pauses=pauses,
                spend=spend,
                ledger=ledger,
            )
        return ExecutionOutput(
            thread_id=row.thread_id,
            execution_id=row.execution_id,
            status=status,
            output=output,
            pending=pending,
            record=execution_record,
            spend=spend,
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
            raise _stored_error(row)
        journal = await store.journal.load(row.execution_id)
        frame = ExecutionFrame(self.runtime, row, journal, Fence(row.root_execution_id, "", 0))
        output = None
        if row.output_json is not None:
            definition = self.runtime.assembly.workflows_by_name[row.workflow]
            output = definition.graph.finish_output.model_validate_json(row.output_json)
        return await self._output(frame, row.status, output, record=record)

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
            journal = await runtime.store.journal.load(execution_id)
            try:
                outputs.append(await self._pass(row, fence, journal, record=False))
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


def _pickle_error(error: BaseException) -> bytes | None:
    try:
        return pickle.dumps(error)
    except Exception:
        return None


def _stored_error(row: ExecutionRow) -> AgbossError:
    if row.error is not None:
        try:
            error = pickle.loads(row.error)
        except Exception:
            error = None
        if isinstance(error, AgbossError):
            return error
    return ExecutionFailedError(f"execution {row.execution_id} failed")
