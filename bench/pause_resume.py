"""The pause cycle: execute until an approval pauses, resume it by its id, finish.

agboss (scripted model, SQLite store) against LangGraph (a 3-node graph whose middle node calls
``interrupt()``, ``AsyncSqliteSaver``, resumed with ``Command(resume={id: …})``), both on a
file in the same temporary folder, measured in the same run. Prints both medians and the ratio.

    python bench/pause_resume.py [--cycles 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TypedDict

from pydantic import BaseModel

from agboss import (
    App,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    ExecutionStatus,
    FunctionProvider,
    PauseAnswerer,
    ToolHandler,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
    agent,
    application,
    channel,
    channel_role,
    start,
    tool,
    workflow,
    workflow_finish,
    workflow_start,
)
from agboss.agents import ANSWER_TOOL
from agboss.models import ChatRequest, ChatResponse, MessageRole, ToolCall


class RefundDto(BaseModel):
    order_id: str


class DoneDto(BaseModel):
    status: str


@channel_role(
    name="refund-approval-channel",
    description="Approves refunds",
    approves=RefundDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
)
class RefundApprovalChannel(ChannelOf[RefundDto]): ...


@channel(name="inbox-refund-approval-channel", description="Posts to an inbox")
class InboxRefundApprovalChannel(RefundApprovalChannel):
    async def send(self, ask: ChannelAsk[RefundDto]) -> ChannelOutcome:
        return ChannelOutcome.await_reply()


@tool(
    name="refund-tool",
    description="Refunds an order",
    input=RefundDto,
    output=DoneDto,
    channel=RefundApprovalChannel,
)
class RefundTool(ToolHandler[RefundDto, DoneDto]):
    async def run(self, args: RefundDto) -> DoneDto:
        return DoneDto(status=f"refunded {args.order_id}")


@agent(
    name="refund-agent",
    description="Refunds",
    prompt="Refund it.",
    model="bench/scripted",
    tools=[RefundTool],
)
class RefundAgent: ...


@workflow_start(name="refund-workflow-start", description="s", input=WorkflowStartTextDto)
class RefundStart: ...


@workflow_finish(name="refund-workflow-finish", description="f", output=WorkflowFinishTextDto)
class RefundFinish: ...


@workflow(
    name="refund-workflow",
    version="1",
    flow=[
        start(RefundStart)
        .returns(WorkflowStartTextDto)
        .to_agent(RefundAgent)
        .to_finish(RefundFinish)
    ],
)
class RefundWorkflow: ...


@application(
    name="refund-application",
    workflows=[RefundWorkflow],
    channels=[InboxRefundApprovalChannel],
)
class RefundApplication: ...


_CALL = ChatResponse(
    tool_calls=(ToolCall(id="c1", name="refund-tool", arguments='{"order_id": "7"}'),)
)
_ANSWER = ChatResponse(
    tool_calls=(ToolCall(id="a", name=ANSWER_TOOL, arguments=json.dumps({"text": "refunded"})),)
)


def scripted(request: ChatRequest) -> ChatResponse:
    done = any(message.role is MessageRole.TOOL for message in request.messages)
    return _ANSWER if done else _CALL


async def agboss_cycles(
    folder: Path, cycles: int, warmup: int, store: str | None = None
) -> list[float]:
    app = await App.create(
        RefundApplication,
        store=store or folder / "agboss.db",
        providers=[FunctionProvider(scripted)],
    )
    times: list[float] = []
    try:
        for index in range(warmup + cycles):
            began = time.perf_counter()
            paused = await app.execute(RefundWorkflow, {"text": "refund 7"}, owner_id="u")
            pause_id = paused.pending[0].pause_id
            assert pause_id is not None
            done = await app.resume(pause_id, decision={"approved": True}, owner_id="u")
            elapsed = time.perf_counter() - began
            assert done.status is ExecutionStatus.COMPLETED
            if index >= warmup:
                times.append(elapsed)
    finally:
        await app.close()
    return times


async def langgraph_cycles(folder: Path, cycles: int, warmup: int) -> list[float]:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, interrupt

    class State(TypedDict, total=False):
        order_id: str
        approved: bool
        status: str

    def plan(state: State) -> State:
        return {"order_id": state["order_id"]}

    def approve(state: State) -> State:
        question = {"tool": "refund-tool", "arguments": {"order_id": state["order_id"]}}
        answer: Any = interrupt(question)
        return {"approved": bool(answer["approved"])}

    def finish(state: State) -> State:
        return {"status": "refunded" if state.get("approved") else "rejected"}

    builder = StateGraph(State)
    builder.add_node("plan", plan)
    builder.add_node("approve", approve)
    builder.add_node("finish", finish)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "approve")
    builder.add_edge("approve", "finish")
    builder.add_edge("finish", END)
    times: list[float] = []
    async with AsyncSqliteSaver.from_conn_string(str(folder / "langgraph.db")) as saver:
        graph = builder.compile(checkpointer=saver)
        for index in range(warmup + cycles):
            config: Any = {"configurable": {"thread_id": f"t-{index}"}}
            began = time.perf_counter()
            paused = await graph.ainvoke({"order_id": "7"}, config)
            [pending] = paused["__interrupt__"]
            done = await graph.ainvoke(Command(resume={pending.id: {"approved": True}}), config)
            elapsed = time.perf_counter() - began
            assert done["status"] == "refunded"
            if index >= warmup:
                times.append(elapsed)
    return times


def describe(name: str, times: list[float]) -> str:
    ordered = sorted(times)
    p90 = ordered[int(len(ordered) * 0.9) - 1]
    return (
        f"{name:<28} median {statistics.median(times) * 1000:7.3f} ms   "
        f"p90 {p90 * 1000:7.3f} ms   ({len(times)} cycles)"
    )


async def main(cycles: int, warmup: int, postgres: str | None) -> None:
    with tempfile.TemporaryDirectory(prefix="agboss-bench-") as name:
        folder = Path(name)
        ours = await agboss_cycles(folder, cycles, warmup)
        theirs = await langgraph_cycles(folder, cycles, warmup)
        on_postgres = await agboss_cycles(folder, cycles, warmup, postgres) if postgres else None
    print("pause → resume → finish, one approval, SQLite file, same machine and run")
    print(describe("agboss (scripted model)", ours))
    print(describe("LangGraph AsyncSqliteSaver", theirs))
    ratio = statistics.median(ours) / statistics.median(theirs)
    print(f"ratio agboss / LangGraph: {ratio:.3f}  (goal: 0.25 or less)")
    if on_postgres is not None:
        print(describe("agboss on PostgreSQL", on_postgres) + "  (local server, for reference)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cycles", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--postgres", help="also time agboss on this postgresql:// store")
    arguments = parser.parse_args()
    sys.exit(asyncio.run(main(arguments.cycles, arguments.warmup, arguments.postgres)))
