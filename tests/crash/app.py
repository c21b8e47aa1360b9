"""The application the crash harness runs: a per-item launch under FailFast whose tool, channel
sends and withdraws are written to a file (``AGBOSS_TEST_RUNS``) by the process that ran them."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agboss import (
    AgentFailedError,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    ChannelReminder,
    ChannelWithdrawal,
    Escalate,
    ExecutionContext,
    JoinHandler,
    JoinInput,
    OnInterrupted,
    PauseAnswerer,
    PendingCall,
    Quorum,
    Remind,
    ToolHandler,
    agent,
    application,
    channel,
    channel_role,
    join,
    start,
    tool,
    workflow,
    workflow_finish,
    workflow_start,
)
from agboss.agents import ANSWER_TOOL
from agboss.errors import ModelProviderError
from agboss.mcp import McpArguments, McpInputRequest
from agboss.models import ChatRequest, ChatResponse, MessageRole, ToolCall

BOOM = "boom"
"""An item whose agent, once its tool ran, answers invalidly: the branch fails (FailFast)."""


class ItemDto(BaseModel):
    item_id: str


class ItemsDto(BaseModel):
    items: list[ItemDto]


class DoneDto(BaseModel):
    status: str


class CountDto(BaseModel):
    done: int
    note: str = ""


def note(line: str) -> None:
    """Appends what this process did to the runs file."""
    with Path(os.environ["AGBOSS_TEST_RUNS"]).open("a") as runs:
        runs.write(f"{line} pid={os.getpid()}\n")


@channel_role(
    name="crash-approval-channel",
    description="Approves an item",
    approves=ItemDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
)
class CrashApprovalChannel(ChannelOf[ItemDto]): ...


class _Inbox:
    """Posts to an inbox: what it sent and withdrew is written to the runs file."""

    async def send(self, ask: ChannelAsk[ItemDto]) -> ChannelOutcome:
        note(f"send {ask.value.arguments.item_id} pause={ask.pause_id}")
        # What it posted, kept with the pause: a kill anywhere must not lose it.
        return ChannelOutcome.await_reply(reference=f"inbox/{ask.value.arguments.item_id}")

    async def withdraw(self, withdrawal: ChannelWithdrawal[ItemDto]) -> None:
        note(f"withdraw {withdrawal.value.arguments.item_id}@{withdrawal.reference}")

    async def remind(self, reminder: ChannelReminder[ItemDto]) -> None:
        item = reminder.value.arguments.item_id
        note(f"remind {item}#{reminder.reminder}@{reminder.reference}")


@channel(name="crash-inbox-channel", description="Posts to an inbox")
class CrashInboxChannel(_Inbox, CrashApprovalChannel): ...


VOTERS = ("u", "v", "w")
"""Who votes on a voted item's question; two approvals decide it."""


@channel_role(
    name="crash-voted-approval-channel",
    description="Two of three approve an item",
    approves=ItemDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
    approvals=Quorum(2, of=VOTERS),
)
class CrashVotedApprovalChannel(ChannelOf[ItemDto]): ...


@channel(name="crash-voted-inbox-channel", description="Posts to the voters' inbox")
class CrashVotedInboxChannel(_Inbox, CrashVotedApprovalChannel): ...


EXPIRY = timedelta(seconds=2)
"""How long the expiring role's questions wait: the harness lets them expire, unanswered."""


@channel_role(
    name="crash-expiring-approval-channel",
    description="Approves an item, or rejects it when nobody answered in time",
    approves=ItemDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
    expires_after=EXPIRY,
)
class CrashExpiringApprovalChannel(ChannelOf[ItemDto]): ...


@channel(name="crash-expiring-inbox-channel", description="Posts to an inbox")
class CrashExpiringInboxChannel(_Inbox, CrashExpiringApprovalChannel): ...


REMIND = timedelta(seconds=1)
"""When the reminded role reminds of a question: the harness lets that time pass first."""


