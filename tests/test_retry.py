"""`App.retry` (issue 39): a failed execution tree runs again from its journal, in place — what
ran is not run again, recorded decisions are kept, the failed step runs again, a question the
failure withdrew is asked again under a new id — and what cannot be retried is refused with its
own code; on both stores, through the public API."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agboss import (
    AgentFailedError,
    App,
    ExecutionStatus,
    FinalFailureError,
    FunctionProvider,
    NotFailedError,
    NotPausedError,
    PauseResolution,
    PauseStatus,
    UnknownExecutionError,
    WorkflowStartTextDto,
)
from agboss.cli._main import cli
from agboss.models import ChatRequest, ChatResponse, MessageRole
from agboss.store.writes import AcquireLease, ReleaseLease, write_one
from agboss.testing import (
    TestEnv,
    call_tools,
    fail_with,
    invalid_answer,
    reply_with,
    test_with,
    tool_call,
)
from tests.apps import desk, tree_app
from tests.apps.desk import DeskRecorder, OfficeApplication, OfficeWorkflow
from tests.apps.recorded import recording
from tests.apps.tree_app import (
    AlphaAgent,
    BareFailFastWorkflow,
    CheckDto,
    FailingAgent,
    ItemAgent,
    NestedWorkflow,
    ShipTool,
    StepChildWorkflow,
    SummaryDto,
    TreeApplication,
    TreeRecorder,
)
from tests.stores import STORE_KINDS, store_url
from tests.test_failed import ProviderDownError
from tests.test_round_trips import ASK, DONE
from tests.test_trees import ORDERS, pauses
from tests.waiting import eventually

DOWN: list[str] = []
"""While it holds a word, the office's model provider is down for a closing call."""


def office_model(request: ChatRequest) -> ChatResponse:
    """The office's model: asks to book the taxi, then closes — unless the provider is down."""
    if any(message.role is MessageRole.TOOL for message in request.messages):
        if DOWN:
            raise ProviderDownError(f"the provider is down ({DOWN[0]})")
        return DONE.response(request)
    if any("hello" in message.content for message in request.messages):
        return DONE.response(request)  # nothing to book: done at once
    return ASK.response(request)


@pytest.fixture(params=STORE_KINDS)
async def url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    DOWN.clear()
    async with store_url(request.param, tmp_path) as made:
        yield made


@pytest.fixture
def recorded() -> DeskRecorder:
    """What the office records in a test (the module's tests open their instances)."""
    return DeskRecorder()


@pytest.fixture
async def office(url: str, recorded: DeskRecorder) -> AsyncIterator[TestEnv]:
    async with test_with(
        OfficeApplication,
        store=url,
        providers=[FunctionProvider(office_model)],
        dependencies=recording(recorded),
    ) as env:
        yield env


async def failed_after_the_tool(env: TestEnv, recorded: DeskRecorder) -> str:
    """An expense approved and booked, then the provider down for the closing call: the id of
    the failed tree."""
    paused = await env.app.execute(
        OfficeWorkflow, WorkflowStartTextDto(text="Book the taxi"), owner_id="user-1"
    )
    [pause] = paused.pending
    assert pause.pause_id is not None
    DOWN.append("503")
    with pytest.raises(AgentFailedError, match="the provider is down"):
        await env.app.resume(pause.pause_id, decision={"approved": True}, owner_id="user-1")
    assert recorded.runs == ["book-expense taxi 12.5"]
    return paused.execution_id


async def audit_trail(env: TestEnv, execution_id: str) -> list[Any]:
    store = env.app.store
    return await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
        "default", execution_id
    )


