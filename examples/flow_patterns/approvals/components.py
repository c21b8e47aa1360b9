"""The office desk with approvals: returning a deposit and booking an expense each need a yes.

Both tools name the built-in `TerminalUserChannel`, so both calls of one model turn pause at
once, and the thread's owner answers each in the terminal by its pause id.
"""

from __future__ import annotations

from pydantic import BaseModel

from agboss import (
    ExecutionPauseEvent,
    TerminalUserChannel,
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


class DepositReturnDto(BaseModel):
    """A lease whose deposit is returned."""

    lease_id: str


class ExpenseDto(BaseModel):
    """An expense to book."""

    purpose: str
    amount: float


class DeskDoneDto(BaseModel):
    """What a desk tool did."""

    status: str


@tool(
    name="return-deposit-tool",
    description="Returns the deposit of a lease",
    input=DepositReturnDto,
    output=DeskDoneDto,
    channel=TerminalUserChannel,
)
class ReturnDepositTool(ToolHandler[DepositReturnDto, DeskDoneDto]):
    """Returns a deposit, once approved."""

    async def run(self, args: DepositReturnDto) -> DeskDoneDto:
        return DeskDoneDto(status=f"returned the deposit of {args.lease_id}")


@tool(
    name="book-expense-tool",
    description="Books an expense with its purpose and amount in euros",
    input=ExpenseDto,
    output=DeskDoneDto,
    channel=TerminalUserChannel,
)
class BookExpenseTool(ToolHandler[ExpenseDto, DeskDoneDto]):
    """Books an expense, once approved."""

    async def run(self, args: ExpenseDto) -> DeskDoneDto:
        return DeskDoneDto(status=f"booked {args.purpose} ({args.amount:.2f} EUR)")


@agent(
    name="office-agent",
    description="Returns deposits and books expenses",
    prompt="You run an office desk. Do what is asked with your tools, then say what you did.",
    model="moonshotai/kimi-k2.6",
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
class OfficeApplication:
    """Says when the desk waits for answers (on_execution_pause)."""

    def on_execution_pause(self, event: ExecutionPauseEvent) -> None:
        print(f"… the desk waits for {len(event.pending)} answer(s)")
