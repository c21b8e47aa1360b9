"""The office application of the spec, as the tests use it (no channels yet)."""

from __future__ import annotations

from dataclasses import dataclass, field

from agboss import (
    ExecutionContext,
    ToolError,
    ToolHandler,
    agent,
    application,
    provide,
    tool,
    workflow,
)
from tests.apps.office_parts import (
    DepositReturnDto,
    DeskDoneDto,
    ExpenseDto,
    office_flow,
)
from tests.apps.recorded import Recorder, Records


@dataclass
class OfficeRecorder(Recorder):
    """What the office application's tools did in one test (`tests.apps.recorded`)."""

    runs: list[str] = field(default_factory=list)
    """Every tool run, in order."""


@tool(
    name="return-deposit-tool",
    description="Returns a deposit",
    input=DepositReturnDto,
    output=DeskDoneDto,
    deps=[ExecutionContext, OfficeRecorder],
)
class ReturnDepositTool(ToolHandler[DepositReturnDto, DeskDoneDto]):
    def __init__(self, context: ExecutionContext, recorded: OfficeRecorder) -> None:
        self.context = context
        self.recorded = recorded

    async def run(self, args: DepositReturnDto) -> DeskDoneDto:
        assert self.context.step is not None
        self.recorded.runs.append(
            f"return-deposit {args.lease_id} {self.context.step.idempotency_key}"
        )
        return DeskDoneDto(status=f"returned the deposit of {args.lease_id}")


@tool(
    name="book-expense-tool",
    description="Books an expense",
    input=ExpenseDto,
    output=DeskDoneDto,
    deps=[OfficeRecorder],
)
class BookExpenseTool(Records[OfficeRecorder], ToolHandler[ExpenseDto, DeskDoneDto]):
    def run(self, args: ExpenseDto) -> DeskDoneDto:  # a sync tool: runs in a worker thread
        self.recorded.runs.append(f"book-expense {args.purpose}")
        if args.amount < 0:
            raise ToolError("an expense cannot be negative")
        return DeskDoneDto(status=f"booked {args.purpose}")


@agent(
    name="office-agent",
    description="Returns deposits and books expenses",
    prompt="Do what is asked.",
    model="moonshotai/kimi-k2.6",
    tools=[ReturnDepositTool, BookExpenseTool],
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
    dependencies=[provide(OfficeRecorder)],
)
class OfficeApplication: ...