@channel_role(
    name="crash-reminded-approval-channel",
    description="Approves an item, reminding whoever was asked",
    approves=ItemDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
    ladder=[Remind(after=REMIND)],
)
class CrashRemindedApprovalChannel(ChannelOf[ItemDto]): ...


@channel(name="crash-reminded-inbox-channel", description="Posts to an inbox, and reminds")
class CrashRemindedInboxChannel(_Inbox, CrashRemindedApprovalChannel): ...


@channel_role(
    name="crash-lead-approval-channel",
    description="The lead approves an item nobody else did",
    approves=ItemDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
)
class CrashLeadApprovalChannel(ChannelOf[ItemDto]): ...


class _LeadInbox:
    """Posts to the lead's inbox: its lines name the item as ``lead-<item>``."""

    async def send(self, ask: ChannelAsk[ItemDto]) -> ChannelOutcome:
        note(f"send lead-{ask.value.arguments.item_id} pause={ask.pause_id}")
        return ChannelOutcome.await_reply(reference=f"lead/{ask.value.arguments.item_id}")

    async def withdraw(self, withdrawal: ChannelWithdrawal[ItemDto]) -> None:
        note(f"withdraw lead-{withdrawal.value.arguments.item_id}@{withdrawal.reference}")


@channel(name="crash-lead-inbox-channel", description="Posts to the lead's inbox")
class CrashLeadInboxChannel(_LeadInbox, CrashLeadApprovalChannel): ...


DELEGATE = "d"
"""Whom the owner delegates their questions to (`App.delegate`) in the ``delegate`` phase."""

LEAD = "crash-lead-approval-channel"
"""The role a question is handed to (`App.reassign`) in the harness's ``reassign`` phase."""


@channel_role(
    name="crash-escalating-approval-channel",
    description="Approves an item, or asks the lead once its time passed",
    approves=ItemDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
    ladder=[Escalate(after=REMIND, to=CrashLeadApprovalChannel)],
)
class CrashEscalatingApprovalChannel(ChannelOf[ItemDto]): ...


@channel(name="crash-escalating-inbox-channel", description="Posts to an inbox")
class CrashEscalatingInboxChannel(_Inbox, CrashEscalatingApprovalChannel): ...


@tool(
    name="crash-item-tool",
    description="Handles an item",
    input=ItemDto,
    output=DoneDto,
    channel=CrashApprovalChannel,
    deps=[ExecutionContext],
    on_interrupted=OnInterrupted.RERUN,  # at least once, with the same key
)
class CrashItemTool(ToolHandler[ItemDto, DoneDto]):
    def __init__(self, context: ExecutionContext) -> None:
        self.context = context

    def run(self, args: ItemDto) -> DoneDto:
        note(f"tool {args.item_id} key={self.context.step.idempotency_key}")
        return DoneDto(status=f"handled {args.item_id}")


@tool(
    name="crash-guarded-item-tool",
    description="Handles an item, never twice",
    input=ItemDto,
    output=DoneDto,
    channel=CrashApprovalChannel,
    deps=[ExecutionContext],
    on_interrupted=OnInterrupted.FAIL,
)
class CrashGuardedItemTool(CrashItemTool):
    """The item tool's run, declared as a tool that must not run twice."""


@tool(
    name="crash-asked-item-tool",
    description="Handles an item; a person is asked before it runs again",
    input=ItemDto,
    output=DoneDto,
    channel=CrashApprovalChannel,
    deps=[ExecutionContext],
)
class CrashAskedItemTool(CrashItemTool):
    """The item tool's run with the default of a tool with a channel: ``ASK``."""


@agent(
    name="crash-asked-item-agent",
    description="Handles one item with a tool whose interrupted call is asked about",
    prompt="Handle it.",
    model="test/model",
    tools=[CrashAskedItemTool],
    input=ItemDto,
    output=DoneDto,
    max_validation_attempts=0,
)
class CrashAskedItemAgent: ...


