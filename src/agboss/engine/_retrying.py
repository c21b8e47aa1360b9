"""What a retry reopens: a failed tree's root, read and checked before anything is written
(`Engine.retry`)."""

from __future__ import annotations

from agboss.engine.instance import Runtime
from agboss.engine.questions import CallSaid, not_served
from agboss.engine.trees import stored_error
from agboss.enums import ExecutionStatus
from agboss.errors import (
    AgentFailedError,
    DtoValidationError,
    FinalFailureError,
    NotFailedError,
    ToolInterruptedError,
    UnknownExecutionError,
)
from agboss.store.protocol import ExecutionRow

__all__ = ["retried_root"]


async def retried_root(
    runtime: Runtime, tenant_id: str, execution_id: str, said: CallSaid | None
) -> tuple[ExecutionRow, ToolInterruptedError | None]:
    """The root `Engine.retry` reopens (a child's id names its root), as read now: failed —
    or running in the pass of the retry that reopened it (another instance's, at once) — and
    the call cut off that failed it, when a person said how it went (``said``).

    Raises:
        UnknownExecutionError: No such execution for this tenant.
        NotFailedError: The tree did not fail.
        FinalFailureError: Its journal decided the failure (a call cut off under
            ``OnInterrupted.FAIL`` included, unless ``said`` says how it went).
        DtoValidationError: ``said`` for a failure that is no call cut off.
        VersionNotServedError: This build does not serve the tree's version.
    """
    store = runtime.store
    row = await store.executions.find(tenant_id, execution_id)
    if row is not None and row.parent_execution_id is not None:
        row = await store.executions.find(tenant_id, row.root_execution_id)
    if row is None:
        raise UnknownExecutionError(
            f"no execution {execution_id} is known for this tenant",
            hint="pass an execution_id that app.failed() lists, under the same tenant",
        )
    if not runtime.assembly.serves(row.workflow, row.workflow_version):
        raise not_served(row)  # before anything is written: a build that serves it retries it
    if row.status is ExecutionStatus.RUNNING and row.generation:
        retries = await store.executions.retries(row.execution_id)
        # Untouched since a retry reopened it: that retry's pass has not ended yet.
        if retries and retries[-1].retried_at == row.updated_at:
            return row, None
    if row.status is not ExecutionStatus.FAILED:
        raise NotFailedError(row.status.value, execution_id=row.execution_id)
    error: BaseException | None = stored_error(row, runtime.assembly.error_classes)
    while error is not None:
        if isinstance(error, ToolInterruptedError) and said is not None:
            return row, error  # a person checked: their word decides what was final
        if isinstance(error, AgentFailedError) and error.final:
            raise FinalFailureError(
                error.code,
                execution_id=row.execution_id,
                cut_off=isinstance(error, ToolInterruptedError),
            )
        error = error.__cause__
    if said is not None:
        raise DtoValidationError(
            f"call_ran= says how a call cut off went, and execution tree {row.execution_id} "
            "failed on something else",
            hint="retry it without call_ran= and call_result=",
        )
    return row, None
