"""An application that asks in Slack (`agboss.slack`): refunds a finance manager approves in a
channel (a channel-answered role with a reply interpreter), expenses a thread's owner approves
in a conversation chosen per question, and a FailFast launch whose failure withdraws."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, Field

from agboss import (
    AgentFailedError,
    ChannelAsk,
    ChannelOf,
    DecidedBy,
    Escalate,
    ExecutionContext,
    JoinHandler,
    JoinInput,
    PauseAnswerer,
    Remind,
    ReplyInterpretation,
    ReplyInterpreterHandler,
    ToolCallApprovalDecisionDto,
    ToolHandler,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
    agent,
    application,
    channel,
    channel_role,
    join,
    provide,
    reply_interpreter,
    start,
    tool,
    workflow,
)
from agboss.interpreters import InterpreterInput
from agboss.slack import SlackChannel, SlackWorkspace
from tests.apps.office_parts import DeskDoneDto, OfficeWorkflowFinish, OfficeWorkflowStart
from tests.apps.recorded import Recorder, Records


@dataclass
class SlackRecorder(Recorder):
    """What the Slack application's tools did in one test (`tests.apps.recorded`)."""

    runs: list[str] = field(default_factory=list)
    """Every tool run, in order."""
    gate: asyncio.Event | None = None
    """Set by a test: what a reply that starts with "slowly" waits for before it is read."""


FINANCE = "C0FINANCE"

LEADS = "C0LEADS"


class RefundDto(BaseModel):
    order_id: str
    amount: float = Field(gt=0)
    express: bool = False
    note: str | None = None


class ExpenseDto(BaseModel):
    purpose: str
    amount: float


@reply_interpreter(
    name="refund-reply-interpreter",
    description="Reads a manager's words about a refund",
    decided_by=DecidedBy.CODE,
    deps=[SlackRecorder],
)
class RefundReplyInterpreter(Records[SlackRecorder], ReplyInterpreterHandler[RefundDto]):
    async def interpret(self, input: InterpreterInput[RefundDto]) -> ReplyInterpretation:
        words = input.reply.lower()
        gate = self.recorded.gate
        if words.startswith("slowly") and gate is not None:
            await gate.wait()  # a model that takes its time: the test opens the gate
        if "half" in words:
            asked = input.ask.arguments
            half = asked.model_copy(update={"amount": asked.amount / 2}).model_dump()
            return ReplyInterpretation.understood(
                ToolCallApprovalDecisionDto(approved=True, override_arguments=half)
            )
        if words.startswith(("ok", "slowly ok")):
            return ReplyInterpretation.understood(ToolCallApprovalDecisionDto(approved=True))
        return ReplyInterpretation.not_understood(reason="say ok, or ok but half")


@channel_role(
    name="lead-refund-approval-channel",
    description="The finance leads approve refunds the managers left",
    approves=RefundDto,
    answered_by=PauseAnswerer.CHANNEL,
)
class LeadRefundApprovalChannel(ChannelOf[RefundDto]): ...


FINANCE_GROUP = "S0FINANCE"
"""The Slack user group of the finance managers, who may vote on a large refund."""

ESCALATION = timedelta(hours=24)
"""When a refund nobody answered is asked of the finance leads instead."""


@channel_role(
    name="refund-approval-channel",
    description="A finance manager approves refunds",
    approves=RefundDto,
    answered_by=PauseAnswerer.CHANNEL,
    reply_interpreter=RefundReplyInterpreter,
    ladder=[Escalate(after=ESCALATION, to=LeadRefundApprovalChannel)],
)
class RefundApprovalChannel(ChannelOf[RefundDto]): ...


@channel(
    name="slack-refund-approval-channel",
    description="Asks the finance managers in Slack",
    deps=[SlackWorkspace, ExecutionContext],
)
class SlackRefundApprovalChannel(SlackChannel[RefundDto], RefundApprovalChannel):
    conversation = FINANCE


@channel(
    name="slack-lead-refund-approval-channel",
    description="Asks the finance leads in Slack",
    deps=[SlackWorkspace, ExecutionContext],
)
class SlackLeadRefundApprovalChannel(SlackChannel[RefundDto], LeadRefundApprovalChannel):
    conversation = LEADS
    allowed_users = frozenset({"U0MANAGER"})  # the lead alone, of the mapped managers


@channel_role(
    name="large-refund-approval-channel",
    description="Two finance managers approve a large refund",
    approves=RefundDto,
    answered_by=PauseAnswerer.CHANNEL,
    approvals=2,
)
class LargeRefundApprovalChannel(ChannelOf[RefundDto]): ...


@channel(
    name="slack-large-refund-approval-channel",
    description="Asks the finance managers in Slack, two of whom approve",
    deps=[SlackWorkspace, ExecutionContext],
)
class SlackLargeRefundApprovalChannel(SlackChannel[RefundDto], LargeRefundApprovalChannel):
    conversation = FINANCE
    allowed_user_groups = frozenset({FINANCE_GROUP})  # not the desk clerks the route maps