async def test_a_model_outage_after_an_approved_tool_is_healed_by_retry(
    office: TestEnv, recorded: DeskRecorder
) -> None:
    execution_id = await failed_after_the_tool(office, recorded)
    trail = await audit_trail(office, execution_id)
    [listed] = (await office.app.failed()).entries
    assert listed.execution_id == execution_id
    DOWN.clear()  # the provider is back
    result = await office.app.retry(execution_id, retried_by="ops-ada", record=True)
    assert result.status is ExecutionStatus.COMPLETED
    assert result.execution_id == execution_id  # reopened in place: the ids callers hold
    assert recorded.runs == ["book-expense taxi 12.5"]  # the approved tool did not run again
    assert await audit_trail(office, execution_id) == trail  # no decision asked again
    assert result.record is not None
    [retry] = result.record.retries
    assert retry.generation == 1
    assert retry.retried_by == "ops-ada"
    assert retry.retried_at == office.clock.now().isoformat()
    assert retry.failure is not None  # the failure it replaced stays in the history
    assert retry.failure.code == "agent.failed"
    assert "the provider is down (503)" in retry.failure.message
    kinds = [step.kind for step in result.record.steps]
    assert kinds.count("tool-run") == 1
    assert (await office.app.failed()).entries == []  # no longer failed
    assert (await office.app.get(execution_id)).status is ExecutionStatus.COMPLETED
    with pytest.raises(NotFailedError) as refused:
        await office.app.retry(execution_id)
    assert refused.value.code == "run.not-failed"
    assert refused.value.status == "completed"


async def test_a_retry_that_fails_again_leaves_the_tree_failed_and_retryable(
    office: TestEnv,
    recorded: DeskRecorder,
) -> None:
    execution_id = await failed_after_the_tool(office, recorded)
    DOWN[0] = "still 503"
    with pytest.raises(AgentFailedError, match="still 503"):
        await office.app.retry(execution_id, retried_by="ops")
    [listed] = (await office.app.failed()).entries
    assert "still 503" in listed.message
    DOWN.clear()
    result = await office.app.retry(execution_id, record=True)
    assert result.status is ExecutionStatus.COMPLETED
    assert result.record is not None
    assert [(r.generation, r.retried_by) for r in result.record.retries] == [(1, "ops"), (2, None)]
    first, second = [r.failure for r in result.record.retries]
    assert first is not None
    assert "(503)" in first.message
    assert second is not None
    assert "(still 503)" in second.message
    assert recorded.runs == ["book-expense taxi 12.5"]


async def test_what_did_not_fail_is_refused_with_its_code(
    office: TestEnv, recorded: DeskRecorder
) -> None:
    done = await office.app.execute(
        OfficeWorkflow, WorkflowStartTextDto(text="Say hello"), owner_id="user-1"
    )
    paused = await office.app.execute(
        OfficeWorkflow, WorkflowStartTextDto(text="Book the taxi"), owner_id="user-1"
    )
    assert paused.status is ExecutionStatus.PAUSED
    cancelled = await office.app.execute(
        OfficeWorkflow, WorkflowStartTextDto(text="Book the taxi"), owner_id="user-2"
    )
    await office.app.cancel(cancelled.thread_id)
    for output, status in (
        (done, "completed"),
        (paused, "paused"),
        (cancelled, "cancelled"),
    ):
        with pytest.raises(NotFailedError) as refused:
            await office.app.retry(output.execution_id)
        assert refused.value.code == "run.not-failed"
        assert refused.value.status == status
        assert f"it is {status}" in refused.value.message
        assert refused.value.hint
    failed = await failed_after_the_tool(office, recorded)
    for execution_id, tenant in (("ex-nobody", None), (failed, "another-tenant")):
        with pytest.raises(UnknownExecutionError) as unknown:
            await office.app.retry(execution_id, tenant_id=tenant)
        assert unknown.value.code == "run.unknown"
    with pytest.raises(AgentFailedError):  # refusals moved nothing
        await office.app.get(failed)
    assert recorded.runs == ["book-expense taxi 12.5"]