@agent(
    name="crash-guarded-item-agent",
    description="Handles one item with a tool that must not run twice",
    prompt="Handle it.",
    model="test/model",
    tools=[CrashGuardedItemTool],
    input=ItemDto,
    output=DoneDto,
    max_validation_attempts=0,
)
class CrashGuardedItemAgent: ...


@tool(
    name="crash-expiring-item-tool",
    description="Handles an item, if approved in time",
    input=ItemDto,
    output=DoneDto,
    channel=CrashExpiringApprovalChannel,
    deps=[ExecutionContext],
    on_interrupted=OnInterrupted.RERUN,
)
class CrashExpiringItemTool(CrashItemTool):
    """The item tool's run, asked of a role whose questions expire."""


@tool(
    name="crash-reminded-item-tool",
    description="Handles an item, its question reminded of",
    input=ItemDto,
    output=DoneDto,
    channel=CrashRemindedApprovalChannel,
    deps=[ExecutionContext],
    on_interrupted=OnInterrupted.RERUN,
)
class CrashRemindedItemTool(CrashItemTool):
    """The item tool's run, asked of a role that reminds."""


@agent(
    name="crash-reminded-item-agent",
    description="Handles one item, whose question is reminded of",
    prompt="Handle it.",
    model="test/model",
    tools=[CrashRemindedItemTool],
    input=ItemDto,
    output=DoneDto,
    max_validation_attempts=0,
)
class CrashRemindedItemAgent: ...


@tool(
    name="crash-escalating-item-tool",
    description="Handles an item, its question escalated",
    input=ItemDto,
    output=DoneDto,
    channel=CrashEscalatingApprovalChannel,
    deps=[ExecutionContext],
    on_interrupted=OnInterrupted.RERUN,
)
class CrashEscalatingItemTool(CrashItemTool):
    """The item tool's run, asked of a role that escalates."""


@agent(
    name="crash-escalating-item-agent",
    description="Handles one item, whose question is escalated",
    prompt="Handle it.",
    model="test/model",
    tools=[CrashEscalatingItemTool],
    input=ItemDto,
    output=DoneDto,
    max_validation_attempts=0,
)
class CrashEscalatingItemAgent: ...


@agent(
    name="crash-expiring-item-agent",
    description="Handles one item, whose question expires",
    prompt="Handle it.",
    model="test/model",
    tools=[CrashExpiringItemTool],
    input=ItemDto,
    output=DoneDto,
    max_validation_attempts=0,
)
class CrashExpiringItemAgent: ...


@tool(
    name="crash-voted-item-tool",
    description="Handles an item, if two approve",
    input=ItemDto,
    output=DoneDto,
    channel=CrashVotedApprovalChannel,
    deps=[ExecutionContext],
    on_interrupted=OnInterrupted.RERUN,
)
class CrashVotedItemTool(CrashItemTool):
    """The item tool's run, asked of a role whose questions take two votes."""


@agent(
    name="crash-voted-item-agent",
    description="Handles one item, whose question two vote on",
    prompt="Handle it.",
    model="test/model",
    tools=[CrashVotedItemTool],
    input=ItemDto,
    output=DoneDto,
    max_validation_attempts=0,
)
class CrashVotedItemAgent: ...


@agent(
    name="crash-item-agent",
    description="Handles one item",
    prompt="Handle it.",
    model="test/model",
    tools=[CrashItemTool],
    input=ItemDto,
    output=DoneDto,
    max_validation_attempts=0,
)
class CrashItemAgent: ...


@tool(
    name="crash-filed-item-tool",
    description="Handles an item (the next build's name for it)",
    input=ItemDto,
    output=DoneDto,
    channel=CrashApprovalChannel,
    deps=[ExecutionContext],
    on_interrupted=OnInterrupted.RERUN,
)
class CrashFiledItemTool(CrashItemTool):
    """The item tool's run, under the name the next build gives it."""


