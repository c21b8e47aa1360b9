"""Pause cycles on a store URL, run under ``strace`` by a test that counts what waits for the
disk: each cycle executes until an expense waits for its owner, then answers it."""

from __future__ import annotations

import asyncio
import sys

from agboss import WorkflowFinishTextDto, WorkflowStartTextDto
from agboss.testing import call_tools, reply_with, test_with, tool_call
from tests.apps.desk import BookExpenseTool, OfficeAgent, OfficeApplication, OfficeWorkflow


async def cycles(url: str, count: int) -> None:
    async with test_with(OfficeApplication, store=url) as env:
        for _ in range(count):
            env.mock_llm(OfficeAgent).then_return(
                call_tools(tool_call(BookExpenseTool, purpose="taxi", amount=12.5)),
                reply_with(WorkflowFinishTextDto, text="Booked."),
            )
            paused = await env.app.execute(
                OfficeWorkflow, WorkflowStartTextDto(text="Book my taxi"), owner_id="u"
            )
            [pause] = paused.pending
            await env.app.resume(str(pause.pause_id), decision={"approved": True}, owner_id="u")


if __name__ == "__main__":
    asyncio.run(cycles(sys.argv[1], int(sys.argv[2])))