async def test_a_tree_still_running_is_refused(office: TestEnv) -> None:
    paused = await office.app.execute(
        OfficeWorkflow, WorkflowStartTextDto(text="Book the taxi"), owner_id="user-1"
    )
    [pause] = paused.pending
    assert pause.pause_id is not None
    inside, leave = asyncio.Event(), asyncio.Event()

    async def booking(args: Any) -> Any:
        inside.set()
        await leave.wait()
        return desk.DeskDoneDto(status="booked")

    office.mock_of(desk.BookExpenseTool).run.side_effect = booking
    moving = asyncio.ensure_future(
        office.app.resume(pause.pause_id, decision={"approved": True}, owner_id="user-1")
    )
    await inside.wait()  # its pass is inside the tool: the tree is running
    with pytest.raises(NotFailedError) as refused:
        await office.app.retry(paused.execution_id)
    assert (refused.value.code, refused.value.status) == ("run.not-failed", "running")
    leave.set()
    assert (await moving).status is ExecutionStatus.COMPLETED


async def test_a_failure_decided_by_journaled_steps_is_refused(url: str) -> None:
    async with test_with(OfficeApplication, store=url) as env:
        env.mock_llm(desk.OfficeAgent).then_return(
            *(invalid_answer(nonsense=True) for _ in range(8))
        )
        with pytest.raises(AgentFailedError, match="validation attempts") as failed:
            await env.app.execute(
                OfficeWorkflow, WorkflowStartTextDto(text="Book the taxi"), owner_id="u"
            )
        assert failed.value.final
        [listed] = (await env.app.failed()).entries
        with pytest.raises(FinalFailureError) as refused:
            await env.app.retry(listed.execution_id)
        assert refused.value.code == "run.failure-final"
        assert refused.value.failure_code == "agent.failed"
        assert "replay the same steps" in refused.value.message
        assert (await env.app.failed()).entries == [listed]  # still failed, untouched


async def test_a_question_the_failure_withdrew_is_asked_again_under_a_new_id(
    url: str, tmp_path: Path
) -> None:
    """FailFast: alpha waits on o2 while the failing agent's channel cannot send o8; the tree
    fails and o2 is withdrawn. Once the channel is fixed, a retry asks both again, anew."""
    tree = TreeRecorder()
    async with test_with(TreeApplication, store=url, dependencies=recording(tree)) as env:
        desk_channel = env.mock_of(tree_app.DeskHoldApprovalChannel)
        tree.decline.add("o8")
        pauses(env, AlphaAgent, "o2", "alpha ok")
        env.mock_llm(FailingAgent).then_return(
            call_tools(tool_call(ShipTool, order_id="o8")),
            reply_with(CheckDto, verdict="o8 done"),
        )
        with pytest.raises(AgentFailedError, match="declined"):
            await env.app.execute(BareFailFastWorkflow, ORDERS, owner_id="u")
        [listed] = (await env.app.failed()).entries
        [old] = [
            c.args[0].pause_id
            for c in desk_channel.send.call_args_list
            if c.args[0].value.arguments.order_id == "o2"
        ]
        withdrawn = await env.app.store.pauses.find_by_tenant_id_and_pause_id("default", old)
        assert withdrawn is not None
        assert withdrawn.status is PauseStatus.CANCELLED
        tree.decline.clear()  # the fix, deployed
        retried = await env.app.retry(listed.execution_id)
        assert retried.status is ExecutionStatus.PAUSED
        asked = {p.ask.arguments["order_id"]: p.pause_id for p in retried.pending}
        assert set(asked) == {"o2", "o8"}
        assert old not in asked.values()  # a new id for the question asked again
        with pytest.raises(NotPausedError):
            await env.app.resume(old, decision={"approved": True}, owner_id="u")
        for pause_id in asked.values():
            assert pause_id is not None
            result = await env.app.resume(pause_id, decision={"approved": True}, owner_id="u")
        assert result.status is ExecutionStatus.COMPLETED
        assert isinstance(result.output, SummaryDto)
        assert sorted(tree.runs) == ["ship o2", "ship o8"]
        record = (await env.app.get(listed.execution_id, record=True)).record
        assert record is not None
        entries = [(e.ask_order, e.generation, e.resolution) for e in _trail(record.pauses)]
        assert entries == [  # the history keeps both askings of each
            ("o2", 0, PauseResolution.WITHDRAWN),
            ("o8", 0, PauseResolution.SEND_FAILED),
            ("o2", 1, PauseResolution.REPLIED),
            ("o8", 1, PauseResolution.REPLIED),
        ]


