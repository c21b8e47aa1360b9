"""Moving a waiting tree to a new build on purpose (issue 55, point 4): a workflow that
continues an earlier version may declare how that version's waiting calls become its own
(``@workflow(continuation=...)``: a renamed tool, a changed input). The mapping is applied when
the tree next moves on the new build, in one commit under its lease; from then on the tree runs
under the new version, and its record keeps the move with every call it changed. A continuation
that cannot map a call moves nothing: the tree waits as it was."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agboss import (
    AssemblyError,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    ConfigurationError,
    ContinuationFailedError,
    ExecutionOutput,
    ExecutionStatus,
    PauseAnswerer,
    PendingCall,
    ToolHandler,
    agent,
    application,
    channel,
    channel_role,
    check_deploy,
    provide,
    tool,
    workflow,
)
from agboss.models import ChatRequest, MessageRole
from agboss.testing import TestClock, TestEnv, call_tools, test_with, tool_call
from tests.apps.desk import (
    BookExpenseTool,
    DeskDepositApprovalChannel,
    DeskRecorder,
    LookUpTool,
    OfficeAgent,
    OfficeApplication,
    ReturnDepositTool,
    ShredTool,
    StampTool,
)
from tests.apps.office_parts import DeskDoneDto, office_flow
from tests.apps.recorded import Records, recording
from tests.stores import STORE_KINDS, store_url
from tests.test_builds import OFFICE
from tests.test_builds_side_by_side import SECOND, _answer_channels, _owners, _paused
from tests.test_pauses import BOTH, DONE
from tests.waiting import eventually

EXPENSE_IN_CENTS = "file-expense taxi 1250"


class FiledExpenseDto(BaseModel):
    """The next build's expense: its amount in cents, where the earlier took a float."""

    purpose: str
    cents: int


@channel_role(
    name="expense-approval-channel",
    description="The thread's owner confirms an expense",
    approves=FiledExpenseDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
)
class FiledExpenseApprovalChannel(ChannelOf[FiledExpenseDto]): ...


@channel(name="button-expense-approval-channel", description="Shows the owner two buttons")
class ButtonFiledExpenseApprovalChannel(FiledExpenseApprovalChannel):
    async def send(self, ask: ChannelAsk[FiledExpenseDto]) -> ChannelOutcome:
        return ChannelOutcome.await_reply()


@tool(
    name="file-expense-tool",
    description="Files an expense, in cents",
    input=FiledExpenseDto,
    output=DeskDoneDto,
    channel=FiledExpenseApprovalChannel,
    deps=[DeskRecorder],
)
class FileExpenseTool(Records[DeskRecorder], ToolHandler[FiledExpenseDto, DeskDoneDto]):
    async def run(self, args: FiledExpenseDto) -> DeskDoneDto:
        self.recorded.runs.append(f"file-expense {args.purpose} {args.cents}")
        return DeskDoneDto(status=f"filed {args.purpose}")


@tool(
    name="book-expense-tool",
    description="Books an expense, in cents",
    input=FiledExpenseDto,
    output=DeskDoneDto,
    channel=FiledExpenseApprovalChannel,
    deps=[DeskRecorder],
)
class BookInCentsTool(Records[DeskRecorder], ToolHandler[FiledExpenseDto, DeskDoneDto]):
    async def run(self, args: FiledExpenseDto) -> DeskDoneDto:
        self.recorded.runs.append(f"book-expense {args.purpose} {args.cents}")
        return DeskDoneDto(status=f"booked {args.purpose}")


def in_cents(call: PendingCall) -> PendingCall:
    """The continuation: the earlier build's booked expense, filed in cents."""
    if call.tool != "book-expense-tool":
        return call
    cents = round(float(call.arguments["amount"]) * 100)
    return replace(
        call,
        tool="file-expense-tool",
        arguments={"purpose": call.arguments["purpose"], "cents": cents},
    )


def booked_in_cents(call: PendingCall) -> PendingCall:
    """The continuation of a build whose expense tool kept its name and took cents."""
    if call.tool != "book-expense-tool":
        return call
    cents = round(float(call.arguments["amount"]) * 100)
    return replace(call, arguments={"purpose": call.arguments["purpose"], "cents": cents})


def refusing(call: PendingCall) -> PendingCall:
    raise KeyError(f"no mapping for {call.tool}")


def _next_build(continuation: Any, *tools: type) -> tuple[type, type]:
    """Version 2.0.0 of the office application — its application and its agent: expenses in
    cents (by ``tools``, beside the deposit's)."""

    @agent(
        name="office-agent",
        description="Returns deposits and files expenses",
        prompt="Do what is asked.",
        model="moonshotai/kimi-k2.6",
        tools=[ReturnDepositTool, *tools],
    )
    class NextAgent: ...

    @workflow(
        name=OFFICE,
        version="2.0.0",
        flow=office_flow(NextAgent),
        continues=["1.0.*"],
        continuation=continuation,
    )
    class NextWorkflow: ...

    @application(
        name="office-application",
        workflows=[NextWorkflow],
        channels=[DeskDepositApprovalChannel, ButtonFiledExpenseApprovalChannel],
        dependencies=[provide(DeskRecorder)],
    )
    class NextApplication: ...

    return NextApplication, NextAgent


