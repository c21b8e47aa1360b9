"""A call cut off mid-run in this process: the office's expense booking, approved, whose caller
goes away while the tool runs (its task cancelled, as a client that hung up), then recovered by
the sweep — so that the faces (the page, the command line) can show the question whether to
run it again (``OnInterrupted.ASK``, the default of a tool with a channel; issue 38)."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta

from agboss import PauseKind, PendingPause
from agboss.testing import TestEnv
from tests.apps.desk import BookExpenseTool, DeskDoneDto, DeskRecorder, ExpenseDto


async def cut_off_in_tool(
    env: TestEnv,
    pause_id: str,
    recorded: DeskRecorder,
    *,
    owner_id: str,
    tenant_id: str | None = None,
) -> PendingPause:
    """Approves ``pause_id`` (the expense booking's), cuts its pass off inside the tool, and
    lets the sweep recover the tree: the question it rests on. The booking's runs, the one cut
    off and any later, are recorded in ``recorded.runs``."""
    started, never = asyncio.Event(), asyncio.Event()

    async def booking(args: ExpenseDto) -> DeskDoneDto:
        recorded.runs.append(f"book-expense {args.purpose} {args.amount}")
        if len(recorded.runs) == 1:  # the first run never returns: its caller goes away
            started.set()
            await never.wait()
        return DeskDoneDto(status=f"booked {args.purpose}")

    env.mock_of(BookExpenseTool).run.side_effect = booking
    resuming = asyncio.ensure_future(
        env.app.resume(
            pause_id, decision={"approved": True}, owner_id=owner_id, tenant_id=tenant_id
        )
    )
    await started.wait()
    resuming.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await resuming
    await env.clock.advance(timedelta(minutes=2))  # its lease expires; the sweep recovers it
    page = await env.app.pending(tenant_id=tenant_id, owner_id=owner_id)
    [question] = [e.pause for e in page.entries if e.pause.ask.kind is PauseKind.INTERRUPTED]
    return question
