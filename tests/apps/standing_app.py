"""The standing-decision application: refunds and voids one role approves, and a lookup that
asks nobody (issue 30), as the standing-decision tests use it."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel

from agboss import (
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    PauseAnswerer,
    ToolHandler,
    agent,
    application,
    channel,
    channel_role,
    provide,
    tool,
    workflow,
)
from tests.apps.office_parts import DeskDoneDto, office_flow
from tests.apps.recorded import Recorder, Records


@dataclass
class StandingRecorder(Recorder):
    """What the standing application did in one test (`tests.apps.recorded`)."""

    asked: list[str] = field(default_factory=list)
    """The questions the desk was sent, as ``<tool> <order>``."""
    runs: list[str] = field(default_factory=list)
    """The calls that ran, as ``<tool> <order>``."""


class OrderDto(BaseModel):
    order_id: str


@channel_role(
    name="standing-refund-channel",
    description="Approves refunds and voids",
    approves=OrderDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
)
class StandingRefundChannel(ChannelOf[OrderDto]): ...


@channel(name="desk-standing-refund-channel", description="Asks the desk", deps=[StandingRecorder])
class DeskStandingRefundChannel(Records[StandingRecorder], StandingRefundChannel):
    async def send(self, ask: ChannelAsk[OrderDto]) -> ChannelOutcome:
        self.recorded.asked.append(f"{ask.value.tool} {ask.value.arguments.order_id}")
        return ChannelOutcome.await_reply()


class _Recorded(Records[StandingRecorder], ToolHandler[OrderDto, DeskDoneDto]):
    name = ""

    async def run(self, args: OrderDto) -> DeskDoneDto:
        self.recorded.runs.append(f"{self.name} {args.order_id}")
        return DeskDoneDto(status="done")


@tool(
    name="standing-refund-tool",
    description="Refunds an order",
    input=OrderDto,
    output=DeskDoneDto,
    channel=StandingRefundChannel,
    deps=[StandingRecorder],
)
class StandingRefundTool(_Recorded):
    name = "standing-refund-tool"


@tool(
    name="standing-void-tool",
    description="Voids an order",
    input=OrderDto,
    output=DeskDoneDto,
    channel=StandingRefundChannel,
    deps=[StandingRecorder],
)
class StandingVoidTool(_Recorded):
    name = "standing-void-tool"


@tool(
    name="standing-lookup-tool",
    description="Looks an order up",
    input=OrderDto,
    output=DeskDoneDto,
    deps=[StandingRecorder],
)
class StandingLookupTool(_Recorded):
    name = "standing-lookup-tool"


@agent(
    name="standing-agent",
    description="Refunds and voids orders",
    model="gpt-4o",
    tools=[StandingRefundTool, StandingVoidTool, StandingLookupTool],
    prompt="Do what you are asked to.",
)
class StandingAgent: ...


@workflow(
    name="standing-workflow", description="Orders", version="1", flow=office_flow(StandingAgent)
)
class StandingWorkflow: ...


@application(
    name="standing-application",
    workflows=[StandingWorkflow],
    channels=[DeskStandingRefundChannel],
    dependencies=[provide(StandingRecorder)],
)
class StandingApplication: ...
