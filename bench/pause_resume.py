"""The pause cycle: execute until an approval pauses, resume it by its id, finish.

agboss (scripted model) against LangGraph (a 3-node graph whose middle node calls
``interrupt()``, resumed with ``Command(resume={id: …})``), measured in the same run: on SQLite
files in one temporary folder (LangGraph's ``AsyncSqliteSaver``), and — given a server — on
PostgreSQL (LangGraph's ``AsyncPostgresSaver``, each in a schema of its own). Prints the
medians, the ratios, and how many statements and commits an agboss cycle makes.

    python bench/pause_resume.py [--cycles 300] [--postgres postgresql://…] [--rerun]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from pydantic import BaseModel

from agboss import (
    App,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    ExecutionStatus,
    FunctionProvider,
    OnInterrupted,
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
from bench._floor import recorded, replayed

if TYPE_CHECKING:
    from langgraph.types import Durability


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


@tool(
    name="rerun-refund-tool",
    description="Refunds an order, again if cut off: no intent is committed before it runs",
    input=RefundDto,
    output=DoneDto,
    channel=RefundApprovalChannel,
    on_interrupted=OnInterrupted.RERUN,
)
class RerunRefundTool(ToolHandler[RefundDto, DoneDto]):
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


@agent(
    name="rerun-refund-agent",
    description="Refunds with a tool that must not run twice",
    prompt="Refund it.",
    model="bench/scripted",
    tools=[RerunRefundTool],
)
class RerunRefundAgent: ...


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


@workflow(
    name="rerun-refund-workflow",
    version="1",
    flow=[
        start(RefundStart)
        .returns(WorkflowStartTextDto)
        .to_agent(RerunRefundAgent)
        .to_finish(RefundFinish)
    ],
)
class RerunRefundWorkflow: ...


@application(
    name="refund-application",
    workflows=[RefundWorkflow, RerunRefundWorkflow],
    channels=[InboxRefundApprovalChannel],
)
class RefundApplication: ...


_CALL = ChatResponse(
    tool_calls=(ToolCall(id="c1", name="refund-tool", arguments='{"order_id": "7"}'),)
)
_ANSWER = ChatResponse(
    tool_calls=(ToolCall(id="a", name=ANSWER_TOOL, arguments=json.dumps({"text": "refunded"})),)
)


_RERUN_CALL = ChatResponse(
    tool_calls=(ToolCall(id="c1", name="rerun-refund-tool", arguments='{"order_id": "7"}'),)
)


def scripted(request: ChatRequest) -> ChatResponse:
    done = any(message.role is MessageRole.TOOL for message in request.messages)
    if done:
        return _ANSWER
    return _RERUN_CALL if request.caller.name == "rerun-refund-agent" else _CALL


class Counts:
    """Statements, commits and time an agboss store spent (counted at its driver)."""

    def __init__(self) -> None:
        self.statements = 0
        self.commits = 0
        self.in_store = 0.0
        self.cpu: list[float] = []
        """This process's CPU time for each side's cycles (agboss first, then the peers)."""
        self._restore: tuple[Any, Any, Any] = (None, None, None)

    def watch(self, store: Any) -> None:
        """Counts what the store's driver runs from now on."""
        driver = store.driver
        read, transact = driver.read, driver.transact

        async def counted_read(statement: Any) -> Any:
            self.statements += 1
            began = time.perf_counter()
            try:
                return await read(statement)
            finally:
                self.in_store += time.perf_counter() - began

        async def counted_transact(work: Callable[[], Any], **options: Any) -> Any:
            self.commits += 1
            shape, fence = options.get("shape"), options.get("fence")
            single = shape is not None and shape.single and fence is None
            self.statements += (0 if single else 2) + (fence is not None)  # BEGIN, COMMIT, fence

            def counting() -> Any:
                steps = work()
                rows = None
                while True:
                    try:
                        statement = steps.send(rows)
                    except StopIteration as done:
                        return done.value
                    self.statements += 1
                    rows = yield statement

            began = time.perf_counter()
            try:
                return await transact(counting, **options)
            finally:
                self.in_store += time.perf_counter() - began

        self._restore = (driver, read, transact)
        driver.read, driver.transact = counted_read, counted_transact

    def stop(self) -> None:
        """Stops counting."""
        driver, read, transact = self._restore
        driver.read, driver.transact = read, transact


Cycle = Callable[[], Awaitable[float]]
"""One pause + resume cycle; how long it took, in seconds."""