@agent(
    name="crash-item-agent",
    description="Handles one item",
    prompt="Handle it.",
    model="test/model",
    tools=[CrashFiledItemTool],
    input=ItemDto,
    output=DoneDto,
    max_validation_attempts=0,
)
class CrashFilingItemAgent:
    """The next build's item agent: its tool renamed."""


def filed(call: PendingCall) -> PendingCall:
    """The next build's continuation: an item call, made by the tool's new name."""
    if call.tool != "crash-item-tool":
        return call
    return replace(call, tool="crash-filed-item-tool")


@join(name="crash-count-join", description="Counts", output=CountDto)
class CrashCountJoin(JoinHandler[CountDto]):
    def join(self, input: JoinInput) -> CountDto:
        note("join")
        return CountDto(done=len(input.outputs))


@join(name="crash-recover-join", description="Says what failed", output=CountDto)
class CrashRecoverJoin(JoinHandler[CountDto]):
    def join(self, input: JoinInput) -> CountDto:
        note("recover-join")
        return CountDto(done=len(input.outputs), note=type(input.error).__name__)


@workflow_start(name="crash-workflow-start", description="s", input=ItemsDto)
class CrashStart: ...


@workflow_finish(name="crash-workflow-finish", description="f", output=CountDto)
class CrashFinish: ...


def _crash_flow(item_agent: type[Any] = CrashItemAgent) -> list[Any]:
    return [
        start(CrashStart)
        .returns(ItemsDto)
        .to_each(item_agent, over="items")
        .join(CrashCountJoin)
        .on_join_error(AgentFailedError, CrashRecoverJoin)
        .to_finish(CrashFinish)
    ]


@workflow(name="crash-workflow", version="1", flow=_crash_flow())
class CrashWorkflow: ...


@workflow(name="crash-workflow", version="2", flow=_crash_flow())
class NextCrashWorkflow:
    """The next build's: a new version, which does not continue 1."""


@workflow(
    name="crash-workflow",
    version="2",
    flow=_crash_flow(CrashFilingItemAgent),
    continues=["1"],
    continuation=filed,
)
class FilingCrashWorkflow:
    """The next build's, which moves the trees of 1 to itself, their item calls renamed."""


@workflow(
    name="crash-guarded-workflow",
    version="1",
    flow=[
        start(CrashStart)
        .returns(ItemsDto)
        .to_each(CrashGuardedItemAgent, over="items")
        .join(CrashCountJoin)
        .on_join_error(AgentFailedError, CrashRecoverJoin)
        .to_finish(CrashFinish)
    ],
)
class CrashGuardedWorkflow: ...


@workflow(
    name="crash-asked-workflow",
    version="1",
    flow=[
        start(CrashStart)
        .returns(ItemsDto)
        .to_each(CrashAskedItemAgent, over="items")
        .join(CrashCountJoin)
        .on_join_error(AgentFailedError, CrashRecoverJoin)
        .to_finish(CrashFinish)
    ],
)
class CrashAskedWorkflow: ...


@workflow_start(name="crash-child-workflow-start", description="s", input=ItemDto)
class CrashChildStart: ...


@workflow_finish(name="crash-child-workflow-finish", description="f", output=DoneDto)
class CrashChildFinish: ...


@workflow(
    name="crash-child-workflow",
    version="1",
    flow=[
        start(CrashChildStart).returns(ItemDto).to_agent(CrashItemAgent).to_finish(CrashChildFinish)
    ],
)
class CrashChildWorkflow: ...


@workflow(
    name="crash-children-workflow",
    version="1",
    flow=[
        start(CrashStart)
        .returns(ItemsDto)
        .to_each_workflow(CrashChildWorkflow, over="items")
        .join(CrashCountJoin)
        .on_join_error(AgentFailedError, CrashRecoverJoin)
        .to_finish(CrashFinish)
    ],
)
class CrashChildrenWorkflow: ...


