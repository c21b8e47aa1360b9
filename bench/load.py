"""Load: N instances (processes) on one PostgreSQL, questions arriving, answers by HTTP.

Each instance is a process running an `App` and its pause router (``agboss.web``) under
uvicorn on loopback, with one route of the benchmark's own that begins an execution (which
pauses on an approval). The driver, in this process, keeps a steady arrival of new executions
(``--rate`` a second, to the instances in turn) and answers each question by ``POST
/answers`` to *another* instance than the one that asked it, at once. Each tool run is
stamped by the process that ran it (``time.monotonic``, one clock for every process here).

A second phase records answers the way the command line does — ``App.answer(move=False)`` in
the driver's own process, which moves nothing (``recovers=False``) — so each is moved only by
an instance that heard the answer's ``NOTIFY``: the time from the answer's return to its tool's
run is the wake-up across processes.

Printed, for each number of instances: throughput (resumes a second, whole cycles), the
answer's acknowledgement (HTTP round trip: the decision recorded), answer → tool run (p50,
p99), the instances' CPU per resume, and the unmoved answer → tool run (p50, p99). LangGraph
has no multi-instance answer path to put beside it (its ``interrupt()`` is resumed by the
caller that holds the graph), so no peer ratio is printed here.

With ``--open 10000 100000 1000000``, each size is a round of its own on one instance: that
many other questions are left open first — one real paused execution, its rows copied that
many times in SQL, each copy another owner's (`_clone`) — and the round also times the inbox's
first page and ``count_pending`` for the benchmark's owner, a sweep (`App.sweep`), and the
database's size per open question.

    python bench/load.py [--postgres postgresql://…] [--instances 1 2 4] [--seconds 15]
        [--rate 40] [--unmoved 200] [--open 10000 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import httpx
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

OWNER = "bench-owner"


class OrderDto(BaseModel):
    order_id: str


class DoneDto(BaseModel):
    status: str


@channel_role(
    name="load-approval-channel",
    description="Approves an order",
    approves=OrderDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
)
class LoadApprovalChannel(ChannelOf[OrderDto]): ...


@channel(name="inbox-load-approval-channel", description="Posts to an inbox")
class InboxLoadApprovalChannel(LoadApprovalChannel):
    async def send(self, ask: ChannelAsk[OrderDto]) -> ChannelOutcome:
        return ChannelOutcome.await_reply()


RUNS: list[tuple[str, float]] = []
"""The tool runs of this process: (order id, when, on `time.monotonic`)."""


@tool(
    name="load-tool",
    description="Handles an order",
    input=OrderDto,
    output=DoneDto,
    channel=LoadApprovalChannel,
)
class LoadTool(ToolHandler[OrderDto, DoneDto]):
    async def run(self, args: OrderDto) -> DoneDto:
        RUNS.append((args.order_id, time.monotonic()))
        return DoneDto(status=f"handled {args.order_id}")


@agent(
    name="load-agent",
    description="Handles an order",
    prompt="Handle it.",
    model="bench/scripted",
    tools=[LoadTool],
)
class LoadAgent: ...


@workflow_start(name="load-workflow-start", description="s", input=WorkflowStartTextDto)
class LoadStart: ...


@workflow_finish(name="load-workflow-finish", description="f", output=WorkflowFinishTextDto)
class LoadFinish: ...


@workflow(
    name="load-workflow",
    version="1",
    flow=[start(LoadStart).returns(WorkflowStartTextDto).to_agent(LoadAgent).to_finish(LoadFinish)],
)
class LoadWorkflow: ...


@application(name="load-application", workflows=[LoadWorkflow], channels=[InboxLoadApprovalChannel])
class LoadApplication: ...


_ANSWER = ChatResponse(
    tool_calls=(ToolCall(id="a", name=ANSWER_TOOL, arguments=json.dumps({"text": "done"})),)
)


def scripted(request: ChatRequest) -> ChatResponse:
    """Calls the tool with the order the user named, then answers."""
    if any(message.role is MessageRole.TOOL for message in request.messages):
        return _ANSWER
    said = next(m.content for m in request.messages if m.role is MessageRole.USER)
    order = json.loads(said)["text"] if said.startswith("{") else said
    arguments = json.dumps({"order_id": order})
    return ChatResponse(tool_calls=(ToolCall(id="c", name="load-tool", arguments=arguments),))


# ---- an instance ---------------------------------------------------------------------


async def serve(url: str, port: int) -> None:
    """One instance: the app, its pause router and the benchmark's routes, on ``port``."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Mount, Route

    from agboss.web import Caller, pause_router

    app = await App.create(LoadApplication, store=url, providers=[FunctionProvider(scripted)])

    async def begin(request: Request) -> JSONResponse:
        order = request.query_params["order"]
        output = await app.execute(LoadWorkflow, WorkflowStartTextDto(text=order), owner_id=OWNER)
        assert output.status is ExecutionStatus.PAUSED, output.status
        return JSONResponse({"pause_ref": output.pending[0].pause_ref})

    async def runs(request: Request) -> JSONResponse:
        return JSONResponse({"runs": RUNS, "cpu": time.process_time()})

    async def caller(request: Request) -> Caller:
        return Caller(owner_id=OWNER)

    web = Starlette(
        routes=[
            Route("/begin", begin, methods=["POST"]),
            Route("/runs", runs, methods=["GET"]),
            Mount("/agboss", pause_router(app, authenticate=caller, page=False)),
        ]
    )
    config = uvicorn.Config(web, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    try:
        await uvicorn.Server(config).serve()
    finally:
        await app.close()


# ---- the driver ------------------------------------------------------------------------


@dataclass
class Instance:
    port: int
    process: asyncio.subprocess.Process

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@dataclass
class Round:
    """What one round measured."""

    instances: int
    asked: dict[str, float] = field(default_factory=dict)
    """Order id → when its answer was sent."""
    acknowledged: list[float] = field(default_factory=list)
    unmoved_sent: dict[str, float] = field(default_factory=dict)
    elapsed: float = 0.0
    cpu: float = 0.0
    ran: dict[str, float] = field(default_factory=dict)
    opened: int = 0
    """How many other questions were open."""
    reads: dict[str, float] = field(default_factory=dict)
    """What was timed with them open: a name → its median, in seconds (or bytes, for size)."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _start(url: str, count: int) -> list[Instance]:
    started = []
    for _ in range(count):
        port = _free_port()
        process = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--serve", url, "--port", str(port)
        )
        started.append(Instance(port, process))
    async with httpx.AsyncClient() as client:
        for instance in started:
            for _ in range(300):
                try:
                    await client.get(f"{instance.base}/runs")
                    break
                except httpx.TransportError:
                    await asyncio.sleep(0.05)
            else:
                raise RuntimeError(f"the instance on port {instance.port} did not start")
    return started


async def _stop(instances: Sequence[Instance]) -> None:
    for instance in instances:
        instance.process.terminate()
    for instance in instances:
        await instance.process.wait()


async def _cycle(
    client: httpx.AsyncClient, instances: Sequence[Instance], index: int, measured: Round
) -> None:
    """One question: begun on one instance, answered through another's router at once."""
    order = f"o{index}"
    asking = instances[index % len(instances)]
    answering = instances[(index + 1) % len(instances)]
    begun = await client.post(f"{asking.base}/begin", params={"order": order})
    ref = begun.json()["pause_ref"]
    sent = time.monotonic()
    measured.asked[order] = sent
    answered = await client.post(
        f"{answering.base}/agboss/answers",
        json={"pause_ref": ref, "decision": {"approved": True}},
    )
    measured.acknowledged.append(time.monotonic() - sent)
    assert answered.status_code == 202, answered.text


async def _steady(
    client: httpx.AsyncClient, instances: Sequence[Instance], seconds: float, rate: float
) -> Round:
    measured = Round(len(instances))
    cycles: list[asyncio.Task[None]] = []
    began = time.monotonic()
    index = 0
    while time.monotonic() - began < seconds:
        cycles.append(asyncio.ensure_future(_cycle(client, instances, index, measured)))
        index += 1
        await asyncio.sleep(max(0.0, began + index / rate - time.monotonic()))
    await asyncio.gather(*cycles)
    measured.elapsed = time.monotonic() - began
    return measured


async def _unmoved(
    url: str, client: httpx.AsyncClient, instances: Sequence[Instance], count: int, into: Round
) -> None:
    """Answers recorded here without moving them: each is moved by an instance that heard."""
    recorder = await App.create(
        LoadApplication, store=url, providers=[FunctionProvider(scripted)], recovers=False
    )
    try:
        for index in range(count):
            order = f"u{index}"
            begun = await client.post(
                f"{instances[index % len(instances)].base}/begin", params={"order": order}
            )
            pause_id = await recorder.pause_id_of(begun.json()["pause_ref"], owner_id=OWNER)
            await recorder.answer(pause_id, decision={"approved": True}, owner_id=OWNER, move=False)
            into.unmoved_sent[order] = time.monotonic()
            await asyncio.sleep(0.01)
    finally:
        await recorder.close()


async def _runs(
    client: httpx.AsyncClient, instances: Sequence[Instance]
) -> tuple[dict[str, float], float]:
    """The tool runs of every instance (order → when), and their processes' CPU in all."""
    ran: dict[str, float] = {}
    cpu = 0.0
    for instance in instances:
        body = (await client.get(f"{instance.base}/runs")).json()
        ran.update(dict(body["runs"]))
        cpu += body["cpu"]
    return ran, cpu


async def _collect(client: httpx.AsyncClient, instances: Sequence[Instance], into: Round) -> float:
    """Waits until every answered question ran its tool (kept in ``into.ran``); the
    instances' CPU then."""
    wanted = set(into.asked) | set(into.unmoved_sent)
    for _ in range(200):
        into.ran, cpu = await _runs(client, instances)
        if wanted <= set(into.ran):
            return cpu
        await asyncio.sleep(0.1)
    raise RuntimeError(f"{len(wanted - set(into.ran))} answered questions never ran their tool")


_COPIED_IDS = frozenset(
    {
        "thread_id",
        "execution_id",
        "root_execution_id",
        "parent_execution_id",
        "pause_id",
        "owner_id",
    }
)
"""The columns a copy of a tree changes (``id-N``): each copy is another owner's tree."""

_CLONE_BATCH = 100_000


async def _clone(url: str, schema: str, execution_id: str, thread_id: str, count: int) -> None:
    """Copies every row of one paused tree ``count`` times, in SQL, with new ids."""
    from psycopg import AsyncConnection, sql

    async with await AsyncConnection.connect(url, autocommit=True) as connection:
        cursor = await connection.execute(
            "SELECT table_name, column_name, COALESCE(column_default, '') FROM "
            "information_schema.columns WHERE table_schema = %s ORDER BY table_name, "
            "ordinal_position",
            (schema,),
        )
        tables: dict[str, list[tuple[str, str]]] = {}
        for table, column, default in await cursor.fetchall():
            tables.setdefault(table, []).append((column, default))
        for table, columns in sorted(tables.items()):
            names = [name for name, _ in columns]
            key = next(
                (k for k in ("root_execution_id", "execution_id", "thread_id") if k in names), None
            )
            if key is None:
                continue
            kept = [name for name, default in columns if not default.startswith("nextval")]
            chosen = [
                sql.SQL("{} || '-' || copy_number").format(sql.Identifier(name))
                if name in _COPIED_IDS
                else sql.Identifier(name)
                for name in kept
            ]
            for first in range(1, count + 1, _CLONE_BATCH):
                last = min(count, first + _CLONE_BATCH - 1)
                await connection.execute(
                    sql.SQL(
                        "INSERT INTO {table} ({columns}) SELECT {chosen} FROM {table}, "
                        "generate_series(%s::int, %s::int) AS copy_number WHERE {key} = %s"
                    ).format(
                        table=sql.Identifier(schema, table),
                        columns=sql.SQL(", ").join(map(sql.Identifier, kept)),
                        chosen=sql.SQL(", ").join(chosen),
                        key=sql.Identifier(key),
                    ),
                    (first, last, thread_id if key == "thread_id" else execution_id),
                )
        await connection.execute(sql.SQL("ANALYZE"))


async def _size(url: str, schema: str) -> int:
    from psycopg import AsyncConnection

    async with await AsyncConnection.connect(url, autocommit=True) as connection:
        cursor = await connection.execute(
            "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind = 'r'",
            (schema,),
        )
        row = await cursor.fetchone()
        return int(row[0]) if row is not None else 0


async def _timed(call: Callable[[], Awaitable[object]], times: int) -> float:
    """The median time of ``call``, in seconds."""
    spent = []
    for _ in range(times):
        began = time.perf_counter()
        await call()
        spent.append(time.perf_counter() - began)
    return statistics.median(spent)


async def _open_questions(url: str, schema: str, count: int) -> None:
    """Leaves ``count`` questions of other owners open (one real tree, copied)."""
    app = await App.create(
        LoadApplication, store=url, providers=[FunctionProvider(scripted)], recovers=False
    )
    try:
        output = await app.execute(
            LoadWorkflow, WorkflowStartTextDto(text="template"), owner_id="someone"
        )
        assert output.status is ExecutionStatus.PAUSED
    finally:
        await app.close()
    base = url.split("?")[0]
    await _clone(base, schema, output.execution_id, output.thread_id, count)


async def _reads(url: str, base: str, schema: str, into: Round) -> None:
    """Times the reads that must not grow with the questions that are not touched."""
    app = await App.create(
        LoadApplication, store=url, providers=[FunctionProvider(scripted)], recovers=False
    )
    try:
        for index in range(20):  # a few of the owner's own, to list and count
            await app.execute(LoadWorkflow, WorkflowStartTextDto(text=f"r{index}"), owner_id=OWNER)
        into.reads["inbox first page"] = await _timed(
            lambda: app.pending(owner_id=OWNER, limit=50), 20
        )
        into.reads["count_pending"] = await _timed(lambda: app.count_pending(owner_id=OWNER), 20)
        into.reads["sweep"] = await _timed(app.sweep, 5)
    finally:
        await app.close()
    into.reads["size per open question"] = await _size(base, schema) / max(1, into.opened + 1)


def _ms(values: Sequence[float], share: float) -> str:
    ordered = sorted(values)
    at = ordered[min(len(ordered) - 1, int(share * len(ordered)))]
    return f"{at * 1000:.1f}"


async def _round(url: str, count: int, seconds: float, rate: float, unmoved: int) -> Round:
    """A round of ``count`` instances on the store at ``url``."""
    instances = await _start(url, count)
    try:
        async with httpx.AsyncClient(timeout=60) as client:
            await _steady(client, instances, 1.0, rate)  # warm: connections, prepared statements
            _, cpu_before = await _runs(client, instances)
            measured = await _steady(client, instances, seconds, rate)
            measured.cpu = await _collect(client, instances, measured) - cpu_before
            await _unmoved(url, client, instances, unmoved, measured)
            await _collect(client, instances, measured)
            return measured
    finally:
        await _stop(instances)


def _report_reads(measured: Round) -> None:
    reads = measured.reads
    # With none left open, the size is the round's own schema, not a cost per question.
    size = (
        f"database {reads['size per open question']:.0f} bytes per open question"
        if measured.opened
        else f"database {reads['size per open question']:.0f} bytes (none left open)"
    )
    print(
        f"    with {measured.opened} other questions open: inbox first page "
        f"{reads['inbox first page'] * 1000:.2f} ms | count_pending "
        f"{reads['count_pending'] * 1000:.2f} ms | sweep {reads['sweep'] * 1000:.2f} ms | "
        f"{size}",
        flush=True,
    )


def _report(measured: Round) -> None:
    to_tool = [measured.ran[order] - sent for order, sent in measured.asked.items()]
    woken = [measured.ran[order] - sent for order, sent in measured.unmoved_sent.items()]
    resumes = len(measured.asked)
    print(
        f"{measured.instances} instance(s): {resumes / measured.elapsed:6.1f} cycles/s | "
        f"ack p50 {_ms(measured.acknowledged, 0.5)} ms p99 {_ms(measured.acknowledged, 0.99)} "
        f"ms | answer→tool p50 {_ms(to_tool, 0.5)} ms p99 {_ms(to_tool, 0.99)} ms | "
        f"instance CPU {measured.cpu / resumes * 1000:.2f} ms a cycle | unmoved answer→tool "
        f"(n={len(woken)}) p50 {_ms(woken, 0.5)} ms p99 {_ms(woken, 0.99)} ms",
        flush=True,
    )


async def _drop(url: str, schema: str) -> None:
    from psycopg import AsyncConnection, sql

    async with await AsyncConnection.connect(url, autocommit=True) as connection:
        await connection.execute(
            sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
        )


async def main(arguments: argparse.Namespace) -> None:
    url = arguments.postgres or os.environ.get("AGBOSS_TEST_POSTGRES_URL")
    if not url:
        sys.exit("give --postgres postgresql://… (or set AGBOSS_TEST_POSTGRES_URL)")
    print(
        f"{arguments.seconds:.0f} s at {arguments.rate:.0f} questions/s, each answered at once "
        f"through another instance's router; then {arguments.unmoved} answers recorded without "
        f"moving (move=False), one every 10 ms; {os.cpu_count()} cores",
        flush=True,
    )
    rounds = [(count, 0) for count in arguments.instances]
    rounds += [(1, size) for size in arguments.open]
    for count, size in rounds:
        schema = f"bench_load_{uuid.uuid4().hex[:8]}"
        store = f"{url}{'&' if '?' in url else '?'}schema={schema}"
        opened = await App.create(
            LoadApplication, store=store, providers=[FunctionProvider(scripted)], recovers=False
        )
        await opened.close()  # migrated once, before the instances race for it
        try:
            if size:
                began = time.perf_counter()
                await _open_questions(store, schema, size)
                print(f"    ({size} questions opened in {time.perf_counter() - began:.0f} s)")
            measured = await _round(
                store, count, arguments.seconds, arguments.rate, arguments.unmoved
            )
            measured.opened = size
            _report(measured)
            if size or arguments.open:
                await _reads(store, url, schema, measured)
                _report_reads(measured)
        finally:
            await _drop(url, schema)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", help="a PostgreSQL URL (default: AGBOSS_TEST_POSTGRES_URL)")
    parser.add_argument("--instances", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--rate", type=float, default=40.0, help="questions a second")
    parser.add_argument("--unmoved", type=int, default=200)
    parser.add_argument(
        "--open", type=int, nargs="*", default=[], help="other questions left open, per round"
    )
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    return parser.parse_args()


if __name__ == "__main__":
    parsed = _arguments()
    if parsed.serve:
        asyncio.run(serve(parsed.serve, parsed.port))
    else:
        asyncio.run(main(parsed))
