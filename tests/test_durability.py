"""A crash loses nothing: a killed process's execution is continued by a new App."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agboss import App, ExecutionStatus, FunctionProvider, LeaseLostError, WorkflowFinishTextDto
from agboss.models import ChatRequest, ChatResponse, MessageRole
from agboss.store.writes import AppendStep
from agboss.testing import TestClock, call_tools, reply_with, test_with, tool_call
from tests.apps.durable_app import DurableApplication, DurableWorkflow, answer_turn
from tests.apps.durable_pause_app import RefundApplication, model
from tests.apps.office import (
    BookExpenseTool,
    DeskDoneDto,
    OfficeAgent,
    OfficeApplication,
    OfficeRecorder,
    OfficeWorkflow,
    ReturnDepositTool,
)
from tests.apps.recorded import recording
from tests.stores import STORE_KINDS, store_url

ROOT = Path(__file__).resolve().parent.parent


async def _wait_for(
    path: Path, process: subprocess.Popen[bytes], seconds: float = 20, *, line: bool = False
) -> None:
    """Waits until the child made ``path`` (with ``line``: wrote a whole line to it — a file
    is created by its ``open`` before anything is written)."""
    for _ in range(int(seconds / 0.02)):
        if path.exists() and (not line or path.read_text().endswith("\n")):
            return
        if process.poll() is not None:
            raise AssertionError(
                f"the child exited early: {process.stderr and process.stderr.read()!r}"
            )
        await asyncio.sleep(0.02)
    raise AssertionError("the child never reached its second model call")


async def test_a_new_app_on_the_same_file_continues_a_killed_execution_and_no_tool_runs_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, runs, marker = tmp_path / "store.db", tmp_path / "runs.txt", tmp_path / "marker"
    monkeypatch.setenv("AGBOSS_TEST_RUNS", str(runs))
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.apps.durable_app", str(db), str(runs), str(marker)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
    )
    try:
        await _wait_for(marker, child)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert runs.read_text().count("L-7") == 1

    calls: list[ChatRequest] = []

    def model(request: ChatRequest) -> ChatResponse:
        calls.append(request)
        return answer_turn(request)

    # The dead holder's lease (30 s) has expired by the new instance's clock.
    clock_later = TestClock(start=datetime.now(UTC) + timedelta(minutes=5))
    app = await App.create(
        DurableApplication,
        store=f"sqlite:///{db}",
        providers=[FunctionProvider(model)],
        clock=clock_later,
    )
    try:
        [result] = await app.recover()
        again = await app.get(result.execution_id, record=True)
    finally:
        await app.close()
    assert result.status is ExecutionStatus.COMPLETED
    assert result.output_as(WorkflowFinishTextDto).text.startswith("done: ")
    assert runs.read_text().count("L-7") == 1, "the journaled tool run was not repeated"
    assert len(calls) == 1, "only the model call that was cut off is made again"
    assert again.record is not None
    assert [s.kind for s in again.record.steps] == ["model-call", "tool-run", "model-call"]


async def test_recovery_leaves_an_execution_whose_holder_is_alive(tmp_path: Path) -> None:
    async def model(request: ChatRequest) -> ChatResponse:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    store = f"sqlite:///{tmp_path / 'store.db'}"
    clock = TestClock()
    first = await App.create(
        DurableApplication, store=store, providers=[FunctionProvider(model)], clock=clock
    )
    second = await App.create(
        DurableApplication, store=store, providers=[FunctionProvider(model)], clock=clock
    )
    running = asyncio.ensure_future(
        first.execute(DurableWorkflow, {"text": "x"}, owner_id="user-1")
    )
    await asyncio.sleep(0.05)
    try:
        assert await second.recover() == []
    finally:
        running.cancel()
        await first.close()
        await second.close()


async def test_a_send_cut_off_by_a_crash_is_retried_with_the_same_pause_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, sent = tmp_path / "store.db", tmp_path / "sent.txt"
    monkeypatch.setenv("AGBOSS_TEST_SENT", str(sent))
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.apps.durable_pause_app", str(db), str(sent)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
    )
    try:
        await _wait_for(sent, child, line=True)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    [first_id] = sent.read_text().split()

    app = await App.create(
        RefundApplication,
        store=f"sqlite:///{db}",
        providers=[model()],
        clock=TestClock(start=datetime.now(UTC) + timedelta(minutes=5)),
    )
    try:
        [paused] = await app.recover()
        assert paused.status is ExecutionStatus.PAUSED
        assert sent.read_text().split() == [first_id, first_id]  # sent again, same id
        done = await app.resume(first_id, decision={"approved": True}, answered_by="clerk-3")
    finally:
        await app.close()
    assert done.status is ExecutionStatus.COMPLETED


async def test_a_long_pass_renews_its_lease_so_no_other_instance_takes_the_tree_over(
    tmp_path: Path,
) -> None:
    started, release = asyncio.Event(), asyncio.Event()
    runs: list[str] = []

    async def slow_tool(args: object) -> object:
        runs.append("run")
        if len(runs) == 1:  # the first run is slow; a second one (a takeover) would not wait
            started.set()
            await release.wait()
        return DeskDoneDto(status="booked, slowly")

    async with test_with(OfficeApplication, instances=2) as env:
        env.mock_llm(OfficeAgent).then_return(
            call_tools(tool_call(BookExpenseTool, purpose="taxi", amount=1.0)),
            reply_with(WorkflowFinishTextDto, text="done"),
        )
        env.mock_of(BookExpenseTool).run.side_effect = slow_tool
        running = asyncio.ensure_future(
            env.apps[0].execute(OfficeWorkflow, {"text": "book"}, owner_id="u")
        )
        await started.wait()
        for _ in range(6):  # 3 minutes on the clock: 6 leases' worth, renewed every 10 s
            await env.clock.advance(timedelta(seconds=30))
            assert await env.apps[1].recover() == []
        release.set()
        result = await running
    assert result.status is ExecutionStatus.COMPLETED
    assert runs == ["run"]  # nobody ran it a second time


async def test_a_new_tree_is_stored_with_its_first_commit_and_keeps_its_lease_until_then(
    tmp_path: Path,
) -> None:
    started, release = asyncio.Event(), asyncio.Event()
    calls: list[str] = []

    async def slow_first_call(request: ChatRequest) -> ChatResponse:
        calls.append("call")
        if len(calls) == 1:  # the new tree's first model call outlasts several leases
            started.set()
            await release.wait()
            return call_tools(tool_call(BookExpenseTool, purpose="taxi", amount=1.0)).response(
                request
            )
        return reply_with(WorkflowFinishTextDto, text="done").response(request)

    async with test_with(
        OfficeApplication, instances=2, providers=[FunctionProvider(slow_first_call)]
    ) as env:
        running = asyncio.ensure_future(
            env.apps[0].execute(OfficeWorkflow, {"text": "book"}, owner_id="u")
        )
        await started.wait()
        # Nothing is stored before the pass's first commit: no instance could recover it.
        later = env.clock.now() + timedelta(hours=1)
        assert await env.app.store.executions.find_interrupted(later, 10) == []
        for _ in range(6):  # 3 minutes on the clock: 6 leases' worth
            await env.clock.advance(timedelta(seconds=30))
            assert await env.apps[1].recover() == []
        release.set()
        result = await running
        assert result.status is ExecutionStatus.COMPLETED
        assert calls == ["call", "call"]
        again = await env.apps[1].get(result.execution_id)
        assert again.status is ExecutionStatus.COMPLETED


async def test_a_new_tree_whose_caller_goes_away_before_its_first_commit_leaves_nothing() -> None:
    started = asyncio.Event()

    async def hanging_first_call(request: ChatRequest) -> ChatResponse:
        started.set()
        await asyncio.Event().wait()  # never answers: the caller gives up first
        raise AssertionError("unreachable")

    async with test_with(
        OfficeApplication, providers=[FunctionProvider(hanging_first_call)]
    ) as env:
        running = asyncio.ensure_future(
            env.app.execute(OfficeWorkflow, {"text": "book"}, owner_id="u")
        )
        await started.wait()
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        later = env.clock.now() + timedelta(hours=1)
        assert await env.app.store.executions.find_interrupted(later, 10) == []
        assert await env.app.recover() == []


class _HeldRow:
    """Holds the commit that carries a tool's journal row (by the tool's name) until ``release``
    or a second, and says what happened around it, in order."""

    def __init__(
        self, store: Any, tool: str, runs: list[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        self.events: list[str] = []
        self.released = asyncio.Event()
        self.before: Callable[[], Awaitable[None]] | None = None
        """Run just before the held commit goes to the store."""
        write = store.write

        async def held_write(batch: Sequence[Any], **options: Any) -> Any:
            if not any(_is_row_of(item, tool) for item in batch):
                return await write(batch, **options)
            self.events.append("row sent")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.released.wait(), 1.0)
            if self.before is not None:
                await self.before()
            try:
                return await write(batch, **options)
            finally:
                self.events.append(f"row committed ({', '.join(runs)})")

        monkeypatch.setattr(store, "write", held_write)


def _is_row_of(write: Any, tool: str) -> bool:
    return (
        isinstance(write, AppendStep)
        and write.entry.kind == "tool-run"
        and f'"tool":"{tool}"' in write.entry.record_json
    )


def _office_model(events: list[str], runs: list[str], then: Callable[[], None]) -> FunctionProvider:
    """Returns a deposit, then books an expense, then finishes; says when it is called after
    the first tool, and what had run by then."""

    def model(request: ChatRequest) -> ChatResponse:
        done = sum(message.role is MessageRole.TOOL for message in request.messages)
        if done == 0:
            return call_tools(tool_call(ReturnDepositTool, lease_id="L-7")).response(request)
        if done == 1:
            events.append(f"model called ({', '.join(runs)})")
            then()
            book = call_tools(tool_call(BookExpenseTool, purpose="taxi", amount=3))
            return book.response(request)
        return reply_with(WorkflowFinishTextDto, text="done").response(request)

    return FunctionProvider(model)


@pytest.fixture(params=STORE_KINDS)
async def office_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """A fresh store's URL, of each kind."""
    async with store_url(request.param, tmp_path) as url:
        yield url