@workflow(
    name="crash-retry-workflow",
    version="1",
    flow=[
        start(CrashStart)
        .returns(ItemsDto)
        .to_each(CrashItemAgent, over="items")
        .join(CrashCountJoin)
        .to_finish(CrashFinish)
    ],
)
class CrashRetryWorkflow:
    """Per item under FailFast, with no join error handler: a branch whose model is down fails
    the tree (its siblings' questions withdrawn), which `App.retry` runs again."""


@workflow(
    name="crash-expiry-workflow",
    version="1",
    flow=[
        start(CrashStart)
        .returns(ItemsDto)
        .to_each(CrashExpiringItemAgent, over="items")
        .join(CrashCountJoin)
        .on_join_error(AgentFailedError, CrashRecoverJoin)
        .to_finish(CrashFinish)
    ],
)
class CrashExpiryWorkflow:
    """Per item, each question left to expire: its deadline rejects it (`OnExpiry.REJECT`)."""


@workflow(
    name="crash-ladder-workflow",
    version="1",
    flow=[
        start(CrashStart)
        .returns(ItemsDto)
        .to_each(CrashRemindedItemAgent, over="items")
        .join(CrashCountJoin)
        .to_finish(CrashFinish)
    ],
)
class CrashLadderWorkflow:
    """Per item, each question reminded of once its ladder's step is due, then answered."""


@workflow(
    name="crash-escalation-workflow",
    version="1",
    flow=[
        start(CrashStart)
        .returns(ItemsDto)
        .to_each(CrashEscalatingItemAgent, over="items")
        .join(CrashCountJoin)
        .to_finish(CrashFinish)
    ],
)
class CrashEscalationWorkflow:
    """Per item, each question asked of the lead once its ladder's step is due, then
    answered."""


@workflow(
    name="crash-voted-workflow",
    version="1",
    flow=[
        start(CrashStart)
        .returns(ItemsDto)
        .to_each(CrashVotedItemAgent, over="items")
        .join(CrashCountJoin)
        .to_finish(CrashFinish)
    ],
)
class CrashVotedWorkflow:
    """Per item, each question decided by two votes of three voters."""


@application(
    name="crash-application",
    workflows=[
        CrashWorkflow,
        CrashChildrenWorkflow,
        CrashGuardedWorkflow,
        CrashAskedWorkflow,
        CrashRetryWorkflow,
        CrashExpiryWorkflow,
        CrashLadderWorkflow,
        CrashEscalationWorkflow,
        CrashVotedWorkflow,
    ],
    channels=[
        CrashInboxChannel,
        CrashExpiringInboxChannel,
        CrashRemindedInboxChannel,
        CrashEscalatingInboxChannel,
        CrashLeadInboxChannel,
        CrashVotedInboxChannel,
    ],
)
class CrashApplication: ...


@application(name="crash-application", workflows=[NextCrashWorkflow], channels=[CrashInboxChannel])
class NextCrashApplication:
    """A build of the next version beside the old one (a rolling deploy): it moves none of the
    old one's trees."""


@application(
    name="crash-application", workflows=[FilingCrashWorkflow], channels=[CrashInboxChannel]
)
class FilingCrashApplication:
    """A build of the next version whose continuation moves the old one's trees to it."""


class ProviderDownError(Exception):
    """The model provider is down, past what its retries could wait (not tried again)."""


def busy(item: str) -> bool:
    """Whether the model provider answers the first item's closing call with a 503 that asks
    to wait a second (once: the flag file ``AGBOSS_TEST_BUSY`` names is removed as it does)."""
    flag = os.environ.get("AGBOSS_TEST_BUSY")
    if flag is None or '"i0"' not in item:
        return False
    try:
        Path(flag).unlink()
    except FileNotFoundError:
        return False
    return True


def down() -> bool:
    """Whether the model provider is down for an agent's closing call: while the file
    ``AGBOSS_TEST_DOWN`` names exists."""
    flag = os.environ.get("AGBOSS_TEST_DOWN")
    return flag is not None and Path(flag).exists()


