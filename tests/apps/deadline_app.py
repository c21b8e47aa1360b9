"""An application whose questions expire (issue 27): one role per ``on_expiry``, a tool that
shortens its role's deadline, and a FailFast launch a withdrawn question fails."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from pydantic import BaseModel

from agboss import (
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    ChannelReminder,
    ChannelWithdrawal,
    Escalate,
    JoinHandler,
    JoinInput,
    OnExpiry,
    PauseAnswerer,
    PauseExpiredError,
    Remind,
    ToolHandler,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
    agent,
    application,
    channel,
    channel_role,
    join,
    provide,
    start,
    tool,
    workflow,
    workflow_start,
)
from agboss.flow import Failure
from tests.apps.office_parts import DeskDoneDto, OfficeWorkflowFinish, OfficeWorkflowStart
from tests.apps.recorded import Recorder, Records


@dataclass
class DeadlineRecorder(Recorder):
    """What the deadline application did in one test (`tests.apps.recorded`)."""

    runs: list[str] = field(default_factory=list)
    """Every tool run, in order."""
    told: list[str] = field(default_factory=list)
    """What the channels were sent and told, in order."""
    pause_ids: list[str] = field(default_factory=list)
    """The pause ids the channels were sent, in order (a channel pause's id is only theirs)."""
    failing: bool = False
    """Set by a test: the channels' ``remind`` raises."""


DAYS_2 = timedelta(days=2)

HOUR = timedelta(hours=1)

REMINDERS = (HOUR, timedelta(hours=24))
"""When the reminded role reminds of a question, after it was asked."""


class OrderDto(BaseModel):
    order_id: str


def _role(name: str, on_expiry: OnExpiry, after: timedelta | None = DAYS_2) -> Any:
    return channel_role(
        name=name,
        description=f"Refunds whose silence means {on_expiry.value}",
        approves=OrderDto,
        answered_by=PauseAnswerer.CHANNEL,
        expires_after=after,
        on_expiry=on_expiry,
    )


@channel_role(
    name="reminded-refund-channel",
    description="Refunds the desk is reminded of, then rejected after two days",
    approves=OrderDto,
    answered_by=PauseAnswerer.CHANNEL,
    expires_after=DAYS_2,
    ladder=[Remind(after=after) for after in REMINDERS],
)
class RemindedRefundChannel(ChannelOf[OrderDto]): ...


@channel_role(
    name="lead-refund-channel",
    description="The thread's owner, the finance lead, approves refunds nobody else did",
    approves=OrderDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
)
class LeadRefundChannel(ChannelOf[OrderDto]): ...


ESCALATION = timedelta(hours=24)
"""When the escalating role's questions are asked of the lead instead."""


@channel_role(
    name="escalating-refund-channel",
    description="Refunds the desk is reminded of, then the lead is asked",
    approves=OrderDto,
    answered_by=PauseAnswerer.CHANNEL,
    expires_after=DAYS_2,
    ladder=[
        Remind(after=HOUR),
        Escalate(after=ESCALATION, to=LeadRefundChannel),
        Remind(after=timedelta(hours=36)),
    ],
)
class EscalatingRefundChannel(ChannelOf[OrderDto]): ...


@_role("reject-refund-channel", OnExpiry.REJECT)
class RejectRefundChannel(ChannelOf[OrderDto]): ...


@_role("approve-refund-channel", OnExpiry.APPROVE)
class ApproveRefundChannel(ChannelOf[OrderDto]): ...


@_role("withdraw-refund-channel", OnExpiry.WITHDRAW)
class WithdrawRefundChannel(ChannelOf[OrderDto]): ...


class _Desk(Records[DeadlineRecorder]):
    """Asks the desk: what it was sent, told and reminded of is recorded in ``told``."""

    said = ""
    """How its lines begin (``lead `` for the lead's)."""
    place = "desk"
    """Where its questions are posted (the reference it keeps: ``desk/o-1``)."""

    async def send(self, ask: ChannelAsk[OrderDto]) -> ChannelOutcome:
        self.recorded.told.append(f"{self.said}send {ask.value.arguments.order_id}")
        self.recorded.pause_ids.append(ask.pause_id)
        return ChannelOutcome.await_reply(reference=f"{self.place}/{ask.value.arguments.order_id}")

    async def withdraw(self, withdrawal: ChannelWithdrawal[OrderDto]) -> None:
        order, how = withdrawal.value.arguments.order_id, withdrawal.resolution.value
        self.recorded.told.append(f"{self.said}withdraw {order} {how} {withdrawal.reference}")

    async def remind(self, reminder: ChannelReminder[OrderDto]) -> None:
        if self.recorded.failing:
            raise ConnectionError("the desk's inbox is down")
        order = reminder.value.arguments.order_id
        self.recorded.told.append(
            f"{self.said}remind {order} #{reminder.reminder} {reminder.reference}"
        )


@channel(name="reject-desk-channel", description="Asks the desk", deps=[DeadlineRecorder])
class RejectDeskChannel(_Desk, RejectRefundChannel): ...


@channel(name="approve-desk-channel", description="Asks the desk", deps=[DeadlineRecorder])
class ApproveDeskChannel(_Desk, ApproveRefundChannel): ...


@channel(name="withdraw-desk-channel", description="Asks the desk", deps=[DeadlineRecorder])
class WithdrawDeskChannel(_Desk, WithdrawRefundChannel): ...


@channel(
    name="reminded-desk-channel",
    description="Asks the desk, and reminds it",
    deps=[DeadlineRecorder],
)
class RemindedDeskChannel(_Desk, RemindedRefundChannel): ...


@channel(
    name="escalating-desk-channel",
    description="Asks the desk, then the lead",
    deps=[DeadlineRecorder],
)
class EscalatingDeskChannel(_Desk, EscalatingRefundChannel): ...


class _Lead(_Desk):
    """Asks the finance lead."""

    said = "lead "
    place = "lead"


@channel(name="lead-desk-channel", description="Asks the finance lead", deps=[DeadlineRecorder])
class LeadDeskChannel(_Lead, LeadRefundChannel): ...


class _Refund(Records[DeadlineRecorder], ToolHandler[OrderDto, DeskDoneDto]):
    async def run(self, args: OrderDto) -> DeskDoneDto:
        self.recorded.runs.append(f"{type(self).__name__} {args.order_id}")
        return DeskDoneDto(status=f"refunded {args.order_id}")


def _tool(name: str, role: type[Any], **options: Any) -> Any:
    return tool(
        name=name,
        description="Refunds an order",
        input=OrderDto,
        output=DeskDoneDto,
        channel=role,
        deps=[DeadlineRecorder],
        **options,
    )


@_tool("reject-refund-tool", RejectRefundChannel)
class RejectRefundTool(_Refund): ...


@_tool("approve-refund-tool", ApproveRefundChannel)
class ApproveRefundTool(_Refund): ...


@_tool("withdraw-refund-tool", WithdrawRefundChannel)
class WithdrawRefundTool(_Refund): ...


@_tool("urgent-refund-tool", RejectRefundChannel, expires_after=timedelta(hours=1))
class UrgentRefundTool(_Refund):
    """Its role waits two days; this tool's questions, one hour."""


@_tool("reminded-refund-tool", RemindedRefundChannel)
class RemindedRefundTool(_Refund): ...


@_tool("escalating-refund-tool", EscalatingRefundChannel)
class EscalatingRefundTool(_Refund): ...


TOOLS = [
    RejectRefundTool,
    ApproveRefundTool,
    WithdrawRefundTool,
    UrgentRefundTool,
    RemindedRefundTool,
    EscalatingRefundTool,
]


@agent(
    name="refund-agent",
    description="Refunds orders",
    prompt="Refund what is asked.",
    model="test/model",
    tools=TOOLS,
    output=WorkflowFinishTextDto,
)
class RefundAgent: ...


@agent(
    name="second-refund-agent",
    description="Refunds orders too",
    prompt="Refund what is asked.",
    model="test/model",
    tools=TOOLS,
    output=WorkflowFinishTextDto,
)
class SecondRefundAgent: ...


@join(name="refunds-join", description="Both answers", output=WorkflowFinishTextDto)
class RefundsJoin(JoinHandler[WorkflowFinishTextDto]):
    def join(self, input: JoinInput) -> WorkflowFinishTextDto:
        texts = [
            r.output.text for r in input.results if isinstance(r.output, WorkflowFinishTextDto)
        ]
        return WorkflowFinishTextDto(text=" | ".join(texts))


@join(name="expired-join", description="Says a question expired", output=WorkflowFinishTextDto)
class ExpiredJoin(JoinHandler[WorkflowFinishTextDto]):
    def join(self, input: JoinInput) -> WorkflowFinishTextDto:
        return WorkflowFinishTextDto(text="a question expired")


class OrdersDto(BaseModel):
    orders: list[OrderDto]


@agent(
    name="order-refund-agent",
    description="Refunds one order",
    prompt="Refund it.",
    model="test/model",
    tools=TOOLS,
    input=OrderDto,
    output=WorkflowFinishTextDto,
    max_validation_attempts=0,
)
class OrderRefundAgent: ...


@workflow_start(name="order-workflow-start", description="An order", input=OrderDto)
class OrderStart: ...


@workflow_start(name="orders-workflow-start", description="Orders", input=OrdersDto)
class OrdersStart: ...


@workflow(
    name="order-refund-workflow",
    version="1",
    flow=[
        start(OrderStart)
        .returns(OrderDto)
        .to_agent(OrderRefundAgent)
        .to_finish(OfficeWorkflowFinish)
    ],
)
class OrderRefundWorkflow: ...


@join(name="collected-join", description="Each order's outcome", output=WorkflowFinishTextDto)
class CollectedJoin(JoinHandler[WorkflowFinishTextDto]):
    def join(self, input: JoinInput) -> WorkflowFinishTextDto:
        said = [type(r.error).__name__ if r.error is not None else "ok" for r in input.results]
        return WorkflowFinishTextDto(text=" | ".join(said))


@workflow(
    name="child-orders-workflow",
    version="1",
    flow=[
        start(OrdersStart)
        .returns(OrdersDto)
        .to_each_workflow(OrderRefundWorkflow, over="orders")
        .join(RefundsJoin)
        .on_join_error(PauseExpiredError, ExpiredJoin)
        .to_finish(OfficeWorkflowFinish)
    ],
)
class ChildOrdersWorkflow:
    """Each order in a child workflow, under FailFast."""


@workflow(
    name="collected-orders-workflow",
    version="1",
    flow=[
        start(OrdersStart)
        .returns(OrdersDto)
        .to_each(OrderRefundAgent, over="orders", failure=Failure.COLLECT)
        .join(CollectedJoin)
        .to_finish(OfficeWorkflowFinish)
    ],
)
class CollectedOrdersWorkflow:
    """Each order per item, every branch run to its end (COLLECT)."""


def _start() -> Any:
    return start(OfficeWorkflowStart).returns(WorkflowStartTextDto)


@workflow(
    name="refund-workflow",
    version="1",
    flow=[_start().to_agent(RefundAgent).to_finish(OfficeWorkflowFinish)],
)
class RefundWorkflow: ...


@workflow(
    name="two-desks-workflow",
    version="1",
    flow=[
        _start()
        .to_parallel(RefundAgent, SecondRefundAgent)
        .join(RefundsJoin)
        .on_join_error(PauseExpiredError, ExpiredJoin)
        .to_finish(OfficeWorkflowFinish)
    ],
)
class TwoDesksWorkflow: ...


@application(
    name="deadline-application",
    workflows=[RefundWorkflow, TwoDesksWorkflow, ChildOrdersWorkflow, CollectedOrdersWorkflow],
    channels=[
        RejectDeskChannel,
        ApproveDeskChannel,
        WithdrawDeskChannel,
        RemindedDeskChannel,
        EscalatingDeskChannel,
        LeadDeskChannel,
    ],
    dependencies=[provide(DeadlineRecorder)],
)
class DeadlineApplication: ...
