"""How the time of one resume grows with the number of other pending pauses.

agboss: a per-item launch (``.to_each``) whose N branches each pause on an approval; one resume
is timed. LangGraph: N ``Send`` branches of a fan-out, each calling ``interrupt()``, with
``AsyncSqliteSaver``; one ``Command(resume={id: …})`` is timed. Both in the same run, on files
in the same temporary folder.

    python bench/pending_scale.py [--sizes 1 100 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import operator
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Send, interrupt
from pydantic import BaseModel

from agboss import (
    App,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    ExecutionStatus,
    FunctionProvider,
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


@tool(
    name="handle-item-tool",
    description="Handles an item",
    input=ItemDto,
    output=DoneDto,
    channel=ItemApprovalChannel,
)
class HandleItemTool(ToolHandler[ItemDto, DoneDto]):
    async def run(self, args: ItemDto) -> DoneDto:
        return DoneDto(status=f"handled {args.item_id}")


@agent(
    name="item-agent",
    description="Handles one item",
    prompt="Handle it.",
    model="bench/scripted",
    tools=[HandleItemTool],
    input=ItemDto,
    output=DoneDto,
)
class ItemAgent: ...


@join(name="count-join", description="Counts", output=CountDto)
class CountJoin(JoinHandler[CountDto]):
    def join(self, input: JoinInput) -> CountDto:
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


def scripted(request: ChatRequest) -> ChatResponse:
    if any(message.role is MessageRole.TOOL for message in request.messages):
        answer = ToolCall(id="a", name=ANSWER_TOOL, arguments='{"status": "ok"}')
        return ChatResponse(tool_calls=(answer,))
    item = next(m.content for m in request.messages if m.role is MessageRole.USER)
    return ChatResponse(tool_calls=(ToolCall(id="c", name="handle-item-tool", arguments=item),))


async def agboss_resume(folder: Path, size: int, run: int) -> tuple[float, float]:
    app = await App.create(
        ItemsApplication,
        store=folder / f"agboss-{size}-{run}.db",
        providers=[FunctionProvider(scripted)],
    )
    try:
        items = ItemsDto(items=[ItemDto(item_id=f"i{index}") for index in range(size)])
        began = time.perf_counter()
        paused = await app.execute(ItemsWorkflow, items, owner_id="u")
        setup = time.perf_counter() - began
        assert len(paused.pending) == size
        pause_id = paused.pending[0].pause_id
        assert pause_id is not None
        began = time.perf_counter()
        after = await app.resume(pause_id, decision={"approved": True}, owner_id="u")
        elapsed = time.perf_counter() - began
        expected = ExecutionStatus.COMPLETED if size == 1 else ExecutionStatus.PAUSED
        assert after.status is expected
        assert len(after.pending) == size - 1
    finally:
        await app.close()
    return elapsed, setup


class State(TypedDict, total=False):
    """LangGraph's state: the items, and the ones handled."""

    items: list[str]
    done: Annotated[list[str], operator.add]


class ItemState(TypedDict):
    """One Send branch's state."""

    item: str


async def langgraph_resume(folder: Path, size: int, run: int) -> tuple[float, float]:
    def fan_out(state: State) -> list[Send]:
        return [Send("handle", {"item": item}) for item in state["items"]]

    def handle(state: ItemState) -> dict[str, Any]:
        answer: Any = interrupt({"tool": "handle-item-tool", "item": state["item"]})
        return {"done": [state["item"]] if answer["approved"] else []}

    builder = StateGraph(State)
    builder.add_node("handle", handle)
    builder.add_conditional_edges(START, fan_out, ["handle"])
    builder.add_edge("handle", END)
    async with AsyncSqliteSaver.from_conn_string(str(folder / f"lg-{size}-{run}.db")) as saver:
        graph = builder.compile(checkpointer=saver)
        config: Any = {"configurable": {"thread_id": "t"}}
        began = time.perf_counter()
        paused = await graph.ainvoke({"items": [f"i{index}" for index in range(size)]}, config)
        setup = time.perf_counter() - began
        interrupts = paused["__interrupt__"]
        assert len(interrupts) == size
        began = time.perf_counter()
        after = await graph.ainvoke(Command(resume={interrupts[0].id: {"approved": True}}), config)
        elapsed = time.perf_counter() - began
        assert len(after.get("__interrupt__", [])) == size - 1
    return elapsed, setup


async def main(sizes: list[int], repeat: int) -> None:
    print("one resume with N pauses pending in a per-item launch (SQLite file, same run)")
    print(
        f"{'N':>6}  {'agboss resume':>14}  {'LangGraph resume':>17}  {'ratio':>6}  "
        f"{'agboss setup':>13}  {'LangGraph setup':>16}"
    )
    with tempfile.TemporaryDirectory(prefix="agboss-bench-") as name:
        folder = Path(name)
        for size in sizes:
            ours = [await agboss_resume(folder, size, run) for run in range(repeat)]
            theirs = [await langgraph_resume(folder, size, run) for run in range(repeat)]
            mine = statistics.median(t for t, _ in ours)
            peer = statistics.median(t for t, _ in theirs)
            print(
                f"{size:>6}  {mine * 1000:>11.2f} ms  {peer * 1000:>14.2f} ms  "
                f"{mine / peer:>6.3f}  {statistics.median(s for _, s in ours) * 1000:>10.1f} ms  "
                f"{statistics.median(s for _, s in theirs) * 1000:>13.1f} ms"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 100, 1000])
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    sys.exit(asyncio.run(main(arguments.sizes, arguments.repeat)))
