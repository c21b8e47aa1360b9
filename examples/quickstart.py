"""agboss in five minutes (docs/quickstart.md): a refund that needs a person's yes — the call
pauses durably, and is answered later from Python, curl or the command line.

    python -m examples.quickstart [--port 8000]   # asks, serves /agboss on 127.0.0.1, waits
"""

from __future__ import annotations

import asyncio
import re
import sys

import uvicorn
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.requests import Request

from agboss import (
    App,
    ChannelOf,
    DevelopmentChannel,
    ExecutionStatus,
    FunctionProvider,
    PauseAnswerer,
    ToolHandler,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
    agent,
    application,
    channel_role,
    start,
    tool,
    workflow,
    workflow_finish,
    workflow_start,
)
from agboss.models import ChatRequest, ChatResponse, MessageRole, ToolCall
from agboss.web import Caller, mount, pause_router


class Refund(BaseModel):
    order_id: str
    amount: float


class Refunded(BaseModel):
    status: str


@channel_role(
    name="refund-approval-channel",
    description="Someone in finance approves each refund",
    approves=Refund,
    answered_by=PauseAnswerer.CHANNEL,
)
class RefundApprovers(ChannelOf[Refund]): ...


@tool(
    name="refund-order-tool",
    description="Refunds an order",
    input=Refund,
    output=Refunded,
    channel=RefundApprovers,  # every call waits for a yes
)
class RefundOrder(ToolHandler[Refund, Refunded]):
    async def run(self, args: Refund) -> Refunded:
        return Refunded(status=f"refunded {args.amount:.2f} EUR on order {args.order_id}")


@agent(
    name="support-agent",
    description="Answers customers",
    model="scripted",
    tools=[RefundOrder],
    prompt="Refund what is asked.",
)
class SupportAgent: ...


@workflow_start(name="support-workflow-start", description="A request", input=WorkflowStartTextDto)
class SupportStart: ...


@workflow_finish(
    name="support-workflow-finish", description="The answer", output=WorkflowFinishTextDto
)
class SupportFinish: ...


@workflow(
    name="support-workflow",
    version="1",
    flow=[
        start(SupportStart)
        .returns(WorkflowStartTextDto)
        .to_agent(SupportAgent)
        .to_finish(SupportFinish)
    ],
)
class Support: ...


@application(name="quickstart-application", workflows=[Support])
class Quickstart: ...


def scripted(request: ChatRequest) -> ChatResponse:
    """The model, scripted: a refund for the order and amount asked, then what the tool said."""
    done = [m.content for m in request.messages if m.role is MessageRole.TOOL]
    if done:
        return ChatResponse(content=done[-1])
    order, amount = re.findall(r"[\d.]+", request.messages[-1].content)[:2]
    call = ToolCall(
        id="c1",
        name="refund-order-tool",
        arguments=f'{{"order_id": "{order}", "amount": {amount}}}',
    )
    return ChatResponse(tool_calls=(call,))


async def create() -> App:
    """The application as `agboss resume --app examples.quickstart:create` opens it too."""
    channels = {RefundApprovers: DevelopmentChannel}  # shows each question's id: development only
    return await App.create(Quickstart, providers=[FunctionProvider(scripted)], channels=channels)


async def signed_in(request: Request) -> Caller:
    return Caller(answered_by="developer")  # everyone is the developer: development only


async def main(port: int) -> None:
    async with await create() as app:
        asked = WorkflowStartTextDto(text="Refund order 1042: 120.50 EUR")
        result = await app.execute(Support, asked, owner_id="ada")
        web = Starlette()
        mount(web, "/agboss", pause_router(app, authenticate=signed_in))
        server = uvicorn.Server(
            uvicorn.Config(web, host="127.0.0.1", port=port, log_level="warning")
        )
        serving = asyncio.create_task(server.serve())
        while result.status is ExecutionStatus.PAUSED:  # answered from anywhere: it moves on
            await asyncio.sleep(1)
            await app.recover()  # an answer another process recorded (the command line)
            result = await app.get(result.execution_id)
        print(f"{result.status.value}: {result.output}", flush=True)
        server.should_exit = True
        await serving


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[2]) if sys.argv[1:2] == ["--port"] else 8000))
