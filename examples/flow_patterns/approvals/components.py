"""The office desk with approvals: returning a deposit and booking an expense each need a yes.

The deposit names the built-in `TerminalUserChannel`; the expense names a role whose terminal
implementation also accepts the owner's own words, read by a reply interpreter on a model. Both
calls of one model turn pause at once, and the thread's owner answers each by its pause id.

The deposit goes back to an IBAN, which a PII rule keeps from the model (it reads a token,
``<IBAN_1>``) and from the terminal (it shows ``****3000``); the tool gets the real one.
"""

from __future__ import annotations

from agboss import (
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    DecidedBy,
    ExecutionPauseEvent,
    JoinHandler,
    JoinInput,
    PauseAnswerer,
    PiiKind,
    PiiRule,
    TerminalUserChannel,
    ToolHandler,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
    agent,
    application,
    channel,
    channel_role,
    join,
    replace_with_token,
    reply_interpreter,
    start,
    tool,
    workflow,
    workflow_finish,
    workflow_start,
)
from examples.flow_patterns.desk_dtos import DepositRefundDto, DeskDoneDto, ExpenseDto

MODEL = "moonshotai/kimi-k2.6"


@reply_interpreter(
    name="expense-reply-interpreter",
    description="Reads the owner's own words about an expense",
    decided_by=DecidedBy.MODEL,
    model=MODEL,
    prompt="The owner answered an expense approval in their own words. Decide approve or "
    "reject (with their reason), and any amount they changed.",
)
class ExpenseReplyInterpreter: ...


@channel_role(
    name="expense-approval-channel",
    description="The thread's owner approves expenses",
    approves=ExpenseDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
    reply_interpreter=ExpenseReplyInterpreter,
)
class ExpenseApprovalChannel(ChannelOf[ExpenseDto]): ...


@channel(name="terminal-expense-approval-channel", description="Asks the owner in the terminal")
class TerminalExpenseApprovalChannel(ExpenseApprovalChannel):
    """Shows the expense in the terminal; the owner answers by the pause id."""

    def send(self, ask: ChannelAsk[ExpenseDto]) -> ChannelOutcome:
        expense = ask.value.arguments
        print(
            f"? {ask.agent} asks to book {expense.purpose} for {expense.amount:.2f} EUR "
            "(answer in your own words if you like)",
            flush=True,
        )
        return ChannelOutcome.await_reply()


@tool(
    name="return-deposit-tool",
    description="Pays the deposit of a lease back to an IBAN",
    input=DepositRefundDto,
    output=DeskDoneDto,
    channel=TerminalUserChannel,
)
class ReturnDepositTool(ToolHandler[DepositRefundDto, DeskDoneDto]):
    """Returns a deposit, once approved (to the real IBAN: tools never see a token)."""

    async def run(self, args: DepositRefundDto) -> DeskDoneDto:
        return DeskDoneDto(status=f"returned the deposit of {args.lease_id} to {args.iban}")


@tool(
    name="book-expense-tool",
    description="Books an expense with its purpose and amount in euros",
    input=ExpenseDto,
    output=DeskDoneDto,
    channel=ExpenseApprovalChannel,
)
class BookExpenseTool(ToolHandler[ExpenseDto, DeskDoneDto]):
    """Books an expense, once approved."""

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


@agent(
    name="deposit-desk-agent",
    description="Returns deposits",
    prompt="You return deposits. Do what is asked with your tool, then say what you did.",
    model=MODEL,
    tools=[ReturnDepositTool],
    output=WorkflowFinishTextDto,
)
class DepositDeskAgent: ...


@agent(
    name="expense-desk-agent",
    description="Books expenses",
    prompt="You book expenses. Do what is asked with your tool, then say what you did.",
    model=MODEL,
    tools=[BookExpenseTool],
    output=WorkflowFinishTextDto,
)
class ExpenseDeskAgent: ...


@join(
    name="desk-join", description="Puts both desks' answers together", output=WorkflowFinishTextDto
)
class DeskJoin(JoinHandler[WorkflowFinishTextDto]):
    """Both desks' answers, in order."""

    def join(self, input: JoinInput) -> WorkflowFinishTextDto:
        texts = [
            r.output.text for r in input.results if isinstance(r.output, WorkflowFinishTextDto)
        ]
        return WorkflowFinishTextDto(text=" | ".join(texts))


@workflow(
    name="parallel-office-workflow",
    version="1.0.0",
    flow=[
        start(OfficeWorkflowStart)
        .returns(WorkflowStartTextDto)
        .to_parallel(DepositDeskAgent, ExpenseDeskAgent)
        .join(DeskJoin)
        .to_finish(OfficeWorkflowFinish),
    ],
)
class ParallelOfficeWorkflow: ...


@application(
    name="office-application",
    workflows=[OfficeWorkflow, ParallelOfficeWorkflow],
    channels=[TerminalExpenseApprovalChannel],
    pii=[PiiRule(PiiKind.IBAN, replace_with_token())],
)
class OfficeApplication:
    """Says when the desk waits for answers it was not waiting for before
    (on_execution_pause): the answers given meanwhile are said by whoever gave them."""

    def __init__(self) -> None:
        self.seen: set[tuple[str, str | None]] = set()

    def on_execution_pause(self, event: ExecutionPauseEvent) -> None:
        asked = {(pause.ask.call_id, pause.pause_id) for pause in event.pending}
        if asked - self.seen:
            print(f"… the desk waits for {len(event.pending)} answer(s)")
        self.seen |= asked
