"""The three reply interpreters of pauses.md: a refund halved by a model, a deposit read by a
decision model, and an owner's expense buttons read by code."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from agboss import (
    Budget,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    DecidedBy,
    ExecutionContext,
    PauseAnswerer,
    ReplyInterpretation,
    ReplyInterpreterHandler,
    ToolCallApprovalDecisionDto,
    ToolHandler,
    agent,
    application,
    channel,
    channel_role,
    provide,
    reply_interpreter,
    tool,
    workflow,
)
from agboss.interpreters import InterpreterInput
from tests.apps.office_parts import (
    DepositReturnDto,
    DeskDoneDto,
    ExpenseDto,
    office_flow,
)
from tests.apps.recorded import Recorder, Records


class RefundCardInputDto(BaseModel):
    order_id: str
    amount: float


@dataclass
class RepliesRecorder(Recorder):
    """What the replies application did in one test (`tests.apps.recorded`)."""

    runs: list[str] = field(default_factory=list)
    contexts: list[ExecutionContext] = field(default_factory=list)
    """The frame each expense reply was read in."""


@reply_interpreter(
    name="refund-reply-interpreter",
    description="Turns a manager's free-text reply into a refund decision",
    decided_by=DecidedBy.MODEL,
    model="moonshotai/kimi-k2.6",
    prompt="The manager answered a refund approval in free text. "
    "Decide approve / reject and any changed amount.",
)
class RefundReplyInterpreter: ...


@channel_role(
    name="refund-approval-channel",
    description="Approves card refunds",
    approves=RefundCardInputDto,
    answered_by=PauseAnswerer.CHANNEL,
    reply_interpreter=RefundReplyInterpreter,
)
class RefundApprovalChannel(ChannelOf[RefundCardInputDto]): ...


@reply_interpreter(
    name="deposit-reply-interpreter",
    description="Reads whether a clerk's reply approves a deposit return",
    decided_by=DecidedBy.MODEL,
    model="typesafe/jev-1.13",
    prompt="The clerk answered a deposit return.",
)
class DepositReplyInterpreter: ...


@channel_role(
    name="deposit-approval-channel",
    description="A clerk approves deposit returns",
    approves=DepositReturnDto,
    answered_by=PauseAnswerer.CHANNEL,
    reply_interpreter=DepositReplyInterpreter,
)
class DepositApprovalChannel(ChannelOf[DepositReturnDto]): ...


@reply_interpreter(
    name="expense-reply-interpreter",
    description="Reads an expense button's value",
    decided_by=DecidedBy.CODE,
    deps=[ExecutionContext, RepliesRecorder],
)
class ExpenseReplyInterpreter(ReplyInterpreterHandler[ExpenseDto]):
    def __init__(self, context: ExecutionContext, recorded: RepliesRecorder) -> None:
        self.context = context
        self.recorded = recorded

    def interpret(self, input: InterpreterInput[ExpenseDto]) -> ReplyInterpretation:
        self.recorded.contexts.append(self.context)
        value: Any = json.loads(input.reply)  # a text that is no JSON: a crash, unreadable
        if not isinstance(value, dict) or "approved" not in value:
            return ReplyInterpretation.not_understood(
                reason=f"not an expense button: {input.reply}"
            )
        return ReplyInterpretation.understood(
            ToolCallApprovalDecisionDto(approved=value["approved"] is True)
        )


@channel_role(
    name="expense-approval-channel",
    description="The thread's owner confirms an expense with two buttons",
    approves=ExpenseDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
    reply_interpreter=ExpenseReplyInterpreter,
)
class ExpenseApprovalChannel(ChannelOf[ExpenseDto]): ...


@channel(name="slack-refund-approval-channel", description="Asks a manager in Slack")
class SlackRefundApprovalChannel(RefundApprovalChannel):
    async def send(self, ask: ChannelAsk[RefundCardInputDto]) -> ChannelOutcome:
        return ChannelOutcome.await_reply()


@channel(name="desk-deposit-approval-channel", description="Asks the clerk on duty")
class DeskDepositApprovalChannel(DepositApprovalChannel):
    async def send(self, ask: ChannelAsk[DepositReturnDto]) -> ChannelOutcome:
        return ChannelOutcome.await_reply()


@channel(name="button-expense-approval-channel", description="Shows the owner two buttons")
class ButtonExpenseApprovalChannel(ExpenseApprovalChannel):
    async def send(self, ask: ChannelAsk[ExpenseDto]) -> ChannelOutcome:
        return ChannelOutcome.await_reply()


@tool(
    name="refund-card-tool",
    description="Refunds a card payment",
    input=RefundCardInputDto,
    output=DeskDoneDto,
    channel=RefundApprovalChannel,
    deps=[RepliesRecorder],
)
class RefundCardTool(Records[RepliesRecorder], ToolHandler[RefundCardInputDto, DeskDoneDto]):
    async def run(self, args: RefundCardInputDto) -> DeskDoneDto:
        self.recorded.runs.append(f"refund {args.order_id} {args.amount}")
        return DeskDoneDto(status=f"refunded {args.amount} on {args.order_id}")


@tool(
    name="return-deposit-tool",
    description="Returns a deposit",
    input=DepositReturnDto,
    output=DeskDoneDto,
    channel=DepositApprovalChannel,
    deps=[RepliesRecorder],
)
class ReturnDepositTool(Records[RepliesRecorder], ToolHandler[DepositReturnDto, DeskDoneDto]):
    async def run(self, args: DepositReturnDto) -> DeskDoneDto:
        self.recorded.runs.append(f"return-deposit {args.lease_id}")
        return DeskDoneDto(status=f"returned the deposit of {args.lease_id}")


@tool(
    name="book-expense-tool",
    description="Books an expense",
    input=ExpenseDto,
    output=DeskDoneDto,
    channel=ExpenseApprovalChannel,
    deps=[RepliesRecorder],
)
class BookExpenseTool(Records[RepliesRecorder], ToolHandler[ExpenseDto, DeskDoneDto]):
    async def run(self, args: ExpenseDto) -> DeskDoneDto:
        self.recorded.runs.append(f"book-expense {args.purpose}")
        return DeskDoneDto(status=f"booked {args.purpose}")


@agent(
    name="office-agent",
    description="Refunds, returns deposits and books expenses",
    prompt="Do what is asked.",
    model="moonshotai/kimi-k2.6",
    tools=[RefundCardTool, ReturnDepositTool, BookExpenseTool],
)
class OfficeAgent: ...


FLOW = office_flow(OfficeAgent)


@workflow(name="office-workflow", version="1.0.0", flow=FLOW)
class OfficeWorkflow: ...


@workflow(name="tight-office-workflow", version="1.0.0", flow=FLOW, budget=Budget(tokens=1))
class TightOfficeWorkflow: ...


CHANNELS = [SlackRefundApprovalChannel, DeskDepositApprovalChannel, ButtonExpenseApprovalChannel]


@application(
    name="office-application",
    workflows=[OfficeWorkflow, TightOfficeWorkflow],
    channels=CHANNELS,
    dependencies=[provide(RepliesRecorder)],
)
class OfficeApplication: ...
