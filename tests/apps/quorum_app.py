"""The treasury application: roles that take several approvals (issue 28), as the quorum and
page tests use it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Annotated, Any

from pydantic import BaseModel

from agboss import (
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    OnExpiry,
    PauseAnswerer,
    Pii,
    PiiKind,
    Quorum,
    QuorumAsk,
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
class QuorumRecorder(Recorder):
    """What the treasury application did in one test (`tests.apps.recorded`)."""

    sent: dict[str, str] = field(default_factory=dict)
    """The ids the desk channel was sent (a channel pause's id stays with its channel), by the
    call that asked: ``<tool> <order>``."""
    runs: list[str] = field(default_factory=list)
    """The calls that ran, as ``<tool> <order>``."""


IBAN = "DE89370400440532013000"


class PayDto(BaseModel):
    order_id: str
    amount: int
    iban: Annotated[str, Pii(kind=PiiKind.IBAN)] = IBAN


def finance_team(ask: QuorumAsk[PayDto]) -> list[str]:
    """The voters on a payment: the finance team, by the amount; the owner is listed too, so
    that ``distinct_from_owner`` is seen to take them out."""
    if ask.value.arguments.amount > 1_000_000:
        return ["cfo"]  # one voter for two approvals: nobody could approve it
    return ["fin-1", "fin-2", "fin-3", ask.owner_id]


@channel_role(
    name="payment-approval-channel",
    description="Two of the finance team approve a payment",
    approves=PayDto,
    answered_by=PauseAnswerer.CHANNEL,
    approvals=Quorum(2, of=finance_team),
    distinct_from_owner=True,
    expires_after=timedelta(days=2),
    on_expiry=OnExpiry.REJECT,
)
class PaymentApprovalChannel(ChannelOf[PayDto]): ...


@channel_role(
    name="veto-approval-channel",
    description="Two approve a wire; any one rejection stops it",
    approves=PayDto,
    answered_by=PauseAnswerer.CHANNEL,
    approvals=Quorum(2, rejection_decides=True),
)
class VetoApprovalChannel(ChannelOf[PayDto]): ...


@channel_role(
    name="partners-approval-channel",
    description="Two of the partners approve a write-off, signed in",
    approves=PayDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
    approvals=Quorum(2, of=["ada", "bo", "cy"]),
)
class PartnersApprovalChannel(ChannelOf[PayDto]): ...


@channel_role(
    name="refund-approval-channel",
    description="Someone other than the asker approves a refund",
    approves=PayDto,
    answered_by=PauseAnswerer.CHANNEL,
    distinct_from_owner=True,
)
class RefundApprovalChannel(ChannelOf[PayDto]): ...


class DeskChannel(Records[QuorumRecorder]):
    async def send(self, ask: ChannelAsk[PayDto]) -> ChannelOutcome:
        self.recorded.sent[f"{ask.value.tool} {ask.value.arguments.order_id}"] = ask.pause_id
        return ChannelOutcome.await_reply()


@channel(
    name="desk-payment-approval-channel", description="Asks the finance desk", deps=[QuorumRecorder]
)
class DeskPaymentChannel(DeskChannel, PaymentApprovalChannel): ...


@channel(name="desk-veto-approval-channel", description="Asks the wire desk", deps=[QuorumRecorder])
class DeskVetoChannel(DeskChannel, VetoApprovalChannel): ...


@channel(
    name="desk-partners-approval-channel",
    description="Shows the partners' inbox",
    deps=[QuorumRecorder],
)
class DeskPartnersChannel(DeskChannel, PartnersApprovalChannel): ...


@channel(
    name="desk-refund-approval-channel", description="Asks the refund desk", deps=[QuorumRecorder]
)
class DeskRefundChannel(DeskChannel, RefundApprovalChannel): ...


class TreasuryTool(Records[QuorumRecorder], ToolHandler[PayDto, DeskDoneDto]):
    name = ""

    async def run(self, args: PayDto) -> DeskDoneDto:
        self.recorded.runs.append(f"{self.name} {args.order_id}")
        return DeskDoneDto(status="done")


def treasury_tool(name: str, role: type[Any]) -> Any:
    return tool(
        name=name,
        description=f"{name} an order",
        input=PayDto,
        output=DeskDoneDto,
        channel=role,
        deps=[QuorumRecorder],
    )


@treasury_tool("pay-tool", PaymentApprovalChannel)
class PayTool(TreasuryTool):
    name = "pay-tool"


@treasury_tool("wire-tool", VetoApprovalChannel)
class WireTool(TreasuryTool):
    name = "wire-tool"


@treasury_tool("write-off-tool", PartnersApprovalChannel)
class WriteOffTool(TreasuryTool):
    name = "write-off-tool"


@treasury_tool("refund-tool", RefundApprovalChannel)
class RefundTool(TreasuryTool):
    name = "refund-tool"


@agent(
    name="treasury-agent",
    description="Pays, wires, writes off and refunds",
    model="gpt-4o",
    tools=[PayTool, WireTool, WriteOffTool, RefundTool],
    prompt="Do what you are asked to.",
)
class TreasuryAgent: ...


@workflow(
    name="treasury-workflow", description="Payments", version="1", flow=office_flow(TreasuryAgent)
)
class TreasuryWorkflow: ...


@application(
    name="treasury-application",
    workflows=[TreasuryWorkflow],
    channels=[DeskPaymentChannel, DeskVetoChannel, DeskPartnersChannel, DeskRefundChannel],
    dependencies=[provide(QuorumRecorder)],
)
class TreasuryApplication: ...