@channel_role(
    name="expense-approval-channel",
    description="The thread's owner confirms an expense",
    approves=ExpenseDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
    expires_after=timedelta(days=2),  # the message says until when it waits
    ladder=[Remind(after=timedelta(hours=4))],  # in the question's thread
)
class ExpenseApprovalChannel(ChannelOf[ExpenseDto]): ...


@channel(
    name="slack-expense-approval-channel",
    description="Asks the thread's owner in their own conversation",
    deps=[SlackWorkspace, ExecutionContext],
)
class SlackExpenseApprovalChannel(SlackChannel[ExpenseDto], ExpenseApprovalChannel):
    def conversation_for(self, ask: ChannelAsk[ExpenseDto]) -> str:
        return f"D-{self.context.owner_id}"  # chosen per question, from its frame


@tool(
    name="refund-card-tool",
    description="Refunds a card payment",
    input=RefundDto,
    output=DeskDoneDto,
    channel=RefundApprovalChannel,
    deps=[SlackRecorder],
)
class RefundCardTool(Records[SlackRecorder], ToolHandler[RefundDto, DeskDoneDto]):
    async def run(self, args: RefundDto) -> DeskDoneDto:
        self.recorded.runs.append(f"refund {args.order_id} {args.amount}")
        return DeskDoneDto(status=f"refunded {args.order_id}")


@tool(
    name="large-refund-tool",
    description="Refunds a large card payment",
    input=RefundDto,
    output=DeskDoneDto,
    channel=LargeRefundApprovalChannel,
    deps=[SlackRecorder],
)
class LargeRefundTool(Records[SlackRecorder], ToolHandler[RefundDto, DeskDoneDto]):
    async def run(self, args: RefundDto) -> DeskDoneDto:
        self.recorded.runs.append(f"large refund {args.order_id} {args.amount}")
        return DeskDoneDto(status=f"refunded {args.order_id}")


@tool(
    name="book-expense-tool",
    description="Books an expense",
    input=ExpenseDto,
    output=DeskDoneDto,
    channel=ExpenseApprovalChannel,
    deps=[SlackRecorder],
)
class BookExpenseTool(Records[SlackRecorder], ToolHandler[ExpenseDto, DeskDoneDto]):
    async def run(self, args: ExpenseDto) -> DeskDoneDto:
        self.recorded.runs.append(f"expense {args.purpose} {args.amount}")
        return DeskDoneDto(status=f"booked {args.purpose}")


def _agent(name: str, **options: Any) -> Any:
    return agent(
        name=name,
        description=f"The {name}",
        prompt="Do what is asked.",
        model="test/model",
        tools=[RefundCardTool, BookExpenseTool, LargeRefundTool],
        output=WorkflowFinishTextDto,
        **options,
    )


@_agent("refund-agent")
class RefundAgent: ...


@_agent("second-refund-agent", max_validation_attempts=0)
class SecondRefundAgent: ...


@join(name="refunds-join", description="Both desks' answers", output=WorkflowFinishTextDto)
class RefundsJoin(JoinHandler[WorkflowFinishTextDto]):
    def join(self, input: JoinInput) -> WorkflowFinishTextDto:
        texts = [
            r.output.text for r in input.results if isinstance(r.output, WorkflowFinishTextDto)
        ]
        return WorkflowFinishTextDto(text=" | ".join(texts))


@join(name="recover-join", description="Says the launch failed", output=WorkflowFinishTextDto)
class RecoverJoin(JoinHandler[WorkflowFinishTextDto]):
    def join(self, input: JoinInput) -> WorkflowFinishTextDto:
        return WorkflowFinishTextDto(text="a refund desk failed")


@workflow(
    name="refund-workflow",
    version="1",
    flow=[
        start(OfficeWorkflowStart)
        .returns(WorkflowStartTextDto)
        .to_agent(RefundAgent)
        .to_finish(OfficeWorkflowFinish)
    ],
)
class RefundWorkflow: ...


@workflow(
    name="two-desks-workflow",
    version="1",
    flow=[
        start(OfficeWorkflowStart)
        .returns(WorkflowStartTextDto)
        .to_parallel(RefundAgent, SecondRefundAgent)
        .join(RefundsJoin)
        .on_join_error(AgentFailedError, RecoverJoin)
        .to_finish(OfficeWorkflowFinish)
    ],
)
class TwoDesksWorkflow: ...


@application(
    name="slack-application",
    workflows=[RefundWorkflow, TwoDesksWorkflow],
    channels=[
        SlackRefundApprovalChannel,
        SlackLeadRefundApprovalChannel,
        SlackExpenseApprovalChannel,
        SlackLargeRefundApprovalChannel,
    ],
    # The workspace from SLACK_BOT_TOKEN and SLACK_API_URL (the tests' fake Slack).
    dependencies=[
        provide(SlackWorkspace, factory=SlackWorkspace.from_env),
        provide(SlackRecorder),
    ],
)
class SlackApplication: ...
