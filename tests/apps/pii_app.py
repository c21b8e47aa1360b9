"""An application whose refunds carry an IBAN, under PII rules."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Annotated

from pydantic import BaseModel

from agboss import (
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    ChannelReminder,
    DecidedBy,
    ExecutionPauseEvent,
    PauseAnswerer,
    Pii,
    PiiKind,
    PiiRule,
    Remind,
    ToolHandler,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
    agent,
    application,
    block_with_refusal,
    channel,
    channel_role,
    mask,
    provide,
    replace_with_token,
    reply_interpreter,
    start,
    tool,
    workflow,
    workflow_finish,
    workflow_start,
)
from tests.apps.recorded import Recorder, Records

IBAN = "DE89370400440532013000"
"""A valid IBAN (check digits and German format)."""
OTHER_IBAN = "GB82WEST12345698765432"
EMAIL = "ada.lovelace@example.org"
CARD = "4111 1111 1111 1111"
"""A test card number whose Luhn digit is valid."""

REMIND = timedelta(hours=4)
"""When the owner is reminded of a refund nobody answered."""


class RefundDto(BaseModel):
    order_id: str
    iban: Annotated[str, Pii(kind=PiiKind.IBAN)]


class RefundedDto(BaseModel):
    status: str
    iban: Annotated[str, Pii(kind=PiiKind.IBAN)]


class CustomerDto(BaseModel):
    order_id: str
    iban: Annotated[str, Pii(kind=PiiKind.IBAN)]
    note: str = ""
    name: Annotated[str, Pii(kind="customer-name")] = ""
    """A kind of the application's own: no detector finds it, only its marked values."""


@dataclass
class PiiRecorder(Recorder):
    """What the PII application did in one test (`tests.apps.recorded`)."""

    runs: list[str] = field(default_factory=list)
    asked: list[ChannelAsk[RefundDto]] = field(default_factory=list)
    reminded: list[ChannelReminder[RefundDto]] = field(default_factory=list)
    events: list[ExecutionPauseEvent] = field(default_factory=list)
    on_file: str = OTHER_IBAN
    """Set by a test: the IBAN the lookup tool finds."""


@reply_interpreter(
    name="refund-reply-interpreter",
    description="Reads a manager's words",
    decided_by=DecidedBy.MODEL,
    model="test/interpreter",
    prompt="Read the manager's reply.",
)
class RefundReplyInterpreter: ...


@channel_role(
    name="refund-approval-channel",
    description="The owner approves a refund",
    approves=RefundDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
    reply_interpreter=RefundReplyInterpreter,
    ladder=[Remind(after=REMIND)],
)
class RefundApprovalChannel(ChannelOf[RefundDto]): ...


@channel(name="desk-refund-approval-channel", description="Asks at the desk", deps=[PiiRecorder])
class DeskRefundApprovalChannel(Records[PiiRecorder], RefundApprovalChannel):
    async def send(self, ask: ChannelAsk[RefundDto]) -> ChannelOutcome:
        self.recorded.asked.append(ask)
        return ChannelOutcome.await_reply()

    async def remind(self, reminder: ChannelReminder[RefundDto]) -> None:
        self.recorded.reminded.append(reminder)


@tool(
    name="refund-tool",
    description="Refunds an order to an IBAN",
    input=RefundDto,
    output=RefundedDto,
    channel=RefundApprovalChannel,
    deps=[PiiRecorder],
)
class RefundTool(Records[PiiRecorder], ToolHandler[RefundDto, RefundedDto]):
    async def run(self, args: RefundDto) -> RefundedDto:
        self.recorded.runs.append(f"refund {args.order_id} to {args.iban}")
        return RefundedDto(status="refunded", iban=args.iban)


@tool(
    name="lookup-tool",
    description="Finds an order's IBAN",
    input=RefundDto,
    output=RefundedDto,
    deps=[PiiRecorder],
)
class LookupTool(Records[PiiRecorder], ToolHandler[RefundDto, RefundedDto]):
    async def run(self, args: RefundDto) -> RefundedDto:
        self.recorded.runs.append(f"lookup {args.order_id} {args.iban}")
        return RefundedDto(status="on file", iban=self.recorded.on_file)


@agent(
    name="refund-agent",
    description="Refunds",
    prompt="Refund the customer.",
    model="test/model",
    tools=[RefundTool, LookupTool],
    input=CustomerDto,
    output=WorkflowFinishTextDto,
)
class RefundAgent: ...


@agent(
    name="text-agent",
    description="Reads a customer's message",
    prompt="Answer the customer.",
    model="test/model",
    tools=[RefundTool],
)
class TextAgent: ...


@workflow_start(name="customer-workflow-start", description="s", input=CustomerDto)
class CustomerStart: ...


@workflow_start(name="message-workflow-start", description="s", input=WorkflowStartTextDto)
class MessageStart: ...


@workflow_finish(name="refund-workflow-finish", description="f", output=WorkflowFinishTextDto)
class RefundFinish: ...


@workflow(
    name="refund-workflow",
    version="1",
    flow=[start(CustomerStart).returns(CustomerDto).to_agent(RefundAgent).to_finish(RefundFinish)],
)
class RefundWorkflow: ...


@workflow(
    name="message-workflow",
    version="1",
    flow=[
        start(MessageStart)
        .returns(WorkflowStartTextDto)
        .to_agent(TextAgent)
        .to_finish(RefundFinish)
    ],
)
class MessageWorkflow: ...


@workflow(
    name="strict-message-workflow",
    version="1",
    flow=[
        start(MessageStart)
        .returns(WorkflowStartTextDto)
        .to_agent(TextAgent)
        .to_finish(RefundFinish)
    ],
    pii=[PiiRule(PiiKind.EMAIL, block_with_refusal())],  # replaces the application's rule
)
class StrictMessageWorkflow: ...


RULES = [
    PiiRule(PiiKind.IBAN, replace_with_token()),
    PiiRule(PiiKind.EMAIL, mask()),
    PiiRule(PiiKind.CARD_NUMBER, block_with_refusal()),
    PiiRule(PiiKind.PHONE, mask()),
    PiiRule("customer-name", mask(), detect=False),
]


@application(
    name="pii-application",
    workflows=[RefundWorkflow, MessageWorkflow, StrictMessageWorkflow],
    channels=[DeskRefundApprovalChannel],
    pii=RULES,
    dependencies=[provide(PiiRecorder)],
    deps=[PiiRecorder],
)
class PiiApplication(Records[PiiRecorder]):
    def on_execution_pause(self, event: ExecutionPauseEvent) -> None:
        self.recorded.events.append(event)
