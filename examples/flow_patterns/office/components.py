"""The office application of the spec (python-api.md), without approval channels."""

from __future__ import annotations

from agboss import (
    ToolHandler,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
    agent,
    application,
    start,
    tool,
    workflow,
    workflow_finish,
    workflow_start,
)
from examples.flow_patterns.desk_dtos import DepositReturnDto, DeskDoneDto, ExpenseDto

MODEL = "moonshotai/kimi-k2.6"


@tool(
    name="return-deposit-tool",
    description="Returns the deposit of a lease",
    input=DepositReturnDto,
    output=DeskDoneDto,
)
class ReturnDepositTool(ToolHandler[DepositReturnDto, DeskDoneDto]):
    """Returns a deposit (here: says it did)."""

    async def run(self, args: DepositReturnDto) -> DeskDoneDto:
        return DeskDoneDto(status=f"returned the deposit of {args.lease_id}")


@tool(
    name="book-expense-tool",
    description="Books an expense with its purpose and amount in euros",
    input=ExpenseDto,
    output=DeskDoneDto,
)
class BookExpenseTool(ToolHandler[ExpenseDto, DeskDoneDto]):
    """Books an expense (here: says it did)."""

    async def run(self, args: ExpenseDto) -> DeskDoneDto:
        return DeskDoneDto(status=f"booked {args.purpose} ({args.amount:.2f} EUR)")


@agent(
    name="office-agent",
    description="Returns deposits and books expenses",
    prompt="You run an office desk. Do what is asked with your tools, then say what you did.",
    model=MODEL,
    tools=[ReturnDepositTool, BookExpenseTool],
)
class OfficeAgent: ...


@workflow_start(name="office-workflow-start", description="A request", input=WorkflowStartTextDto)
class OfficeWorkflowStart: ...


@workflow_finish(
    name="office-workflow-finish", description="The answer", output=WorkflowFinishTextDto
)
class OfficeWorkflowFinish: ...


@workflow(
    name="office-workflow",
    version="1.0.0",
    flow=[
        start(OfficeWorkflowStart)
        .returns(WorkflowStartTextDto)
        .to_agent(OfficeAgent)
        .to_finish(OfficeWorkflowFinish),
    ],
)
class OfficeWorkflow: ...


@application(name="office-application", workflows=[OfficeWorkflow])
class OfficeApplication: ...
