"""An application whose tool counts its runs in a file, and a child process that dies mid-run.

``python -m tests.apps.durable_app DB RUNS MARKER`` executes the workflow on the SQLite file DB; its
model calls the tool, then, on its second call, writes MARKER and hangs, so that the parent can
kill the process between two journaled steps.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from pydantic import BaseModel

from agboss import (
    App,
    FunctionProvider,
    ToolHandler,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
    agent,
    application,
    start,
    tool,
    workflow,
    workflow_finish,
    workflow_start,
)
from agboss.agents import ANSWER_TOOL
from agboss.models import ChatRequest, ChatResponse, MessageRole, ToolCall


class LeaseDto(BaseModel):
    lease_id: str


class DoneDto(BaseModel):
    status: str


@tool(name="return-deposit-tool", description="Returns a deposit", input=LeaseDto, output=DoneDto)
class CountedDepositTool(ToolHandler[LeaseDto, DoneDto]):
    async def run(self, args: LeaseDto) -> DoneDto:
        with Path(os.environ["AGBOSS_TEST_RUNS"]).open("a") as runs:
            runs.write(f"{args.lease_id} pid={os.getpid()}\n")
        return DoneDto(status=f"returned {args.lease_id}")


@agent(
    name="durable-agent",
    description="Returns a deposit",
    prompt="Return it.",
    model="any/model",
    tools=[CountedDepositTool],
)
class DurableAgent: ...


@workflow_start(name="durable-workflow-start", description="s", input=WorkflowStartTextDto)
class DurableStart: ...


@workflow_finish(name="durable-workflow-finish", description="f", output=WorkflowFinishTextDto)
class DurableFinish: ...


@workflow(
    name="durable-workflow",
    version="1",
    flow=[
        start(DurableStart)
        .returns(WorkflowStartTextDto)
        .to_agent(DurableAgent)
        .to_finish(DurableFinish)
    ],
)
class DurableWorkflow: ...


@application(name="durable-application", workflows=[DurableWorkflow])
class DurableApplication: ...


def first_turn() -> ChatResponse:
    call = ToolCall(id="c1", name="return-deposit-tool", arguments='{"lease_id": "L-7"}')
    return ChatResponse(tool_calls=(call,))


def answer_turn(request: ChatRequest) -> ChatResponse:
    said = [m.content for m in request.messages if m.role is MessageRole.TOOL]
    text = json.dumps({"text": f"done: {said}"})
    return ChatResponse(tool_calls=(ToolCall(id="a", name=ANSWER_TOOL, arguments=text),))


async def _child(db: str, marker: str) -> None:
    async def model(request: ChatRequest) -> ChatResponse:
        if not any(m.role is MessageRole.TOOL for m in request.messages):
            return first_turn()
        Path(marker).write_text("the second model call started")
        await asyncio.sleep(3600)  # killed here, after the tool run was journaled
        raise AssertionError("unreachable")

    app = await App.create(
        DurableApplication, store=f"sqlite:///{db}", providers=[FunctionProvider(model)]
    )
    await app.execute(DurableWorkflow, {"text": "return L-7"}, owner_id="user-1")


if __name__ == "__main__":
    os.environ["AGBOSS_TEST_RUNS"] = sys.argv[2]
    asyncio.run(_child(sys.argv[1], sys.argv[3]))
