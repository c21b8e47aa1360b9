"""Closing pauses without an answer — a cancelled thread, a tree that ended — and telling
their channels (`withdraw`), best-effort."""

from __future__ import annotations

from agboss.assembly.assemble import ToolChannel
from agboss.components.channels import ApprovalAsk, ChannelWithdrawal
from agboss.components.specs import ToolSpec
from agboss.context import DEFAULT_TENANT_ID, ExecutionContext, StepContext, Tenant
from agboss.engine.frame import maybe_await
from agboss.engine.runtime import Runtime
from agboss.engine.timeouts import run_within
from agboss.enums import ExecutionStatus, PauseResolution, PauseStatus
from agboss.errors import ThreadOwnerError
from agboss.observability.tracing import span
from agboss.outputs import ExecutionOutput
from agboss.pauses.model import PauseAnswerRecord, PauseRecord
from agboss.store.protocol import ExecutionRow

__all__ = ["cancel_thread", "close_pending_pauses", "tool_of", "withdraw"]


def tool_of(runtime: Runtime, pause: PauseRecord) -> tuple[ToolSpec, ToolChannel]:
    """The spec and the channel of the tool whose call a pause waits on."""
    assembly = runtime.assembly
    tool_cls, tool_spec = assembly.agent_tools[pause.agent][pause.ask.tool]
    return tool_spec, assembly.tool_channels[tool_cls]


def pause_context(row: ExecutionRow, pause: PauseRecord, kind: str) -> ExecutionContext:
    """The pause's execution frame, at its waiting step."""
    return ExecutionContext(
        tenant=Tenant(row.tenant_id),
        owner_id=row.owner_id,
        thread_id=row.thread_id,
        execution_id=row.execution_id,
        root_execution_id=row.root_execution_id,
        workflow=row.workflow,
        step=StepContext(
            node_id=pause.step.node_id,
            kind=kind,
            idempotency_key=pause.step.key,
            call_id=pause.ask.call_id,
            visit=pause.step.visit,
            tool_loop_iteration=pause.step.tool_loop_iteration,
            validation_attempts=pause.step.validation_attempts,
            copy_index=pause.step.copy_index,
            item_index=pause.step.item_index,
        ),
    )


async def withdraw(
    runtime: Runtime, row: ExecutionRow, pause: PauseRecord, resolution: PauseResolution
) -> None:
    """Calls the channel's ``withdraw`` once, in the pause's frame, under its tool's timeout.

    Best-effort: a throw or a timeout is one ``channel.withdraw-failed`` warning, nothing else.
    """
    tool_spec, tool_channel = tool_of(runtime, pause)
    context = pause_context(row, pause, "channel-withdraw")
    try:
        channel = runtime.assembly.container.create(
            tool_channel.implementation,
            runtime.assembly.components[tool_channel.implementation].deps,
            context,
        )
        value = ApprovalAsk(
            tool=pause.ask.tool,
            call_id=pause.ask.call_id,
            arguments=tool_spec.input.model_validate(pause.ask.arguments),
        )
        withdrawal = ChannelWithdrawal(pause_id=pause.pause_id, value=value, resolution=resolution)
        with span(
            "channel-withdraw",
            channel=tool_channel.name,
            resolution=resolution.value,
            execution_id=row.execution_id,
            root_execution_id=row.root_execution_id,
        ):
            await run_within(
                runtime.clock,
                maybe_await(channel.withdraw(withdrawal)),
                tool_spec.timeout,
                context.signal,
                f"{tool_channel.name}.withdraw",
            )
    except Exception as error:
        runtime.logger.warning(
            "channel.withdraw-failed: %s could not withdraw a question of execution %s: %r",
            tool_channel.name,
            row.execution_id,
            error,
            extra={
                "event": "channel.withdraw-failed",
                "execution_id": row.execution_id,
                "tenant_id": row.tenant_id,
                "channel": tool_channel.name,
            },
        )


async def close_pending_pauses(
    runtime: Runtime, root: ExecutionRow, resolution: PauseResolution
) -> list[PauseRecord]:
    """Closes every Pending pause of a tree (Pending → Cancelled, one atomic change each).

    Each pause this call closed gets its audit entry, and — if its ``send`` had returned —
    one ``withdraw``. A pause another caller closed first is left to that caller.

    Returns:
        The pauses this call closed.
    """
    store = runtime.store
    closed: list[PauseRecord] = []
    for pending in await store.pauses.find_by_root(root.root_execution_id, (PauseStatus.PENDING,)):
        now = runtime.clock.now()
        pause = await store.pauses.cancel_by_tenant_id_and_pause_id(
            pending.tenant_id, pending.pause_id, resolution=resolution, now=now
        )
        if pause is None:
            continue
        closed.append(pause)
        await store.records.save_pause_answer(
            pause.tenant_id,
            pause.root_execution_id,
            PauseAnswerRecord.of(pause, resolution, now, None),
        )
        if pause.is_sent:
            row = root
            if pause.execution_id != root.execution_id:
                found = await store.executions.find_by_id(pause.execution_id)
                row = found or root
            await withdraw(runtime, row, pause, resolution)
    return closed


async def cancel_thread(
    runtime: Runtime, thread_id: str, *, tenant_id: str | None, owner_id: str | None
) -> ExecutionOutput | None:
    """Cancels a thread's running and paused executions; see `App.cancel`."""
    store = runtime.store
    tenant = tenant_id or DEFAULT_TENANT_ID
    thread = await store.executions.find_thread(tenant, thread_id)
    if thread is None:
        return None
    if owner_id is not None and thread.owner_id != owner_id:
        raise ThreadOwnerError(f"thread {thread_id} belongs to another owner")
    cancelled = await store.executions.cancel(tenant, thread_id, now=runtime.clock.now())
    for execution_id in cancelled:
        root = await store.executions.find_by_id(execution_id)
        if root is not None:
            await close_pending_pauses(runtime, root, PauseResolution.CANCELLED)
    if not cancelled:
        return None
    return ExecutionOutput(
        thread_id=thread_id, execution_id=cancelled[-1], status=ExecutionStatus.CANCELLED
    )