class _Entry:
    def __init__(self, entry: Any) -> None:
        self.ask_order = entry.step.tool_call.arguments["order_id"]
        self.generation = entry.generation
        self.resolution = entry.resolution


def _trail(entries: list[Any]) -> list[_Entry]:
    return [_Entry(entry) for entry in entries]


async def test_a_failed_child_reruns_within_its_root(url: str) -> None:
    tree = TreeRecorder()
    async with test_with(TreeApplication, store=url, dependencies=recording(tree)) as env:
        script = env.mock_llm(AlphaAgent)
        script.then_return(fail_with(ProviderDownError("the provider is down")))
        with pytest.raises(AgentFailedError, match="provider is down"):
            await env.app.execute(StepChildWorkflow, ORDERS, owner_id="u")
        [listed] = (await env.app.failed()).entries
        child_id = f"{listed.execution_id}/"
        outline = await env.app.store.executions.outline(listed.execution_id)
        [child] = [node for node in outline if node.execution_id.startswith(child_id)]
        assert child.status is ExecutionStatus.FAILED
        script.then_return(reply_with(CheckDto, verdict="alpha ok"))
        result = await env.app.retry(child.execution_id)  # a child's id retries its root
        assert result.execution_id == listed.execution_id
        assert result.status is ExecutionStatus.COMPLETED
        assert result.output == CheckDto(verdict="alpha ok")
        [kid] = result.children
        assert kid.status is ExecutionStatus.COMPLETED


async def test_a_dropped_sibling_subtree_is_reopened_and_asks_again(url: str) -> None:
    """NestedWorkflow: a child fans out per item (grandchildren asking), its sibling child
    asks, runs its tool once answered, then its model is down: FailFast cancels the fan-out
    and withdraws its three questions. A retry replays the sibling (its tool not run again)
    and reopens the cancelled subtree, whose questions are asked again under new ids."""
    tree = TreeRecorder()
    async with test_with(TreeApplication, store=url, dependencies=recording(tree)) as env:
        for order in ORDERS.orders:
            env.mock_llm(ItemAgent).when(input=order).then_return(
                call_tools(tool_call(ShipTool, order_id=order.order_id)),
                reply_with(CheckDto, verdict=f"{order.order_id} ok"),
            )
        env.mock_llm(AlphaAgent).then_return(
            call_tools(tool_call(ShipTool, order_id="a1")),
            fail_with(ProviderDownError("the provider is down")),
            reply_with(CheckDto, verdict="alpha ok"),
        )
        paused = await env.app.execute(NestedWorkflow, ORDERS, owner_id="u")
        first = {p.ask.arguments["order_id"]: p.pause_id for p in paused.pending}
        assert set(first) == {"o0", "o1", "o2", "a1"}
        alpha = first.pop("a1")
        assert alpha is not None
        with pytest.raises(AgentFailedError, match="provider is down"):
            await env.app.resume(alpha, decision={"approved": True}, owner_id="u")
        assert tree.runs == ["ship a1"]
        outline = await env.app.store.executions.outline(paused.execution_id)
        closed = {node.status for node in outline if node.execution_id != paused.execution_id}
        assert closed == {ExecutionStatus.FAILED, ExecutionStatus.CANCELLED}
        retried = await env.app.retry(paused.execution_id)
        assert retried.status is ExecutionStatus.PAUSED
        again = {p.ask.arguments["order_id"]: p.pause_id for p in retried.pending}
        assert set(again) == {"o0", "o1", "o2"}
        assert not set(again.values()) & set(first.values())  # each asked anew
        assert tree.runs == ["ship a1"]  # the answered sibling's tool did not run again
        for pause_id in first.values():
            assert pause_id is not None
            with pytest.raises(NotPausedError):
                await env.app.resume(pause_id, decision={"approved": True}, owner_id="u")
        for pause_id in again.values():
            assert pause_id is not None
            result = await env.app.resume(pause_id, decision={"approved": True}, owner_id="u")
        assert result.status is ExecutionStatus.COMPLETED
        assert sorted(tree.runs) == ["ship a1", "ship o0", "ship o1", "ship o2"]
        outline = await env.app.store.executions.outline(paused.execution_id)
        assert {node.status for node in outline} == {ExecutionStatus.COMPLETED}


