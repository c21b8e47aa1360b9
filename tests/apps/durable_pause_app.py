"""An application whose channel dies in ``send``: ``python -m tests.apps.durable_pause_app DB LOG``.

The channel appends each pause id it is sent to LOG; in the child process (``AGBOSS_TEST_HANG``
set) it then hangs, so that the parent can kill the process while ``send`` is still running.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from pydantic import BaseModel

from agboss import (
    App,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    FunctionProvider,
    PauseAnswerer,
    ToolHandler,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
    agent,
    application,
    channel,
    channel_role,
    start,
    tool,
    workflow,
    workflow_finish,
    workflow_start,
)
from tests.apps.durable_app import answer_turn


class RefundDto(BaseModel):
    order_id: str


class DoneDto(BaseModel):
    status: str


@channel_role(
    name="refund-approval-channel",
    description="Approves refunds",
    approves=RefundDto,
    answered_by=PauseAnswerer.CHANNEL,
)
class RefundApprovalChannel(ChannelOf[RefundDto]): ...


@channel(name="flaky-refund-approval-channel", description="Dies mid-send in the child")
class FlakyRefundApprovalChannel(RefundApprovalChannel):
    async def send(self, ask: ChannelAsk[RefundDto]) -> ChannelOutcome:
        with Path(os.environ["AGBOSS_TEST_SENT"]).open("a") as sent:
            sent.write(ask.pause_id + "\n")
        if os.environ.get("AGBOSS_TEST_HANG"):
            await asyncio.sleep(3600)  # killed here, before send returned
        return ChannelOutcome.await_reply()


@tool(
    name="refund-tool",
    description="Refunds",
    input=RefundDto,
    output=DoneDto,
    channel=RefundApprovalChannel,
)
class RefundTool(ToolHandler[RefundDto, DoneDto]):
    async def run(self, args: RefundDto) -> DoneDto:
        return DoneDto(status=f"refunded {args.order_id}")


@agent(name="refund-agent", description="d", prompt="p", model="m", tools=[RefundTool])
class RefundAgent: ...


@workflow_start(name="refund-workflow-start", description="s", input=WorkflowStartTextDto)
class RefundStart: ...


@workflow_finish(name="refund-workflow-finish", description="f", output=WorkflowFinishTextDto)
class RefundFinish: ...


@workflow(
    name="refund-workflow",
    version="1",
    flow=[
        start(RefundStart)
        .returns(WorkflowStartTextDto)
        .to_agent(RefundAgent)
        .to_finish(RefundFinish)
    ],
)
class RefundWorkflow: ...


@application(
    name="refund-application", workflows=[RefundWorkflow], channels=[FlakyRefundApprovalChannel]
)
class RefundApplication: ...


def model() -> FunctionProvider:
    from agboss.models import ChatRequest, ChatResponse, MessageRole, ToolCall

    def turn(request: ChatRequest) -> ChatResponse:
        if any(m.role is MessageRole.TOOL for m in request.messages):
            return answer_turn(request)
        call = ToolCall(id="c1", name="refund-tool", arguments='{"order_id": "7"}')
        return ChatResponse(tool_calls=(call,))

    return FunctionProvider(turn)


async def _child(db: str) -> None:
    app = await App.create(RefundApplication, store=f"sqlite:///{db}", providers=[model()])
    await app.execute(RefundWorkflow, {"text": "refund 7"}, owner_id="user-1")


if __name__ == "__main__":
    os.environ["AGBOSS_TEST_SENT"] = sys.argv[2]
    os.environ["AGBOSS_TEST_HANG"] = "1"
    asyncio.run(_child(sys.argv[1]))