def in_cents_and_renumbered(call: PendingCall) -> PendingCall:
    """Both calls of the one turn mapped: the expense in cents, the lease renumbered."""
    if call.tool == "return-deposit-tool":
        return replace(call, arguments={"lease_id": f"{call.arguments['lease_id']}-2"})
    return in_cents(call)


ALL_BUT_EXPENSES = (StampTool, ShredTool, LookUpTool)
IN_CENTS, NEXT_AGENT = _next_build(in_cents, FileExpenseTool, *ALL_BUT_EXPENSES)
BOTH_MAPPED, BOTH_MAPPED_AGENT = _next_build(
    in_cents_and_renumbered, FileExpenseTool, *ALL_BUT_EXPENSES
)
REFUSING, _ = _next_build(refusing, FileExpenseTool, *ALL_BUT_EXPENSES)
WITHOUT_STAMPS, UNSTAMPING_AGENT = _next_build(in_cents, FileExpenseTool)
BOOKED_IN_CENTS, BOOKING_AGENT = _next_build(booked_in_cents, BookInCentsTool)


def _opened(
    application: type, url: str, clock: TestClock, ran: DeskRecorder
) -> AbstractAsyncContextManager[TestEnv]:
    """A build open on the shared store and clock, its tools' runs kept in ``ran``."""
    return test_with(application, store=url, clock=clock, dependencies=recording(ran))


@asynccontextmanager
async def _side_by_side(
    kind: str, tmp_path: Path, next_build: type
) -> AsyncIterator[tuple[TestEnv, DeskRecorder, TestEnv, DeskRecorder]]:
    """The office application's 1.0.0 and ``next_build`` open side by side on one store and
    clock: each build with what its tools ran."""
    clock = TestClock(datetime.now(UTC))
    old_ran, new_ran = DeskRecorder(), DeskRecorder()
    async with (
        store_url(kind, tmp_path) as url,
        _opened(OfficeApplication, url, clock, old_ran) as old,
        _opened(next_build, url, clock, new_ran) as new,
    ):
        yield old, old_ran, new, new_ran


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_continuation_moves_a_waiting_tree_to_the_new_build_and_runs_the_mapped_call_once(
    kind: str, tmp_path: Path
) -> None:
    async with _side_by_side(kind, tmp_path, IN_CENTS) as (old, old_ran, new, new_ran):
        old.mock_llm(OfficeAgent).then_return(BOTH)
        began = await _paused(old)
        assert began.workflow_version == "1.0.0"
        new.mock_llm(NEXT_AGENT).then_return(DONE)
        # The owner answers on the new build: the tree moves to it first, and the answer is
        # read against the call as mapped.
        moved = await new.app.resume(
            _owners(began).pause_id or "", decision={"approved": True}, owner_id="user-1"
        )
        assert moved.workflow_version == "2.0.0"
        assert moved.workflow_fingerprint == new.app.assembly.workflows_by_name[OFFICE].fingerprint
        assert new_ran.runs == [EXPENSE_IN_CENTS]
        # The old build records the desk's answer, and leaves the tree to the new one.
        await _answer_channels(old, moved)
        await eventually(
            lambda: _done(new, began.execution_id), "the new build completing the moved tree"
        )
        assert old_ran.runs == []
        assert sorted(new_ran.runs) == sorted([EXPENSE_IN_CENTS, "return-deposit L-7 as user-1"])
        record = (await new.app.get(began.execution_id, record=True)).record
        assert record is not None
        [move] = record.continuations
        assert (move.from_version, move.to_version) == ("1.0.0", "2.0.0")
        assert move.from_fingerprint == began.workflow_fingerprint
        [call] = move.calls
        assert (call.before_tool, call.before_arguments) == (
            "book-expense-tool",
            {"purpose": "taxi", "amount": 12.5},
        )
        assert (call.tool, call.arguments) == (
            "file-expense-tool",
            {"purpose": "taxi", "cents": 1250},
        )


