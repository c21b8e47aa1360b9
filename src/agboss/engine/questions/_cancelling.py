"""Cancelling a thread: its running and paused executions, and their pending pauses."""

from __future__ import annotations

import logging

from agboss.context import DEFAULT_TENANT_ID
from agboss.engine.instance import Runtime
from agboss.engine.questions._withdrawing import tell_owed_withdrawals
from agboss.enums import Decider, ExecutionStatus, Outcome, PauseResolution
from agboss.errors import ThreadOwnerError, UnknownThreadError
from agboss.observability import closed, log_event
from agboss.records import ExecutionOutput
from agboss.store.writes import CancelExecutions, CancelPendingUnder, LockTree

__all__ = ["cancel_thread"]


async def cancel_thread(
    runtime: Runtime, thread_id: str, *, tenant_id: str | None, owner_id: str | None
) -> ExecutionOutput | None:
    """Cancels a thread's running and paused executions; see `App.cancel`.

    The executions and their pending pauses are cancelled in one commit (a pass running on the
    tree meanwhile finds it cancelled at its end and leaves it so); then the channels of the
    pauses that were sent are told.
    """
    store = runtime.store
    tenant = tenant_id or DEFAULT_TENANT_ID
    thread = await store.executions.find_thread(tenant, thread_id)
    if thread is None:
        raise UnknownThreadError(f"no thread {thread_id!r} is known for this tenant")
    if owner_id is not None and thread.owner_id != owner_id:
        raise ThreadOwnerError(f"thread {thread_id} belongs to another owner")
    roots = await store.executions.find_roots(tenant, thread_id)
    if not roots:
        return None
    now = runtime.clock.now()
    cancels = [CancelExecutions(root.execution_id, now) for root in roots]
    # The log says who: the owner who cancelled, or an operator's code (no owner named).
    by = Decider.CODE if owner_id is None else Decider.PERSON
    closes = [
        CancelPendingUnder(root.execution_id, "", PauseResolution.CANCELLED, now, by, owner_id)
        for root in roots
    ]
    pairs = zip(cancels, closes, strict=True)
    # Each tree's lease row first, as a pass's transactions take it (see `LockTree`), in one
    # order: two cancellations of a thread wait for each other, not on each other.
    locks = [LockTree(root_id) for root_id in sorted(root.execution_id for root in roots)]
    results = await store.write([*locks, *(write for pair in pairs for write in pair)])
    cancelled = [root for root, cancel in zip(roots, cancels, strict=True) if results[cancel]]
    for root, close in zip(roots, closes, strict=True):
        shut = results[close]
        closed(shut, Outcome.CANCELLED, by, now)
        if any(pause.is_sent for pause in shut):
            await tell_owed_withdrawals(runtime, root.execution_id)
    if not cancelled:
        return None
    log_event(
        runtime.logger,
        logging.INFO,
        "run.cancelled",
        "thread %(thread_id)s cancelled: %(count)d execution(s)",
        thread_id=thread_id,
        tenant_id=tenant,
        execution_id=cancelled[-1].execution_id,
        count=len(cancelled),
    )
    return ExecutionOutput(
        thread_id=thread_id,
        execution_id=cancelled[-1].execution_id,
        status=ExecutionStatus.CANCELLED,
    )