async def test_the_model_call_after_a_tool_goes_on_while_its_row_commits_and_the_next_tool_waits(
    office_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    recorded = OfficeRecorder()
    loop = asyncio.get_running_loop()
    held: list[_HeldRow] = []
    provider = _office_model(
        events, recorded.runs, lambda: loop.call_later(0.05, held[0].released.set)
    )
    app = await App.create(
        OfficeApplication,
        store=office_store,
        providers=[provider],
        dependencies=recording(recorded),
    )
    try:
        held.append(_HeldRow(app.store, "return-deposit-tool", recorded.runs, monkeypatch))
        held[0].events = events
        done = await app.execute(OfficeWorkflow, {"text": "go"}, owner_id="user-1")
        again = await app.get(done.execution_id, record=True)
    finally:
        await app.close()
    assert done.status is ExecutionStatus.COMPLETED
    run = recorded.runs[0]
    # The row went to the store at once; the model was called before its commit was
    # acknowledged, and the next tool ran only after it.
    assert events == ["row sent", f"model called ({run})", f"row committed ({run})"]
    assert recorded.runs[1] == "book-expense taxi"
    assert again.record is not None
    assert [step.kind for step in again.record.steps] == [
        "model-call",
        "tool-run",
        "model-call",
        "tool-run",
        "model-call",
    ]


async def test_a_tools_row_refused_on_its_way_stops_the_pass_before_the_next_tool_runs(
    office_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    recorded = OfficeRecorder()
    app = await App.create(
        OfficeApplication,
        store=office_store,
        providers=[_office_model(events, recorded.runs, lambda: None)],
        dependencies=recording(recorded),
    )
    try:
        held = _HeldRow(app.store, "return-deposit-tool", recorded.runs, monkeypatch)
        held.events = events
        held.released.set()
        # Another holder takes the tree while the row is on its way: the fence refuses it.
        held.before = lambda: _take_every_lease(office_store)
        with pytest.raises(LeaseLostError):
            await app.execute(OfficeWorkflow, {"text": "go"}, owner_id="user-1")
    finally:
        await app.close()
    assert len(recorded.runs) == 1, "the tool after the refused row did not run"
    assert recorded.runs[0].startswith("return-deposit L-7")


async def _take_every_lease(url: str) -> None:
    """What a takeover does to the lease rows: another holder, the next epoch."""
    statement = "UPDATE leases SET holder = 'elsewhere', epoch = epoch + 1"
    if url.startswith("sqlite:"):
        path = url.removeprefix("sqlite:///")
        with contextlib.closing(sqlite3.connect(path)) as connection, connection:
            connection.execute(statement)
        return
    from psycopg import AsyncConnection

    base, _, schema = url.partition("?schema=")
    async with await AsyncConnection.connect(base, autocommit=True) as connection:
        await connection.execute(f"UPDATE {schema}.{statement.removeprefix('UPDATE ')}")