@asynccontextmanager
async def agboss_cycle(store: str | Path, rerun: bool = False) -> AsyncIterator[tuple[Cycle, App]]:
    """A cycle on an agboss app over ``store`` (and the app, to count its statements); its
    tool has the default of a tool with a channel (``ASK``: its intent rides the answer's
    commit), or with ``rerun`` declares ``OnInterrupted.RERUN`` (no intent)."""
    app = await App.create(RefundApplication, store=store, providers=[FunctionProvider(scripted)])
    workflow = RerunRefundWorkflow if rerun else RefundWorkflow

    async def cycle() -> float:
        began = time.perf_counter()
        paused = await app.execute(workflow, {"text": "refund 7"}, owner_id="u")
        pause_id = paused.pending[0].pause_id
        assert pause_id is not None
        done = await app.resume(pause_id, decision={"approved": True}, owner_id="u")
        elapsed = time.perf_counter() - began
        assert done.status is ExecutionStatus.COMPLETED
        return elapsed

    try:
        yield cycle, app
    finally:
        await app.close()


@asynccontextmanager
async def sqlite_saver(folder: Path) -> AsyncIterator[Any]:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async with AsyncSqliteSaver.from_conn_string(str(folder / "langgraph.db")) as saver:
        yield saver


@asynccontextmanager
async def postgres_saver(url: str, schema: str) -> AsyncIterator[Any]:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg import AsyncConnection
    from psycopg.rows import dict_row

    async with await AsyncConnection.connect(url, autocommit=True) as admin:
        await admin.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    connection = await AsyncConnection.connect(
        url,
        autocommit=True,
        prepare_threshold=0,
        row_factory=dict_row,
        options=f"-c search_path={schema}",
    )
    try:
        saver = AsyncPostgresSaver(connection)
        await saver.setup()
        yield saver
    finally:
        await connection.close()
        async with await AsyncConnection.connect(url, autocommit=True) as admin:
            await admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def langgraph_cycle(saver: Any, durability: Durability = "async") -> Cycle:
    """A cycle on a 3-node LangGraph graph whose middle node calls ``interrupt()``.

    ``durability`` is LangGraph's: ``"async"`` (its default) writes a step's checkpoint while
    the next step runs; ``"sync"`` waits for it before the next step starts, as agboss waits
    for each transition's commit.
    """
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
    graph = builder.compile(checkpointer=saver)
    run = uuid.uuid4().hex[:8]
    count = 0

    async def cycle() -> float:
        nonlocal count
        count += 1
        config: Any = {"configurable": {"thread_id": f"t-{run}-{count}"}}
        began = time.perf_counter()
        paused = await graph.ainvoke({"order_id": "7"}, config, durability=durability)
        [pending] = paused["__interrupt__"]
        done = await graph.ainvoke(
            Command(resume={pending.id: {"approved": True}}), config, durability=durability
        )
        elapsed = time.perf_counter() - began
        assert done["status"] == "refunded"
        return elapsed

    return cycle


BLOCK = 10
"""Cycles of one side before the other's: both sides see the machine in the same state (it
moves by ±50 % within minutes here), instead of one side a quiet minute and the other a busy
one."""


async def alternated(
    ours: Cycle, peers: list[Cycle], cycles: int, warmup: int, counts: Counts, app: App
) -> tuple[list[float], list[list[float]]]:
    """Each side's cycle times, run in alternating blocks after ``warmup`` cycles each."""
    for _ in range(warmup):
        await ours()
        for peer in peers:
            await peer()
    counts.watch(app.store)
    mine: list[float] = []
    theirs: list[list[float]] = [[] for _ in peers]
    counts.cpu = [0.0] * (1 + len(peers))
    while len(mine) < cycles:
        block = min(BLOCK, cycles - len(mine))
        began = time.process_time()
        for _ in range(block):
            mine.append(await ours())
        counts.cpu[0] += time.process_time() - began
        for place, (peer, times) in enumerate(zip(peers, theirs, strict=True), start=1):
            began = time.process_time()
            for _ in range(block):
                times.append(await peer())
            counts.cpu[place] += time.process_time() - began
    counts.stop()
    return mine, theirs


def describe(name: str, times: list[float]) -> str:
    ordered = sorted(times)
    p90 = ordered[int(len(ordered) * 0.9) - 1]
    return (
        f"{name:<40} median {statistics.median(times) * 1000:7.3f} ms   "
        f"p90 {p90 * 1000:7.3f} ms   ({len(times)} cycles)"
    )


