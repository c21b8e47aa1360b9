"""An approval whose channel takes as long as a test says: for bounded time and cancellation."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

from pydantic import BaseModel

from agboss import (
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    ChannelWithdrawal,
    PauseAnswerer,
    ToolHandler,
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
from agboss.agents import ANSWER_TOOL
from agboss.models import ChatRequest, ChatResponse, MessageRole, ToolCall


class PaymentDto(BaseModel):
    amount: float


class PaidDto(BaseModel):
    status: str


SEND_SECONDS: list[float] = [0.0]
"""How long the channel's send takes (a list, so that a test can change it)."""

RUNS: list[float] = []

WITHDRAWS: list[str] = []
"""The pause ids the channel's withdraw was called with, as each call began."""

WITHDRAW_HANGS: list[bool] = [False]
"""Whether the channel's withdraw waits until it is cut off (a list, as above)."""

WITHDRAW_STARTED: list[asyncio.Event] = []
"""Events set as a withdraw begins (a test appends one)."""


@channel_role(
    name="payment-approval-channel",
    description="Approves payments",
    approves=PaymentDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
)
class PaymentApprovalChannel(ChannelOf[PaymentDto]): ...


@channel(name="slow-payment-approval-channel", description="Takes its time to post")
class SlowPaymentApprovalChannel(PaymentApprovalChannel):
    async def send(self, ask: ChannelAsk[PaymentDto]) -> ChannelOutcome:
        await asyncio.sleep(SEND_SECONDS[0])
        return ChannelOutcome.await_reply()

    async def withdraw(self, withdrawal: ChannelWithdrawal[PaymentDto]) -> None:
        WITHDRAWS.append(withdrawal.pause_id)
        for started in WITHDRAW_STARTED:
            started.set()
        if WITHDRAW_HANGS[0]:
            await asyncio.Event().wait()


@tool(
    name="pay-tool",
    description="Pays",
    input=PaymentDto,
    output=PaidDto,
    channel=PaymentApprovalChannel,
    timeout=timedelta(seconds=0.3),
)
class PayTool(ToolHandler[PaymentDto, PaidDto]):
    async def run(self, args: PaymentDto) -> PaidDto:
        RUNS.append(args.amount)
        return PaidDto(status=f"paid {args.amount}")


@agent(
    name="payment-agent",
    description="Pays",
    prompt="Pay it.",
    model="test/model",
    tools=[PayTool],
    input=PaymentDto,
    output=PaidDto,
)
class PaymentAgent: ...


@workflow_start(name="payment-workflow-start", description="s", input=PaymentDto)
class PaymentStart: ...


@workflow_finish(name="payment-workflow-finish", description="f", output=PaidDto)
class PaymentFinish: ...


@workflow(
    name="payment-workflow",
    version="1",
    flow=[start(PaymentStart).returns(PaymentDto).to_agent(PaymentAgent).to_finish(PaymentFinish)],
)
class PaymentWorkflow: ...


@application(
    name="payment-application", workflows=[PaymentWorkflow], channels=[SlowPaymentApprovalChannel]
)
class PaymentApplication: ...


def model(request: ChatRequest) -> ChatResponse:
    """Pays the amount asked, then answers with the tool's result."""
    results = [m.content for m in request.messages if m.role is MessageRole.TOOL]
    if results:
        status = json.loads(results[-1]).get("status", results[-1])
        arguments = json.dumps({"status": status})
        return ChatResponse(tool_calls=(ToolCall(id="a", name=ANSWER_TOOL, arguments=arguments),))
    amount = next(m.content for m in request.messages if m.role is MessageRole.USER)
    return ChatResponse(tool_calls=(ToolCall(id="c", name="pay-tool", arguments=amount),))
