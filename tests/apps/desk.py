"""The office application of python-api.md with its approval channels, as the pause tests use it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from agboss import (
    AutoApproveChannel,
    AutoRejectChannel,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    ChannelWithdrawal,
    DecidedBy,
    ExecutionContext,
    ExecutionPauseEvent,
    ExecutionResumeEvent,
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


@dataclass
class DeskRecorder(Recorder):
    """What the desk application did in one test (`tests.apps.recorded`)."""

    runs: list[str] = field(default_factory=list)
    """Every tool run, in order."""
    events: list[Any] = field(default_factory=list)
    """Every pause and resume event, in order."""
    sent: list[str] = field(default_factory=list)
    """What the desk channel was sent and withdrew, in order."""


@channel_role(
    name="deposit-approval-channel",
    description="A clerk approves deposit returns",
    approves=DepositReturnDto,
    answered_by=PauseAnswerer.CHANNEL,
)
class DepositApprovalChannel(ChannelOf[DepositReturnDto]): ...


@reply_interpreter(
    name="expense-reply-interpreter",
    description="Reads an expense button's value",
    decided_by=DecidedBy.CODE,
)
class ExpenseReplyInterpreter(ReplyInterpreterHandler[ExpenseDto]):
    def interpret(self, input: InterpreterInput[ExpenseDto]) -> ReplyInterpretation:
        value = json.loads(input.reply)  # a text that is no JSON: a crash, read as unreadable
        if not isinstance(value, dict) or "approved" not in value:
            return ReplyInterpretation.not_understood(
                reason=f"not an expense button: {input.reply}"
            )
        return ReplyInterpretation.understood(
            ToolCallApprovalDecisionDto(
                approved=value["approved"] is True,
                override_arguments=value.get("override_arguments"),
            )
        )


@channel_role(
    name="expense-approval-channel",
    description="The thread's owner confirms an expense with two buttons",
    approves=ExpenseDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
    reply_interpreter=ExpenseReplyInterpreter,
)
class ExpenseApprovalChannel(ChannelOf[ExpenseDto]): ...


@channel(
    name="desk-deposit-approval-channel",
    description="Asks the clerk on duty",
    deps=[ExecutionContext, DeskRecorder],
)
class DeskDepositApprovalChannel(DepositApprovalChannel):
    def __init__(self, context: ExecutionContext, recorded: DeskRecorder) -> None:
        self.context = context
        self.recorded = recorded

    async def send(self, ask: ChannelAsk[DepositReturnDto]) -> ChannelOutcome:
        self.recorded.sent.append(
            f"send {ask.value.arguments.lease_id} {self.context.tenant.tenant_id}"
        )
        # What a channel keeps of the question it posted, given back to its withdraw.
        return ChannelOutcome.await_reply(reference=f"desk/{ask.value.arguments.lease_id}")

    async def withdraw(self, withdrawal: ChannelWithdrawal[DepositReturnDto]) -> None:
        self.recorded.sent.append(
            f"withdraw {withdrawal.value.arguments.lease_id} {withdrawal.resolution}"
        )


@channel(name="button-expense-approval-channel", description="Shows the owner two buttons")
class ButtonExpenseApprovalChannel(ExpenseApprovalChannel):
    async def send(self, ask: ChannelAsk[ExpenseDto]) -> ChannelOutcome:
        return ChannelOutcome.await_reply()


@channel_role(
    name="expense-lead-channel",
    description="The thread's owner, as the lead, approves what was handed over to them",
    approves=ExpenseDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
)
class ExpenseLeadChannel(ChannelOf[ExpenseDto]): ...


@channel(name="button-expense-lead-channel", description="Shows the lead two buttons")
class ButtonExpenseLeadChannel(ExpenseLeadChannel):
    async def send(self, ask: ChannelAsk[ExpenseDto]) -> ChannelOutcome:
        return ChannelOutcome.await_reply()


@tool(
    name="return-deposit-tool",
    description="Returns a deposit",
    input=DepositReturnDto,
    output=DeskDoneDto,
    channel=DepositApprovalChannel,
    timeout=timedelta(seconds=5),
    deps=[ExecutionContext, DeskRecorder],
)
class ReturnDepositTool(ToolHandler[DepositReturnDto, DeskDoneDto]):
    def __init__(self, context: ExecutionContext, recorded: DeskRecorder) -> None:
        self.context = context
        self.recorded = recorded

    async def run(self, args: DepositReturnDto) -> DeskDoneDto:
        self.recorded.runs.append(f"return-deposit {args.lease_id} as {self.context.owner_id}")
        return DeskDoneDto(status=f"returned the deposit of {args.lease_id}")


@tool(
    name="book-expense-tool",
    description="Books an expense",
    input=ExpenseDto,
    output=DeskDoneDto,
    channel=ExpenseApprovalChannel,
    deps=[DeskRecorder],
)
class BookExpenseTool(Records[DeskRecorder], ToolHandler[ExpenseDto, DeskDoneDto]):
    async def run(self, args: ExpenseDto) -> DeskDoneDto:
        self.recorded.runs.append(f"book-expense {args.purpose} {args.amount}")
        return DeskDoneDto(status=f"booked {args.purpose}")


@tool(
    name="stamp-tool",
    description="Stamps a form at once",
    input=DepositReturnDto,
    output=DeskDoneDto,
    channel=AutoApproveChannel,
    deps=[DeskRecorder],
)
class StampTool(Records[DeskRecorder], ToolHandler[DepositReturnDto, DeskDoneDto]):
    async def run(self, args: DepositReturnDto) -> DeskDoneDto:
        self.recorded.runs.append(f"stamp {args.lease_id}")
        return DeskDoneDto(status="stamped")


@tool(
    name="shred-tool",
    description="Shreds a form",
    input=DepositReturnDto,
    output=DeskDoneDto,
    channel=AutoRejectChannel,
    deps=[DeskRecorder],
)
class ShredTool(Records[DeskRecorder], ToolHandler[DepositReturnDto, DeskDoneDto]):
    async def run(self, args: DepositReturnDto) -> DeskDoneDto:
        self.recorded.runs.append(f"shred {args.lease_id}")
        return DeskDoneDto(status="shredded")


@tool(
    name="look-up-tool",
    description="Looks a lease up",
    input=DepositReturnDto,
    output=DeskDoneDto,
    deps=[DeskRecorder],
)
class LookUpTool(Records[DeskRecorder], ToolHandler[DepositReturnDto, DeskDoneDto]):
    async def run(self, args: DepositReturnDto) -> DeskDoneDto:
        self.recorded.runs.append(f"look-up {args.lease_id}")
        return DeskDoneDto(status=f"{args.lease_id} is a flat")


@agent(
    name="office-agent",
    description="Returns deposits and books expenses",
    prompt="Do what is asked.",
    model="moonshotai/kimi-k2.6",
    tools=[ReturnDepositTool, BookExpenseTool, StampTool, ShredTool, LookUpTool],
)
class OfficeAgent: ...


@workflow(
    name="office-workflow",
    version="1.0.0",
    flow=office_flow(OfficeAgent),
)
class OfficeWorkflow: ...


@application(
    name="office-application",
    workflows=[OfficeWorkflow],
    channels=[DeskDepositApprovalChannel, ButtonExpenseApprovalChannel, ButtonExpenseLeadChannel],
    pause_record_retention=timedelta(hours=24),
    dependencies=[provide(DeskRecorder)],
    deps=[DeskRecorder],
)
class OfficeApplication(Records[DeskRecorder]):
    async def on_execution_pause(self, event: ExecutionPauseEvent) -> None:
        self.recorded.events.append(event)

    def on_execution_resume(self, event: ExecutionResumeEvent) -> None:
        self.recorded.events.append(event)
