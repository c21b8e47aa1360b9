"""The claims application: refunds a desk of clerks approves through its channel — one role
whose claims hold half an hour and take only the claimant's answer, one whose claims let
anyone answer, one that takes two approvals, one on a ladder with a deadline — and a legal
desk a question may be handed to, as the claim and reassignment tests use it (issue 57)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from pydantic import BaseModel

from agboss import (
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    ChannelReminder,
    ChannelWithdrawal,
    Claims,
    OnExpiry,
    PauseAnswerer,
    Quorum,
    Remind,
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

HALF_HOUR = timedelta(minutes=30)
"""How long a claim on the desk's refunds holds."""

HOUR = timedelta(hours=1)
"""When the reminded desk's questions are reminded of."""

DAY = timedelta(days=1)
"""When the reminded desk's questions expire (rejected)."""


@dataclass
class ClaimsRecorder(Recorder):
    """What the claims application did in one test (`tests.apps.recorded`)."""

    pause_ids: list[str] = field(default_factory=list)
    """The ids the desk was sent, in the order asked: what its clerks answer with."""
    runs: list[str] = field(default_factory=list)
    """The calls that ran, as ``<tool> <order>``."""
    told: list[str] = field(default_factory=list)
    """What the desks were told, as ``<desk> send [claimed by <who>]``, ``<desk> remind #n``
    and ``<desk> withdraw <resolution>``."""


class OrderDto(BaseModel):
    order_id: str


@channel_role(
    name="refund-desk-channel",
    description="A clerk of the desk approves a refund; the one who claims it handles it",
    approves=OrderDto,
    answered_by=PauseAnswerer.CHANNEL,
    claims=Claims(lasts=HALF_HOUR),
)
class RefundDeskChannel(ChannelOf[OrderDto]): ...


@channel_role(
    name="open-desk-channel",
    description="A clerk approves a void; a claim only says who looks at it",
    approves=OrderDto,
    answered_by=PauseAnswerer.CHANNEL,
    claims=Claims(others_answer=True),
)
class OpenDeskChannel(ChannelOf[OrderDto]): ...


@channel_role(
    name="pair-desk-channel",
    description="Two clerks approve a write-off",
    approves=OrderDto,
    answered_by=PauseAnswerer.CHANNEL,
    approvals=Quorum(2),
)
class PairDeskChannel(ChannelOf[OrderDto]): ...


@channel_role(
    name="legal-desk-channel",
    description="A lawyer approves what the clerks hand over",
    approves=OrderDto,
    answered_by=PauseAnswerer.CHANNEL,
)
class LegalDeskChannel(ChannelOf[OrderDto]): ...


@channel_role(
    name="reminded-desk-channel",
    description="A clerk approves a credit, reminded after an hour; unanswered in a day, no",
    approves=OrderDto,
    answered_by=PauseAnswerer.CHANNEL,
    expires_after=DAY,
    on_expiry=OnExpiry.REJECT,
    ladder=[Remind(after=HOUR)],
)
class RemindedDeskChannel(ChannelOf[OrderDto]): ...


class _Desk(Records[ClaimsRecorder]):
    desk = ""

    async def send(self, ask: ChannelAsk[OrderDto]) -> ChannelOutcome:
        self.recorded.pause_ids.append(ask.pause_id)
        claimed = "" if ask.claimed_by is None else f" claimed by {ask.claimed_by}"
        self.recorded.told.append(f"{self.desk} send{claimed}")
        return ChannelOutcome.await_reply()

    async def remind(self, reminder: ChannelReminder[OrderDto]) -> None:
        self.recorded.told.append(f"{self.desk} remind #{reminder.reminder}")

    async def withdraw(self, withdrawal: ChannelWithdrawal[OrderDto]) -> None:
        self.recorded.told.append(f"{self.desk} withdraw {withdrawal.resolution.value}")


@channel(name="desk-refund-channel", description="The desk", deps=[ClaimsRecorder])
class DeskRefundChannel(_Desk, RefundDeskChannel):
    desk = "refunds"


@channel(name="desk-open-channel", description="The desk", deps=[ClaimsRecorder])
class DeskOpenChannel(_Desk, OpenDeskChannel):
    desk = "voids"


@channel(name="desk-pair-channel", description="The desk", deps=[ClaimsRecorder])
class DeskPairChannel(_Desk, PairDeskChannel):
    desk = "write-offs"


@channel(name="desk-legal-channel", description="The legal desk", deps=[ClaimsRecorder])
class DeskLegalChannel(_Desk, LegalDeskChannel):
    desk = "legal"


@channel(name="desk-reminded-channel", description="The desk", deps=[ClaimsRecorder])
class DeskRemindedChannel(_Desk, RemindedDeskChannel):
    desk = "credits"


class _Recorded(Records[ClaimsRecorder], ToolHandler[OrderDto, DeskDoneDto]):
    name = ""

    async def run(self, args: OrderDto) -> DeskDoneDto:
        self.recorded.runs.append(f"{self.name} {args.order_id}")
        return DeskDoneDto(status="done")


@tool(
    name="claimed-refund-tool",
    description="Refunds an order",
    input=OrderDto,
    output=DeskDoneDto,
    channel=RefundDeskChannel,
    deps=[ClaimsRecorder],
)
class ClaimedRefundTool(_Recorded):
    name = "claimed-refund-tool"


@tool(
    name="open-void-tool",
    description="Voids an order",
    input=OrderDto,
    output=DeskDoneDto,
    channel=OpenDeskChannel,
    deps=[ClaimsRecorder],
)
class OpenVoidTool(_Recorded):
    name = "open-void-tool"


@tool(
    name="paired-write-off-tool",
    description="Writes an order off",
    input=OrderDto,
    output=DeskDoneDto,
    channel=PairDeskChannel,
    deps=[ClaimsRecorder],
)
class PairedWriteOffTool(_Recorded):
    name = "paired-write-off-tool"


@tool(
    name="reminded-credit-tool",
    description="Credits an order",
    input=OrderDto,
    output=DeskDoneDto,
    channel=RemindedDeskChannel,
    deps=[ClaimsRecorder],
)
class RemindedCreditTool(_Recorded):
    name = "reminded-credit-tool"


@agent(
    name="claims-agent",
    description="Refunds, voids and writes off orders",
    model="gpt-4o",
    tools=[ClaimedRefundTool, OpenVoidTool, PairedWriteOffTool, RemindedCreditTool],
    prompt="Do what you are asked to.",
)
class ClaimsAgent: ...


@workflow(name="claims-workflow", description="Orders", version="1", flow=office_flow(ClaimsAgent))
class ClaimsWorkflow: ...


@application(
    name="claims-application",
    workflows=[ClaimsWorkflow],
    channels=[
        DeskRefundChannel,
        DeskOpenChannel,
        DeskPairChannel,
        DeskLegalChannel,
        DeskRemindedChannel,
    ],
    dependencies=[provide(ClaimsRecorder)],
)
class ClaimsApplication: ...