async def _done(env: Any, execution_id: str) -> bool:
    return (await env.app.get(execution_id)).status is ExecutionStatus.COMPLETED


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_continuation_that_cannot_map_a_call_moves_nothing_and_the_tree_waits(
    kind: str, tmp_path: Path
) -> None:
    clock = TestClock(datetime.now(UTC))
    old_ran, new_ran = DeskRecorder(), DeskRecorder()
    async with store_url(kind, tmp_path) as url:
        async with _opened(OfficeApplication, url, clock, old_ran) as old:
            old.mock_llm(OfficeAgent).then_return(BOTH)
            began = await _paused(old)
        async with _opened(REFUSING, url, clock, new_ran) as new:
            with pytest.raises(ContinuationFailedError) as refused:
                await new.app.resume(
                    _owners(began).pause_id or "", decision={"approved": True}, owner_id="user-1"
                )
            assert refused.value.code == "definition.continuation-failed"
            assert "KeyError" in refused.value.message
            still = await new.app.get(began.execution_id, record=True)
            assert still.status is ExecutionStatus.PAUSED
            assert still.workflow_version == "1.0.0"
            assert [p.pause_ref for p in still.pending] == [p.pause_ref for p in began.pending]
            assert still.record is not None
            assert still.record.continuations == []
        assert new_ran.runs == []


async def test_a_continuation_without_earlier_versions_is_refused_at_create() -> None:
    @workflow(name=OFFICE, version="2.0.0", flow=office_flow(OfficeAgent), continuation=in_cents)
    class Lonely: ...

    @application(name="office-application", workflows=[Lonely])
    class LonelyApplication: ...

    with pytest.raises(AssemblyError) as refused:
        async with test_with(LonelyApplication):
            pass
    said = [(v.rule, v.component) for v in refused.value.violations]
    assert said.count(("workflow.continuation", OFFICE)) == 1
    assert "continues no earlier version" in str(refused.value)


def test_a_continuation_that_is_no_function_is_refused_where_it_is_written() -> None:
    with pytest.raises(ConfigurationError):
        workflow(
            name=OFFICE,
            version="2.0.0",
            flow=office_flow(OfficeAgent),
            continues=["1.*"],
            continuation="in_cents",  # type: ignore[arg-type]
        )


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_call_that_ran_under_the_earlier_build_replays_from_its_journal_without_its_tool(
    kind: str, tmp_path: Path
) -> None:
    clock = TestClock(datetime.now(UTC))
    old_ran, new_ran = DeskRecorder(), DeskRecorder()
    stamped_and_booked = call_tools(
        tool_call(StampTool, lease_id="L-7"),
        tool_call(BookExpenseTool, purpose="taxi", amount=12.5),
    )
    async with store_url(kind, tmp_path) as url:
        async with _opened(OfficeApplication, url, clock, old_ran) as old:
            old.mock_llm(OfficeAgent).then_return(stamped_and_booked)
            began = await _paused(old)
        assert old_ran.runs == ["stamp L-7"]  # approved at once: ran before the tree waited
        # The next build has no stamp tool: the stamp's call replays from its journal.
        async with _opened(WITHOUT_STAMPS, url, clock, new_ran) as new:
            script = new.mock_llm(UNSTAMPING_AGENT).then_return(DONE)
            done = await new.app.resume(
                _owners(began).pause_id or "", decision={"approved": True}, owner_id="user-1"
            )
        assert done.status is ExecutionStatus.COMPLETED
        assert new_ran.runs == [EXPENSE_IN_CENTS]
        [request] = script.requests
        assert isinstance(request, ChatRequest)
        [said] = [m for m in request.messages if m.role is MessageRole.ASSISTANT]
        assert [call.name for call in said.tool_calls] == ["stamp-tool", "file-expense-tool"]
        results = [m.content for m in request.messages if m.role is MessageRole.TOOL]
        assert results == ['{"status":"stamped"}', '{"status":"filed taxi"}']


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_arguments_an_approver_gave_for_the_call_before_the_deploy_never_run(
    kind: str, tmp_path: Path
) -> None:
    async with _side_by_side(kind, tmp_path, BOOKED_IN_CENTS) as (old, old_ran, new, new_ran):
        old.mock_llm(OfficeAgent).then_return(BOTH)
        script = new.mock_llm(BOOKING_AGENT).then_return(DONE)
        began = await _paused(old)
        # The desk answers on the next build: the tree moves to it, its deposit returned.
        await _answer_channels(new, began)
        assert new_ran.runs == ["return-deposit L-7 as user-1"]
        # The owner answers on the old build, with arguments as the old build took them: the
        # answer is recorded there, and the next build moves the tree — without running them.
        await old.app.resume(
            _owners(began).pause_id or "",
            decision={"approved": True, "override_arguments": {"purpose": "cab", "amount": 20}},
            owner_id="user-1",
        )
        await eventually(lambda: _done(new, began.execution_id), "the next build completing it")
        assert new_ran.runs == ["return-deposit L-7 as user-1"]
        assert old_ran.runs == []
        [request] = script.requests
        assert isinstance(request, ChatRequest)
        refused = [m.content for m in request.messages if m.role is MessageRole.TOOL][1]
        assert "do not fit book-expense-tool since a deploy changed it" in refused


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_the_deploy_check_runs_a_continuation_on_every_waiting_call_and_lists_where_it_fails(
    kind: str, tmp_path: Path
) -> None:
    clock = TestClock(datetime.now(UTC))
    async with store_url(kind, tmp_path) as url:
        async with _opened(OfficeApplication, url, clock, DeskRecorder()) as old:
            old.mock_llm(OfficeAgent).then_return(BOTH, BOTH)
            first = await _paused(old)
            await clock.advance(timedelta(seconds=1))  # listed oldest first
            second = await _paused(old)
        maps = await check_deploy(IN_CENTS, store=url)
        assert maps.passed, maps
        fails = await check_deploy(REFUSING, store=url)
        assert not fails.passed
        [version] = fails.versions
        assert (version.workflow, version.version, version.rule) == (
            OFFICE,
            "1.0.0",
            "workflow.continuation-fails",
        )
        assert "cannot move 2 waiting tree(s)" in version.message
        assert "KeyError" in version.message
        assert [tree.execution_id for tree in fails.trees] == [
            first.execution_id,
            second.execution_id,
        ]
        assert fails.complete
        cut = await check_deploy(REFUSING, store=url, limit=1)
        assert ([t.execution_id for t in cut.trees], cut.complete) == ([first.execution_id], False)
        # Nothing was written: the trees wait as they began, and the next build moves them.
        async with _opened(IN_CENTS, url, clock, DeskRecorder()) as new:
            still = await new.app.get(first.execution_id, record=True)
            assert still.workflow_version == "1.0.0"
            assert still.record is not None
            assert still.record.continuations == []


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_pass_that_moves_an_answer_recorded_elsewhere_moves_the_tree_to_the_new_build_first(
    kind: str, tmp_path: Path
) -> None:
    clock = TestClock(datetime.now(UTC))
    new_ran, third_ran = DeskRecorder(), DeskRecorder()
    async with store_url(kind, tmp_path) as url:
        async with _opened(OfficeApplication, url, clock, DeskRecorder()) as old:
            old.mock_llm(OfficeAgent).then_return(BOTH)
            began = await _paused(old)
        async with (
            _opened(IN_CENTS, url, clock, new_ran) as new,
            _opened(SECOND, url, clock, third_ran) as third,
        ):
            new.mock_llm(NEXT_AGENT).then_return(DONE)
            # A build that serves neither 1.0.0 nor maps it records the answer, and says so:
            # the pass of the build whose continuation maps it moves the tree there first.
            left = await third.app.resume(
                _owners(began).pause_id or "", decision={"approved": True}, owner_id="user-1"
            )
            assert left.workflow_version == "1.0.0"

            async def moved() -> bool:
                return EXPENSE_IN_CENTS in new_ran.runs and await _rested(new, began)

            await eventually(moved, "the next build moving the tree by its continuation")
            record = (await new.app.get(began.execution_id, record=True)).record
            assert record is not None
            assert [move.to_version for move in record.continuations] == ["2.0.0"]
        assert third_ran.runs == []


