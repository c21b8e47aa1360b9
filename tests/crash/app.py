"""The application the crash harness runs: a per-item launch under FailFast whose tool, channel
sends and withdraws are written to a file (``AGBOSS_TEST_RUNS``) by the process that ran them."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel

from agboss import (
    AgentFailedError,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    ChannelWithdrawal,
    JoinHandler,
    JoinInput,
    PauseAnswerer,
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


@channel(name="crash-inbox-channel", description="Posts to an inbox")
class CrashInboxChannel(CrashApprovalChannel):
    async def send(self, ask: ChannelAsk[ItemDto]) -> ChannelOutcome:
        note(f"send {ask.value.arguments.item_id}")
        return ChannelOutcome.await_reply()

    async def withdraw(self, withdrawal: ChannelWithdrawal[ItemDto]) -> None:
        note(f"withdraw {withdrawal.value.arguments.item_id}")


@tool(
    name="crash-item-tool",
    description="Handles an item",
    input=ItemDto,
    output=DoneDto,
    channel=CrashApprovalChannel,
)
class CrashItemTool(ToolHandler[ItemDto, DoneDto]):
    def run(self, args: ItemDto) -> DoneDto:
        note(f"tool {args.item_id}")
        return DoneDto(status=f"handled {args.item_id}")


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


@workflow(
    name="crash-workflow",
    version="1",
    flow=[
        start(CrashStart)
        .returns(ItemsDto)
        .to_each(CrashItemAgent, over="items")
        .join(CrashCountJoin)
        .on_join_error(AgentFailedError, CrashRecoverJoin)
        .to_finish(CrashFinish)
    ],
)
class CrashWorkflow: ...


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


@application(
    name="crash-application",
    workflows=[CrashWorkflow, CrashChildrenWorkflow],
    channels=[CrashInboxChannel],
)
class CrashApplication: ...


def model(request: ChatRequest) -> ChatResponse:
    """Calls the tool for its item, then answers (invalidly for `BOOM`)."""
    results = [m.content for m in request.messages if m.role is MessageRole.TOOL]
    if results:
        arguments = "{}" if BOOM in results[-1] else json.dumps({"status": "ok"})
        return ChatResponse(tool_calls=(ToolCall(id="a", name=ANSWER_TOOL, arguments=arguments),))
    item = next(m.content for m in request.messages if m.role is MessageRole.USER)
    return ChatResponse(tool_calls=(ToolCall(id="c", name="crash-item-tool", arguments=item),))


ITEMS = ItemsDto(items=[ItemDto(item_id=f"i{n}") for n in range(3)])
THREAD = "crash-thread"
