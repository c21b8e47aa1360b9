"""Rows are locked in one order everywhere: the tree's lease row, then its pauses and executions.

A late answer that waited on its pause (another answer was committing it) keeps that row locked
once its recheck fails; if it then asked for the lease row held by the pass that moves the
tree, and that pass then updated the pause, each would wait for the other. So every unfenced
transaction that may wait on both takes the lease row first (`LockTree`), as a pass's fence
does. Forced here with raw connections, on PostgreSQL (SQLite's transactions are serial).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from agboss import App, FunctionProvider, NotPausedError, ToolCallApprovalDecisionDto
from tests.apps.liveness_app import PaymentApplication, PaymentDto, PaymentWorkflow, model
from tests.stores import POSTGRES_URL, needs_postgres

if TYPE_CHECKING:
    from psycopg import AsyncConnection

pytestmark = needs_postgres


_LATE = 3
"""Late answers at once, each waiting on the pause the winner is committing."""


async def _connection(schema: str) -> AsyncConnection:
    from psycopg import AsyncConnection, sql

    assert POSTGRES_URL is not None
    connection = await AsyncConnection.connect(POSTGRES_URL)
    await connection.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
    await connection.commit()
    return connection


async def _waiting_on_locks(connection: AsyncConnection, at_least: int) -> None:
    """Until at least ``at_least`` other sessions of this database wait on a row lock."""
    for _ in range(500):
        cursor = await connection.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'"
        )
        row = await cursor.fetchone()
        await connection.commit()
        if row is not None and row[0] >= at_least:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"fewer than {at_least} sessions ever waited on a lock")


async def test_a_late_answer_and_the_pass_that_takes_the_pause_do_not_deadlock(
    schema: str,
) -> None:
    assert POSTGRES_URL is not None
    app = await App.create(
        PaymentApplication,
        store=f"{POSTGRES_URL}?schema={schema}",
        providers=[FunctionProvider(model)],
    )
    winner, pass_, watcher = [await _connection(schema) for _ in range(3)]
    try:
        paused = await app.execute(PaymentWorkflow, PaymentDto(amount=5), owner_id="u")
        [pending] = paused.pending
        assert pending.pause_id is not None
        root = paused.execution_id
        # Another answer is committing the pause.
        await winner.execute(
            "UPDATE pauses SET status = 'resolved' WHERE pause_id = %s", (pending.pause_id,)
        )
        late = [
            asyncio.ensure_future(
                app.resume(
                    pending.pause_id,
                    decision=ToolCallApprovalDecisionDto(approved=True),
                    owner_id="u",
                )
            )
            for _ in range(_LATE)
        ]
        await _waiting_on_locks(watcher, _LATE)  # the late answers wait on the pause

        async def moving_pass() -> None:
            # A pass's fenced transaction: the lease row first, then the pause.
            await pass_.execute(
                "SELECT 1 FROM leases WHERE root_execution_id = %s FOR SHARE", (root,)
            )
            await committed.wait()
            await pass_.execute(
                "UPDATE pauses SET status = 'taken' WHERE pause_id = %s AND status = 'resolved'",
                (pending.pause_id,),
            )
            await pass_.commit()

        committed = asyncio.Event()
        moving = asyncio.ensure_future(moving_pass())
        await asyncio.sleep(0.2)  # the pass takes the lease row, or waits for it
        await winner.commit()
        committed.set()
        for answer in late:  # each refused as late, none a "deadlock detected"
            with pytest.raises(NotPausedError):
                await asyncio.wait_for(answer, 20)
        await asyncio.wait_for(moving, 20)  # no "deadlock detected" on either side
        cursor = await watcher.execute(
            "SELECT status FROM pauses WHERE pause_id = %s", (pending.pause_id,)
        )
        assert await cursor.fetchone() == ("taken",)
    finally:
        for connection in (winner, pass_, watcher):
            await connection.close()
        await app.close()
