"""The refund application whose roles each instance answers through the implementation it
chooses (issue 28), as the channel-choice tests use it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from pydantic import BaseModel

from agboss import (
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    ChannelWithdrawal,
    Escalate,
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
class ChoiceRecorder(Recorder):
    """What the channel-choice applications did in one test (`tests.apps.recorded`)."""

    told: list[str] = field(default_factory=list)
    """What each implementation was sent and told, as ``<implementation> <what> <order>``."""
    runs: list[str] = field(default_factory=list)
    """The orders refunded."""
    pause_ids: list[str] = field(default_factory=list)
    """The pause ids the channels were sent, in order."""


class OrderDto(BaseModel):
    order_id: str


@channel_role(
    name="lead-choice-channel",
    description="The lead approves refunds nobody else did",
    approves=OrderDto,
    answered_by=PauseAnswerer.CHANNEL,
)
class LeadChoiceChannel(ChannelOf[OrderDto]): ...


@channel_role(
    name="refund-choice-channel",
    description="Approves refunds",
    approves=OrderDto,
    answered_by=PauseAnswerer.CHANNEL,
)
class RefundChoiceChannel(ChannelOf[OrderDto]): ...


@channel_role(
    name="escalating-choice-channel",
    description="Approves refunds, or the lead does after an hour",
    approves=OrderDto,
    answered_by=PauseAnswerer.CHANNEL,
    ladder=[Escalate(after=timedelta(hours=1), to=LeadChoiceChannel)],
)
class EscalatingChoiceChannel(ChannelOf[OrderDto]): ...


class _Told(Records[ChoiceRecorder]):
    """Sends and withdraws, recorded in ``told`` under the implementation's name."""

    name = ""

    async def send(self, ask: ChannelAsk[OrderDto]) -> ChannelOutcome:
        self.recorded.told.append(f"{self.name} send {ask.value.arguments.order_id}")
        self.recorded.pause_ids.append(ask.pause_id)
        return ChannelOutcome.await_reply(reference=f"{self.name}/{ask.pause_id}")

    async def withdraw(self, withdrawal: ChannelWithdrawal[OrderDto]) -> None:
        self.recorded.told.append(f"{self.name} withdraw {withdrawal.reference}")


@channel(
    name="desk-refund-choice-channel",
    description="Asks the desk (development)",
    deps=[ChoiceRecorder],
)
class DeskRefundChoiceChannel(_Told, RefundChoiceChannel):
    name = "desk"


@channel(
    name="chat-refund-choice-channel",
    description="Asks in the team's chat (production)",
    deps=[ChoiceRecorder],
)
class ChatRefundChoiceChannel(_Told, RefundChoiceChannel):
    name = "chat"


@channel(
    name="test-refund-choice-channel",
    description="A test's own, listed nowhere",
    deps=[ChoiceRecorder],
)
class TestRefundChoiceChannel(_Told, RefundChoiceChannel):
    __test__ = False  # a channel named for the test that swaps it in, not a test class
    name = "test"


@channel(
    name="desk-lead-choice-channel",
    description="Asks the lead at the desk",
    deps=[ChoiceRecorder],
)
class DeskLeadChoiceChannel(_Told, LeadChoiceChannel):
    name = "desk-lead"


@channel(
    name="chat-lead-choice-channel",
    description="Asks the lead in the chat",
    deps=[ChoiceRecorder],
)
class ChatLeadChoiceChannel(_Told, LeadChoiceChannel):
    name = "chat-lead"


@tool(
    name="refund-choice-tool",
    description="Refunds an order",
    input=OrderDto,
    output=DeskDoneDto,
    channel=RefundChoiceChannel,
    deps=[ChoiceRecorder],
)
class RefundChoiceTool(Records[ChoiceRecorder], ToolHandler[OrderDto, DeskDoneDto]):
    async def run(self, args: OrderDto) -> DeskDoneDto:
        self.recorded.runs.append(args.order_id)
        return DeskDoneDto(status="refunded")


@agent(
    name="refund-choice-agent",
    description="Refunds orders",
    model="gpt-4o",
    tools=[RefundChoiceTool],
    prompt="Refund what you are asked to.",
)
class RefundChoiceAgent: ...


@workflow(
    name="refund-choice-workflow",
    description="Refunds",
    version="1",
    flow=office_flow(RefundChoiceAgent),
)
class RefundChoiceWorkflow: ...


@channel(
    name="desk-escalating-choice-channel",
    description="Asks the desk, then the lead",
    deps=[ChoiceRecorder],
)
class DeskEscalatingChoiceChannel(_Told, EscalatingChoiceChannel):
    name = "desk"


@tool(
    name="escalating-refund-choice-tool",
    description="Refunds an order, asking the lead if the desk does not answer",
    input=OrderDto,
    output=DeskDoneDto,
    channel=EscalatingChoiceChannel,
    deps=[ChoiceRecorder],
)
class EscalatingRefundChoiceTool(RefundChoiceTool): ...


@agent(
    name="escalating-refund-choice-agent",
    description="Refunds orders",
    model="gpt-4o",
    tools=[EscalatingRefundChoiceTool],
    prompt="Refund what you are asked to.",
)
class EscalatingRefundChoiceAgent: ...


@workflow(
    name="escalating-refund-choice-workflow",
    description="Refunds",
    version="1",
    flow=office_flow(EscalatingRefundChoiceAgent),
)
class EscalatingRefundChoiceWorkflow: ...


@application(
    name="escalating-choice-application",
    workflows=[EscalatingRefundChoiceWorkflow],
    channels=[DeskEscalatingChoiceChannel, DeskLeadChoiceChannel, ChatLeadChoiceChannel],
    dependencies=[provide(ChoiceRecorder)],
)
class EscalatingChoiceApplication: ...


@application(
    name="refund-choice-application",
    workflows=[RefundChoiceWorkflow],
    channels=[DeskRefundChoiceChannel, ChatRefundChoiceChannel],
    dependencies=[provide(ChoiceRecorder)],
)
class RefundChoiceApplication: ...
