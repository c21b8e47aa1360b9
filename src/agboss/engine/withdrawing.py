"""Telling channels that their questions were closed without an answer (`withdraw`).

A pause closed after its ``send`` returned is marked in the same commit as owing its channel a
withdraw (``withdrawal = 'due'``), and marked told once ``withdraw`` returned, failed or timed out
(best-effort: one ``channel.withdraw-failed`` warning). Whoever closed it tells the channel while
holding the tree's lease; one cut off before is found by the recovery sweep, which tells it then
— so every channel is told, and told once per pass that closed its pause.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from agboss.assembly.assemble import ToolChannel
from agboss.components.channels import ApprovalAsk, ChannelWithdrawal
from agboss.components.specs import ToolSpec
from agboss.context import ExecutionContext, StepContext, Tenant
from agboss.engine.frame import maybe_await
from agboss.engine.lease import take_lease
from agboss.engine.runtime import Runtime
from agboss.engine.timeouts import run_within
from agboss.enums import PauseResolution
from agboss.observability.tracing import span
from agboss.records.pauses import PauseRecord, secret_of
from agboss.store.failures import redacted
from agboss.store.protocol import ExecutionRow
from agboss.store.writes import (
    MarkWithdrawn,
)

__all__ = ["settle_withdrawals", "tool_of", "withdraw", "withdraw_closed"]


def tool_of(runtime: Runtime, pause: PauseRecord) -> tuple[ToolSpec, ToolChannel]:
    """The spec and the channel of the tool whose call a pause waits on."""
    assembly = runtime.assembly
    tool_cls, tool_spec = assembly.agent_tools[pause.agent][pause.ask.tool]
    return tool_spec, assembly.tool_channels[tool_cls]


def shown_error(runtime: Runtime, workflow: str, pause: PauseRecord, error: BaseException) -> str:
    """A channel's error as a log line shows it: a channel pause's id and personal data
    masked."""
    return runtime.assembly.pii_policy(workflow).outside(repr(redacted(error, secret_of(pause))))


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
            arguments=runtime.assembly.pii_outside.dto(
                tool_spec.input.model_validate(pause.ask.arguments),
                runtime.assembly.pii_policy(row.workflow),
            ),
        )
        withdrawal = ChannelWithdrawal(pause_id=pause.pause_id, value=value, resolution=resolution)
        with span(
            "channel-withdraw",
            redact=secret_of(pause),
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
            "channel.withdraw-failed: %s could not withdraw a question of execution %s: %s",
            tool_channel.name,
            row.execution_id,
            shown_error(runtime, row.workflow, pause, error),
            extra={
                "event": "channel.withdraw-failed",
                "execution_id": row.execution_id,
                "tenant_id": row.tenant_id,
                "channel": tool_channel.name,
            },
        )


async def withdraw_closed(
    runtime: Runtime,
    row: ExecutionRow,
    pauses: list[PauseRecord],
    told: Callable[[MarkWithdrawn], Awaitable[object]],
    resolution: PauseResolution | None = None,
) -> None:
    """Calls ``withdraw`` for each closed pause (in its own execution's frame), and ``told``
    with the write that marks it told — committed before the next channel is called, so that a
    crash can make a channel hear of one pause twice, never of every pause twice."""
    rows = {row.execution_id: row}
    for pause in pauses:
        found = rows.get(pause.execution_id)
        if found is None:
            found = await runtime.store.executions.find_by_id(pause.execution_id) or row
            rows[pause.execution_id] = found
        how = resolution or pause.resolution or PauseResolution.CANCELLED
        await withdraw(runtime, found, pause, how)
        await told(MarkWithdrawn(pause.tenant_id, pause.pause_id))


async def settle_withdrawals(runtime: Runtime, root_execution_id: str) -> None:
    """Tells the channels a tree still owes a withdraw, holding the tree's lease (if another
    instance holds it, that instance — or a later sweep — does it)."""
    store = runtime.store
    taken = await take_lease(runtime, root_execution_id)
    if taken is None:
        return
    lease = taken.lease

    async def told(write: MarkWithdrawn) -> None:
        await store.write([write], fence=lease.fence)

    try:
        due = await store.pauses.find_due_withdrawals(root_execution_id)
        root = await store.executions.find_by_id(root_execution_id)
        if due and root is not None:
            await lease.ensure()
            await withdraw_closed(runtime, root, due, told)
    finally:
        await taken.release()