async def _rested(env: TestEnv, began: ExecutionOutput) -> bool:
    found = await env.app.get(began.execution_id)
    return found.status is ExecutionStatus.PAUSED and found.workflow_version == "2.0.0"


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_every_mapped_call_of_one_model_turn_is_mapped_in_the_turn_a_replay_reads(
    kind: str, tmp_path: Path
) -> None:
    async with _side_by_side(kind, tmp_path, BOTH_MAPPED) as (old, old_ran, new, new_ran):
        old.mock_llm(OfficeAgent).then_return(BOTH)
        script = new.mock_llm(BOTH_MAPPED_AGENT).then_return(DONE)
        began = await _paused(old)
        await new.app.resume(
            _owners(began).pause_id or "", decision={"approved": True}, owner_id="user-1"
        )
        done = await _answer_channels(new, began)
        assert done.status is ExecutionStatus.COMPLETED
        assert sorted(new_ran.runs) == sorted([EXPENSE_IN_CENTS, "return-deposit L-7-2 as user-1"])
        assert old_ran.runs == []
        [request] = script.requests
        assert isinstance(request, ChatRequest)
        [said] = [m for m in request.messages if m.role is MessageRole.ASSISTANT]
        assert [(c.name, json.loads(c.arguments)) for c in said.tool_calls] == [
            ("return-deposit-tool", {"lease_id": "L-7-2"}),
            ("file-expense-tool", {"purpose": "taxi", "cents": 1250}),
        ]
        record = (await new.app.get(began.execution_id, record=True)).record
        assert record is not None
        [move] = record.continuations
        assert sorted(call.tool for call in move.calls) == [
            "file-expense-tool",
            "return-deposit-tool",
        ]