def model(request: ChatRequest) -> ChatResponse:
    """Calls the tool for its item, then answers (invalidly for `BOOM`); the MCP agent erases
    a history, then answers."""
    results = [m.content for m in request.messages if m.role is MessageRole.TOOL]
    if any(tool.name == "erase_history" for tool in request.tools):
        if results:
            said = "erased" if "erased c1" in results[-1] else results[-1][:60]
            answer = json.dumps({"done": 1, "note": said})
            return ChatResponse(tool_calls=(ToolCall(id="a", name=ANSWER_TOOL, arguments=answer),))
        erase = json.dumps({"customer": "c1"})
        return ChatResponse(tool_calls=(ToolCall(id="e", name="erase_history", arguments=erase),))
    if results:
        if down():
            raise ProviderDownError("the model provider is down")
        asked = next(m.content for m in request.messages if m.role is MessageRole.USER)
        if busy(asked):
            raise ModelProviderError("busy", status=503, retryable=True, retry_after=1.0)
        arguments = "{}" if BOOM in results[-1] else json.dumps({"status": "ok"})
        return ChatResponse(tool_calls=(ToolCall(id="a", name=ANSWER_TOOL, arguments=arguments),))
    item = next(m.content for m in request.messages if m.role is MessageRole.USER)
    [name] = [tool.name for tool in request.tools if tool.name != ANSWER_TOOL]
    return ChatResponse(tool_calls=(ToolCall(id="c", name=name, arguments=item),))


ITEMS = ItemsDto(items=[ItemDto(item_id=f"i{n}") for n in range(3)])
THREAD = "crash-thread"


# ---- an MCP tool that asks a question mid-call (elicitation) -------------------------------

MCP_WORKFLOW = "crash-mcp-workflow"


@channel_role(
    name="crash-mcp-approval-channel",
    description="Answers what an MCP tool asks",
    approves=McpArguments,
    answered_by=PauseAnswerer.THREAD_OWNER,
)
class CrashMcpApprovalChannel(ChannelOf[McpArguments]): ...


@channel(name="crash-mcp-inbox-channel", description="Posts an MCP tool's questions")
class CrashMcpInboxChannel(CrashMcpApprovalChannel):
    async def send(self, ask: ChannelAsk[McpArguments]) -> ChannelOutcome:
        if not isinstance(ask.value.arguments, McpInputRequest):
            return ChannelOutcome.decided({"approved": True})  # the call itself: approved
        note("send question")
        return ChannelOutcome.await_reply()

    async def withdraw(self, withdrawal: ChannelWithdrawal[McpArguments]) -> None:
        note("withdraw question")


def crash_mcp_application() -> type[Any]:
    """An application whose agent erases a history on the MCP order desk, which asks first.

    Made per process: the desk (a stdio subprocess) notes its runs in this trial's runs file,
    and seals its question's state with a key every process shares.
    """
    from tests.apps.mcp_app import desk_named

    desk = desk_named(
        "crash-desk-mcp",
        {"AGBOSS_TEST_RUNS": os.environ["AGBOSS_TEST_RUNS"]},
        approvals={"erase_*": CrashMcpApprovalChannel},
        only=["erase_history"],
        on_interrupted=OnInterrupted.RERUN,  # these phases prove the questions' rounds
    )

    @agent(
        name="crash-mcp-agent",
        description="Erases a history",
        prompt="Erase it.",
        model="test/model",
        tools=[desk],
        input=ItemsDto,
        output=CountDto,
        max_validation_attempts=0,
    )
    class CrashMcpAgent: ...

    @workflow(
        name=MCP_WORKFLOW,
        version="1",
        flow=[start(CrashStart).returns(ItemsDto).to_agent(CrashMcpAgent).to_finish(CrashFinish)],
    )
    class CrashMcpWorkflow: ...

    @application(
        name="crash-mcp-application",
        workflows=[CrashMcpWorkflow],
        channels=[CrashMcpInboxChannel],
    )
    class CrashMcpApplication: ...

    return CrashMcpApplication