def report(store: str, ours: list[float], peers: list[list[float]], counts: Counts) -> None:
    """Prints both sides, the ratios, and what an agboss cycle costs in and out of its store
    (and, when it was measured as a third peer, the cycle's floor: `bench._floor`)."""
    lg_async, lg_sync, *floor = peers
    print(describe(f"agboss, {store}", ours))
    print(describe(f"LangGraph on {store} (durability async)", lg_async))
    print(describe(f"LangGraph on {store} (durability sync)", lg_sync))
    mine = statistics.median(ours)
    goal = GOALS[store]
    print(
        f"ratio agboss / LangGraph on {store}: {mine / statistics.median(lg_async):.3f} "
        f"against its default durability (goal: {goal} or less), "
        f"{mine / statistics.median(lg_sync):.3f} against durability sync"
    )
    cycles = len(ours)
    outside = statistics.mean(ours) - counts.in_store / cycles
    print(
        f"agboss per cycle: {counts.statements / cycles:.1f} statements, "
        f"{counts.commits / cycles:.1f} commits (goal: 6 or fewer); "
        f"{counts.in_store / cycles * 1000:.3f} ms in the store, "
        f"{outside * 1000:.3f} ms outside it (the engine's own: "
        f"{outside / statistics.median(lg_async):.3f} of LangGraph's cycle)"
    )
    # The client's CPU (this process), without the database server's: on PostgreSQL the rest
    # of agboss's cycle is the server's work, which its commits wait for, while LangGraph's
    # default durability writes a step's checkpoint as the next step runs.
    mine_cpu, async_cpu, sync_cpu, *floor_cpu = (total / cycles * 1000 for total in counts.cpu)
    print(
        f"client CPU per cycle: agboss {mine_cpu:.3f} ms, LangGraph {async_cpu:.3f} ms "
        f"(async) / {sync_cpu:.3f} ms (sync)"
    )
    if floor:
        least = statistics.median(floor[0])
        print(
            f"the cycle's own transactions replayed without the engine (its floor): median "
            f"{least * 1000:.3f} ms, {least / statistics.median(lg_async):.3f} of LangGraph's "
            f"cycle (async), client CPU {floor_cpu[0]:.3f} ms; agboss's Python above it: "
            f"{(mine - least) * 1000:.3f} ms, {(mine - least) / statistics.median(lg_async):.3f} "
            "of LangGraph's cycle"
        )


GOALS = {"SQLite": 0.07, "PostgreSQL": 0.5}


async def main(
    cycles: int, warmup: int, postgres: str | None, rerun: bool, durability: str = "power-loss"
) -> None:
    print(
        f"pause → resume → finish, one approval, {cycles} cycles, same machine and run "
        f"(alternating blocks of {BLOCK})"
        + (", the tool on_interrupted=RERUN (no intent)" if rerun else "")
        + f"; agboss's SQLite store at durability={durability} (LangGraph's saver: FULL)"
    )
    with tempfile.TemporaryDirectory(prefix="agboss-bench-") as name:
        folder = Path(name)
        counts = Counts()
        async with (
            agboss_cycle(f"sqlite:///{folder / 'agboss.db'}?durability={durability}", rerun) as (
                cycle,
                app,
            ),
            sqlite_saver(folder) as saver,
        ):
            peers = [langgraph_cycle(saver), langgraph_cycle(saver, "sync")]
            ours, theirs = await alternated(cycle, peers, cycles, warmup, counts, app)
    report("SQLite", ours, theirs, counts)
    if postgres is None:
        print("(no PostgreSQL: pass --postgres or set AGBOSS_TEST_POSTGRES_URL)")
        return
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    counts = Counts()
    try:
        async with (
            agboss_cycle(f"{postgres}?schema={schema}_agboss", rerun) as (cycle, app),
            postgres_saver(postgres, f"{schema}_langgraph") as saver,
        ):
            recording = await recorded(cycle)  # its first cycles: before any other
            async with replayed(postgres, f"{schema}_agboss", recording) as floor:
                peers = [langgraph_cycle(saver), langgraph_cycle(saver, "sync"), floor]
                ours, theirs = await alternated(cycle, peers, cycles, warmup, counts, app)
    finally:
        await drop_schema(postgres, f"{schema}_agboss")
    report("PostgreSQL", ours, theirs, counts)


async def drop_schema(url: str, schema: str) -> None:
    """Drops a schema a benchmark made."""
    from psycopg import AsyncConnection

    async with await AsyncConnection.connect(url, autocommit=True) as admin:
        await admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cycles", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument(
        "--postgres",
        default=os.environ.get("AGBOSS_TEST_POSTGRES_URL"),
        help="a postgresql:// database to time both on (default: AGBOSS_TEST_POSTGRES_URL)",
    )
    parser.add_argument(
        "--rerun",
        action="store_true",
        help="agboss's tool declares on_interrupted=OnInterrupted.RERUN (no intent; the "
        "default is ASK, whose intent rides the answer's commit)",
    )
    parser.add_argument(
        "--durability",
        choices=["power-loss", "process-crash"],
        default="power-loss",
        help="what agboss's SQLite commits survive (the default: a power loss, as LangGraph's "
        "saver at FULL; process-crash: a killed process only)",
    )
    arguments = parser.parse_args()
    sys.exit(
        asyncio.run(
            main(
                arguments.cycles,
                arguments.warmup,
                arguments.postgres,
                arguments.rerun,
                arguments.durability,
            )
        )
    )