async def test_two_instances_retrying_one_tree_run_it_once(
    url: str, recorded: DeskRecorder
) -> None:
    async with test_with(
        OfficeApplication,
        store=url,
        providers=[FunctionProvider(office_model)],
        instances=2,
        dependencies=recording(recorded),
    ) as env:
        execution_id = await failed_after_the_tool(env, recorded)
        DOWN.clear()
        # At once: the test holds the tree's lease until both retries read the failure and
        # wait for it (else one could begin after the other's pass ended the tree).
        store = env.app.store
        held = await write_one(store, AcquireLease(execution_id, "the-test", timedelta(minutes=1)))
        assert held is not None
        retries = asyncio.gather(
            env.apps[0].retry(execution_id, record=True),
            env.apps[1].retry(execution_id, record=True),
            return_exceptions=True,
        )

        def both_wait() -> bool:
            return all(execution_id in app._engine.wakeups._waiting for app in env.apps)

        await eventually(both_wait, "both retries waiting for the tree's lease")
        await store.write([ReleaseLease(held.fence)], fence=held.fence)
        first, second = await retries
        outcomes = [first, second]
        assert all(not isinstance(o, BaseException) for o in outcomes), outcomes
        for output in outcomes:
            assert not isinstance(output, BaseException)
            assert output.status is ExecutionStatus.COMPLETED
            assert output.record is not None
            assert len(output.record.retries) == 1  # retried once, by one of them
        assert recorded.runs == ["book-expense taxi 12.5"]


CLI_RECORDED = DeskRecorder()
"""What `office_app` records into: the test that runs the command line sets its own."""


async def office_app() -> App:
    """``--app tests.test_retry:office_app``: the office with its model, on the test's store."""
    return await App.create(
        OfficeApplication,
        store=os.environ["RETRY_TEST_STORE"],
        providers=[FunctionProvider(office_model)],
        dependencies=recording(CLI_RECORDED),
    )


async def test_agboss_retry_runs_a_failed_tree_again(
    url: str, recorded: DeskRecorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``agboss retry ID``: the command line retries with the application's models."""
    async with test_with(
        OfficeApplication,
        store=url,
        providers=[FunctionProvider(office_model)],
        dependencies=recording(recorded),
    ) as env:
        execution_id = await failed_after_the_tool(env, recorded)
    monkeypatch.setenv("RETRY_TEST_STORE", url)
    monkeypatch.setattr(sys.modules[__name__], "CLI_RECORDED", recorded)
    target = ["--app", "tests.test_retry:office_app", "--store", url]
    refused = await asyncio.to_thread(CliRunner().invoke, cli, ["retry", "ex-no", *target])
    assert refused.exit_code == 1
    assert "run.unknown" in refused.output
    DOWN.clear()
    done = await asyncio.to_thread(
        CliRunner().invoke, cli, ["retry", execution_id, *target, "--by", "ops-cli", "--json"]
    )
    assert done.exit_code == 0, done.output
    shown = json.loads(done.output)
    assert (shown["execution_id"], shown["status"]) == (execution_id, "completed")
    assert recorded.runs == ["book-expense taxi 12.5"]
    again = await asyncio.to_thread(CliRunner().invoke, cli, ["retry", execution_id, *target])
    assert again.exit_code == 1
    assert "run.not-failed" in again.output
