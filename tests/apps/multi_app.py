"""A per-item application whose tool counts its runs in a file, for tests across processes."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel

from agboss import (
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
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


class ItemDto(BaseModel):
    item_id: str


class ItemsDto(BaseModel):
    items: list[ItemDto]


class DoneDto(BaseModel):
    status: str


class CountDto(BaseModel):
    done: int


@channel_role(
    name="item-approval-channel",
    description="Approves an item",
    approves=ItemDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
)
class ItemApprovalChannel(ChannelOf[ItemDto]): ...


@channel(name="inbox-item-approval-channel", description="Posts to an inbox")
class InboxItemApprovalChannel(ItemApprovalChannel):
    async def send(self, ask: ChannelAsk[ItemDto]) -> ChannelOutcome:
        return ChannelOutcome.await_reply()


def _count(line: str) -> None:
    with Path(os.environ["AGBOSS_TEST_RUNS"]).open("a") as runs:
        runs.write(line + "\n")


@tool(
    name="handle-item-tool",
    description="Handles an item",
    input=ItemDto,
    output=DoneDto,
    channel=ItemApprovalChannel,
)
class HandleItemTool(ToolHandler[ItemDto, DoneDto]):
    def run(self, args: ItemDto) -> DoneDto:
        _count(f"tool {args.item_id} pid={os.getpid()}")
        return DoneDto(status=f"handled {args.item_id}")


@agent(
    name="item-agent",
    description="Handles one item",
    prompt="Handle it.",
    model="test/model",
    tools=[HandleItemTool],
    input=ItemDto,
    output=DoneDto,
)
class ItemAgent: ...


@join(name="count-join", description="Counts", output=CountDto)
class CountJoin(JoinHandler[CountDto]):
    def join(self, input: JoinInput) -> CountDto:
        _count(f"join pid={os.getpid()}")
        return CountDto(done=len(input.outputs))


@workflow_start(name="items-workflow-start", description="s", input=ItemsDto)
class ItemsStart: ...


@workflow_finish(name="items-workflow-finish", description="f", output=CountDto)
class ItemsFinish: ...


@workflow(
    name="items-workflow",
    version="1",
    flow=[
        start(ItemsStart)
        .returns(ItemsDto)
        .to_each(ItemAgent, over="items")
        .join(CountJoin)
        .to_finish(ItemsFinish)
    ],
)
class ItemsWorkflow: ...


@application(
    name="items-application", workflows=[ItemsWorkflow], channels=[InboxItemApprovalChannel]
)
class ItemsApplication: ...


def model(request: ChatRequest) -> ChatResponse:
    """Calls the tool for its item, then answers."""
    if any(message.role is MessageRole.TOOL for message in request.messages):
        answer = ToolCall(id="a", name=ANSWER_TOOL, arguments=json.dumps({"status": "ok"}))
        return ChatResponse(tool_calls=(answer,))
    item = next(m.content for m in request.messages if m.role is MessageRole.USER)
    return ChatResponse(tool_calls=(ToolCall(id="c", name="handle-item-tool", arguments=item),))
