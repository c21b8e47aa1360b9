"""An approval whose channel takes as long as a test says: for bounded time and cancellation."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
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
    provide,
    start,
    tool,
    workflow,
    workflow_finish,
    workflow_start,
)
from agboss.agents import ANSWER_TOOL
from agboss.models import ChatRequest, ChatResponse, MessageRole, ToolCall
from tests.apps.recorded import Recorder, Records


class PaymentDto(BaseModel):
    amount: float


class PaidDto(BaseModel):
    status: str


@dataclass
class LivenessRecorder(Recorder):
    """What the payment application did in one test, and how slow a test made its channel
    (`tests.apps.recorded`)."""

    runs: list[float] = field(default_factory=list)
    withdraws: list[str] = field(default_factory=list)
    """The pause ids the channel's withdraw was called with, as each call began."""
    send_seconds: float = 0.0
    """Set by a test: how long the channel's send takes."""
    withdraw_hangs: bool = False
    """Set by a test: whether the channel's withdraw waits until it is cut off."""
    withdraw_started: list[asyncio.Event] = field(default_factory=list)
    """Events set as a withdraw begins (a test appends one)."""


@channel_role(
    name="payment-approval-channel",
    description="Approves payments",
    approves=PaymentDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
)
class PaymentApprovalChannel(ChannelOf[PaymentDto]): ...


@channel(
    name="slow-payment-approval-channel",
    description="Takes its time to post",
    deps=[LivenessRecorder],
)
class SlowPaymentApprovalChannel(Records[LivenessRecorder], PaymentApprovalChannel):
    async def send(self, ask: ChannelAsk[PaymentDto]) -> ChannelOutcome:
        await asyncio.sleep(self.recorded.send_seconds)
        return ChannelOutcome.await_reply()

    async def withdraw(self, withdrawal: ChannelWithdrawal[PaymentDto]) -> None:
        self.recorded.withdraws.append(withdrawal.pause_id)
        for started in self.recorded.withdraw_started:
            started.set()
        if self.recorded.withdraw_hangs:
            await asyncio.Event().wait()


@tool(
    name="pay-tool",
    description="Pays",
    input=PaymentDto,
    output=PaidDto,
    channel=PaymentApprovalChannel,
    timeout=timedelta(seconds=0.3),
    deps=[LivenessRecorder],
)
class PayTool(Records[LivenessRecorder], ToolHandler[PaymentDto, PaidDto]):
    async def run(self, args: PaymentDto) -> PaidDto:
        self.recorded.runs.append(args.amount)
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
    name="payment-application",
    workflows=[PaymentWorkflow],
    channels=[SlowPaymentApprovalChannel],
    dependencies=[provide(LivenessRecorder)],
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
