"""Questions that expire (issue 27): a deadline on the role (or the tool), stored with the
pause, applied by the instance's timer or any instance's sweep on the application's Clock,
and decided by ``on_expiry`` — on both stores, through the public API."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from starlette.applications import Starlette
from starlette.routing import Mount

from agboss import (
    AgentFailedError,
    App,
    AssemblyError,
    ChannelOf,
    DtoValidationError,
    ExecutionOutput,
    ExecutionStatus,
    NotPausedError,
    OnExpiry,
    PauseAnswerer,
    PauseExpiredError,
    PauseResolution,
    PauseStatus,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
    agent,
    application,
    channel,
    channel_role,
    tool,
    workflow,
)
from agboss.cli._main import cli
from agboss.engine.questions import spoken
from agboss.store.writes import AcquireLease, ReleaseLease
from agboss.testing import TestClock, TestEnv, call_tools, reply_with, test_with, tool_call
from agboss.web import Caller, pause_router
from tests.apps import deadline_app
from tests.apps.deadline_app import (
    DAYS_2,
    ApproveRefundTool,
    DeadlineApplication,
    DeadlineRecorder,
    OrderDto,
    RefundAgent,
    RefundWorkflow,
    RejectRefundChannel,
    RejectRefundTool,
    SecondRefundAgent,
    TwoDesksWorkflow,
    UrgentRefundTool,
    WithdrawRefundTool,
)
from tests.apps.office_parts import DeskDoneDto, office_flow
from tests.test_web import serve

REQUEST = WorkflowStartTextDto(text="Refund o-1")
DONE = reply_with(WorkflowFinishTextDto, text="Done.")


pytestmark = pytest.mark.application.with_args(DeadlineApplication)


async def asked(env: TestEnv, tool: type[Any], order: str = "o-1") -> ExecutionOutput:
    env.mock_llm(RefundAgent).then_return(call_tools(tool_call(tool, order_id=order)), DONE)
    result = await env.app.execute(RefundWorkflow, REQUEST, owner_id="ada")
    assert result.status is ExecutionStatus.PAUSED
    return result


def pause_id_of(recorded: DeadlineRecorder) -> str:
    """The channel pause's id, as its channel was sent it."""
    return recorded.pause_ids[-1]


async def answered_by(env: TestEnv, result: ExecutionOutput) -> ExecutionOutput:
    done = await env.app.get(result.execution_id, record=True)
    assert done.status is ExecutionStatus.COMPLETED
    return done


# ---- what a deadline decides -----------------------------------------------------------------


async def test_a_question_nobody_answers_in_time_is_rejected_and_the_model_reads_why(
    env: TestEnv,
    recorded: DeadlineRecorder,
) -> None:
    began = env.clock.now()
    result = await asked(env, RejectRefundTool)
    assert result.wake_at == began + DAYS_2  # the tree moves by itself then
    await env.clock.jump(DAYS_2 - timedelta(seconds=1))
    assert (await env.app.get(result.execution_id)).status is ExecutionStatus.PAUSED
    await env.clock.advance(timedelta(seconds=1))
    done = await answered_by(env, result)
    assert recorded.runs == []
    read = env.mock_llm(RefundAgent).requests[-1].messages[-1].content
    assert "the call was rejected by reject-refund-channel: no answer within 2 days" in read
    assert done.record is not None
    [entry] = done.record.pauses
    assert entry.resolution is PauseResolution.EXPIRED
    assert entry.responder is None
    assert entry.decision is not None
    assert (entry.decision.approved, entry.decision.reason) == (False, "no answer within 2 days")
    assert recorded.told == ["send o-1", "withdraw o-1 expired desk/o-1"]  # its channel told, once


async def test_a_role_that_says_so_approves_a_question_nobody_answered(
    env: TestEnv, recorded: DeadlineRecorder
) -> None:
    result = await asked(env, ApproveRefundTool)
    await env.clock.jump(DAYS_2)
    await answered_by(env, result)
    assert recorded.runs == ["ApproveRefundTool o-1"]


async def test_a_withdrawing_deadline_fails_the_step_with_pause_expired_error(
    env: TestEnv,
    recorded: DeadlineRecorder,
) -> None:
    result = await asked(env, WithdrawRefundTool)
    await env.clock.jump(DAYS_2)
    with pytest.raises(PauseExpiredError) as caught:
        await env.app.get(result.execution_id)
    assert caught.value.code == "pause.expired"
    assert isinstance(caught.value, AgentFailedError)
    assert caught.value.channel == "withdraw-refund-channel"
    assert recorded.runs == []
    assert recorded.told == ["send o-1", "withdraw o-1 expired desk/o-1"]


async def test_a_tool_shortens_its_roles_deadline(env: TestEnv) -> None:
    began = env.clock.now()
    result = await asked(env, UrgentRefundTool)
    assert result.wake_at == began + timedelta(hours=1)
    await env.clock.jump(timedelta(hours=1))
    await answered_by(env, result)
    read = env.mock_llm(RefundAgent).requests[-1].messages[-1].content
    assert "no answer within 1 h" in read


async def test_an_expired_failfast_branch_withdraws_its_sibling_and_the_join_handles_it(
    env: TestEnv,
    recorded: DeadlineRecorder,
) -> None:
    env.mock_llm(RefundAgent).then_return(
        call_tools(tool_call(RejectRefundTool, order_id="o-1")), DONE
    )
    env.mock_llm(SecondRefundAgent).then_return(
        call_tools(tool_call(WithdrawRefundTool, order_id="o-2")), DONE
    )
    result = await env.app.execute(TwoDesksWorkflow, REQUEST, owner_id="ada")
    assert len(result.pending) == 2
    await env.clock.jump(DAYS_2)
    done = await answered_by(env, result)
    assert done.output == WorkflowFinishTextDto(text="a question expired")
    assert done.record is not None
    resolutions = sorted(entry.resolution.value for entry in done.record.pauses)
    assert resolutions in (["expired", "expired"], ["expired", "withdrawn"])
    assert recorded.runs == []


# ---- answers and the deadline ----------------------------------------------------------------


async def test_an_answer_before_the_deadline_wins_and_the_deadline_then_changes_nothing(
    env: TestEnv,
    recorded: DeadlineRecorder,
) -> None:
    await asked(env, RejectRefundTool)
    # Time passes as for a process that slept: each timer due runs once, not every sweep of
    # two days in turn (what those sweeps do is the sweep tests').
    await env.clock.jump(DAYS_2 - timedelta(seconds=1))
    approved = await env.app.resume(
        pause_id_of(recorded), decision={"approved": True}, answered_by="manager-17"
    )
    assert approved.status is ExecutionStatus.COMPLETED
    await env.clock.jump(timedelta(days=3))
    assert recorded.runs == ["RejectRefundTool o-1"]
    assert recorded.told == ["send o-1"]


@pytest.mark.application.with_args(DeadlineApplication, instances=2)
async def test_wake_at_is_the_earliest_deadline_of_the_questions_still_waiting(
    env: TestEnv,
    recorded: DeadlineRecorder,
) -> None:
    await _earliest_deadline_of_those_waiting(env, recorded)


async def _earliest_deadline_of_those_waiting(env: TestEnv, recorded: DeadlineRecorder) -> None:
    began = env.clock.now()
    both = call_tools(
        tool_call(UrgentRefundTool, order_id="o-1"), tool_call(RejectRefundTool, order_id="o-2")
    )
    env.mock_llm(RefundAgent).then_return(both, DONE)
    result = await env.app.execute(RefundWorkflow, REQUEST, owner_id="ada")
    assert result.wake_at == began + timedelta(hours=1)  # the urgent one's
    urgent, other = recorded.pause_ids
    after = await env.app.resume(urgent, decision={"approved": True}, answered_by="m-17")
    assert after.status is ExecutionStatus.PAUSED
    assert after.wake_at == began + DAYS_2  # only the 48-hour question waits
    # As stored: what another instance (or this one after a restart) reads.
    assert (await env.apps[1].get(result.execution_id)).wake_at == began + DAYS_2
    await env.clock.jump(timedelta(hours=2))  # past the answered one's deadline: nothing
    assert recorded.told == ["send o-1", "send o-2"]
    assert other in recorded.pause_ids


@pytest.mark.application.with_args(DeadlineApplication, instances=2)
async def test_an_answer_after_the_deadline_decided_is_expired_on_every_instance(
    env: TestEnv,
    recorded: DeadlineRecorder,
) -> None:
    await asked(env, RejectRefundTool)
    await env.clock.jump(DAYS_2)  # the deadline decided, on the first instance
    for app in env.apps:  # the one that asked the question, and the other
        with pytest.raises(NotPausedError) as caught:
            await app.resume(pause_id_of(recorded), decision={"approved": True}, answered_by="m-17")
        assert caught.value.status == "expired"


async def test_an_answer_at_the_deadline_is_refused_and_the_deadline_decides(
    env: TestEnv,
    recorded: DeadlineRecorder,
) -> None:
    result = await asked(env, RejectRefundTool)
    pause_id = pause_id_of(recorded)
    store = env.app.store
    hold = AcquireLease(result.execution_id, "elsewhere", timedelta(days=30), env.clock.now())
    held = (await store.write([hold]))[hold]
    assert held is not None  # another holds the tree: no pass of ours can apply the deadline
    await env.clock.jump(DAYS_2)
    with pytest.raises(NotPausedError) as caught:
        await env.app.answer(pause_id, decision={"approved": True}, answered_by="manager-17")
    assert caught.value.status == "expired"  # past its deadline, though nothing applied it yet
    await store.write([ReleaseLease(held.fence)])
    await env.app.sweep()
    await answered_by(env, result)
    assert recorded.runs == []
    with pytest.raises(NotPausedError):  # a late answer, after the deadline decided
        await env.app.answer(pause_id, decision={"approved": True}, answered_by="manager-17")


async def test_a_deadline_that_passed_across_a_restart_is_applied_by_the_new_instances_sweep(
    env: TestEnv,
    recorded: DeadlineRecorder,
) -> None:
    result = await asked(env, RejectRefundTool)
    await env.restart()  # the instance that armed the timer is gone
    await env.clock.jump(DAYS_2 - timedelta(minutes=1))  # its sweeps before: nothing due
    assert (await env.app.get(result.execution_id)).status is ExecutionStatus.PAUSED
    await env.clock.jump(timedelta(minutes=1))  # due: the new instance's next sweep
    await answered_by(env, result)
    assert recorded.told == ["send o-1", "withdraw o-1 expired desk/o-1"]


@pytest.mark.application.with_args(DeadlineApplication, instances=2)
async def test_with_two_instances_a_deadline_decides_once(
    env: TestEnv, recorded: DeadlineRecorder
) -> None:
    result = await asked(env, RejectRefundTool)
    await env.clock.jump(DAYS_2)
    await env.apps[0].sweep()
    await env.apps[1].sweep()
    await answered_by(env, result)
    assert recorded.told == ["send o-1", "withdraw o-1 expired desk/o-1"]
    assert len(env.mock_llm(RefundAgent).requests) == 2


async def test_the_pause_record_carries_its_deadline(
    env: TestEnv, recorded: DeadlineRecorder
) -> None:
    began = env.clock.now()
    await asked(env, RejectRefundTool)
    pause = await env.app.store.pauses.find_by_tenant_id_and_pause_id(
        "default", pause_id_of(recorded)
    )
    assert pause is not None
    assert pause.expires_at == began + DAYS_2
    assert pause.status is PauseStatus.PENDING


# ---- assembly ------------------------------------------------------------------------------


async def test_deadline_wiring_errors_are_reported_together(tmp_path: Path) -> None:
    @tool(
        name="sly-refund-tool",
        description="Would approve on silence",
        input=OrderDto,
        output=DeskDoneDto,
        channel=RejectRefundChannel,
        on_expiry=OnExpiry.APPROVE,
    )
    class SlyRefundTool(deadline_app._Refund): ...

    @tool(
        name="lonely-refund-tool",
        description="Has a deadline and nobody to ask",
        input=OrderDto,
        output=DeskDoneDto,
        expires_after=timedelta(hours=1),
    )
    class LonelyRefundTool(deadline_app._Refund): ...

    @tool(
        name="slow-refund-tool",
        description="Expires before its send may end",
        input=OrderDto,
        output=DeskDoneDto,
        channel=RejectRefundChannel,
        timeout=timedelta(minutes=5),
        expires_after=timedelta(minutes=1),
    )
    class SlowRefundTool(deadline_app._Refund): ...

    @channel_role(
        name="silent-refund-channel",
        description="Expires before it asks",
        approves=OrderDto,
        answered_by=PauseAnswerer.CHANNEL,
        expires_after=timedelta(0),
    )
    class SilentRefundChannel(ChannelOf[OrderDto]): ...

    @channel(name="silent-desk-channel", description="Asks nobody")
    class SilentDeskChannel(deadline_app._Desk, SilentRefundChannel): ...

    @tool(
        name="silent-refund-tool",
        description="Its role's deadline is zero",
        input=OrderDto,
        output=DeskDoneDto,
        channel=SilentRefundChannel,
    )
    class SilentRefundTool(deadline_app._Refund): ...

    @agent(
        name="wired-agent",
        description="Has the badly wired tools",
        prompt="p",
        model="test/model",
        tools=[SlyRefundTool, LonelyRefundTool, SlowRefundTool, SilentRefundTool],
    )
    class WiredAgent: ...

    @workflow(name="wired-workflow", version="1", flow=office_flow(WiredAgent))
    class WiredWorkflow: ...

    @application(
        name="wired-application",
        workflows=[WiredWorkflow],
        channels=[deadline_app.RejectDeskChannel, SilentDeskChannel],
    )
    class WiredApplication: ...

    with pytest.raises(AssemblyError) as caught:
        await App.create(WiredApplication, store=tmp_path / "agboss.db")
    rules = {violation.rule for violation in caught.value.violations}
    assert {
        "tool.approve-on-expiry",
        "tool.expiry-without-channel",
        "tool.expiry-before-timeout",
        "channel.expiry-not-positive",
    } <= rules


def test_a_deadline_is_said_as_a_person_says_it() -> None:
    assert spoken(timedelta(days=2)) == "2 days"
    assert spoken(timedelta(days=1)) == "1 day"
    assert spoken(timedelta(hours=48, minutes=30)) == "2910 min"
    assert spoken(timedelta(hours=1)) == "1 h"
    assert spoken(timedelta(seconds=45)) == "45 s"


async def test_a_role_without_a_deadline_waits_as_long_as_it_takes(tmp_path: Path) -> None:
    from tests.apps.desk import OfficeAgent, OfficeApplication, OfficeWorkflow, ReturnDepositTool

    async with test_with(OfficeApplication) as env:
        env.mock_llm(OfficeAgent).then_return(
            call_tools(tool_call(ReturnDepositTool, lease_id="L-7")), DONE
        )
        result = await env.app.execute(OfficeWorkflow, REQUEST, owner_id="u")
        assert result.wake_at is None
        await env.clock.jump(timedelta(days=365))
        await env.app.sweep()
        assert (await env.app.get(result.execution_id)).status is ExecutionStatus.PAUSED


# ---- in children and per-item launches -----------------------------------------------------

ORDERS = deadline_app.OrdersDto(
    orders=[deadline_app.OrderDto(order_id="o-1"), deadline_app.OrderDto(order_id="o-2")]
)


def per_order(env: TestEnv, tools: dict[str, type[Any]]) -> None:
    for order, tool_cls in tools.items():
        env.mock_llm(deadline_app.OrderRefundAgent).when(
            input=deadline_app.OrderDto(order_id=order)
        ).then_return(call_tools(tool_call(tool_cls, order_id=order)), DONE)


async def test_a_question_expires_inside_a_child_workflow_and_failfast_takes_the_launch(
    env: TestEnv,
    recorded: DeadlineRecorder,
) -> None:
    per_order(env, {"o-1": WithdrawRefundTool, "o-2": RejectRefundTool})
    result = await env.app.execute(deadline_app.ChildOrdersWorkflow, ORDERS, owner_id="ada")
    assert len(result.pending) == 2
    assert {p.child_execution_id is not None for p in result.pending} == {True}
    await env.clock.jump(DAYS_2)
    done = await answered_by(env, result)
    assert done.output == WorkflowFinishTextDto(text="a question expired")
    assert recorded.runs == []


async def test_under_collect_each_expired_question_is_its_own_branchs_outcome(
    env: TestEnv,
    recorded: DeadlineRecorder,
) -> None:
    per_order(env, {"o-1": WithdrawRefundTool, "o-2": RejectRefundTool})
    result = await env.app.execute(deadline_app.CollectedOrdersWorkflow, ORDERS, owner_id="ada")
    await env.clock.jump(DAYS_2)
    done = await answered_by(env, result)
    assert done.output == WorkflowFinishTextDto(text="PauseExpiredError | ok")
    assert done.record is not None
    assert [e.resolution for e in done.record.pauses] == [PauseResolution.EXPIRED] * 2
    assert sorted(recorded.told) == [
        "send o-1",
        "send o-2",
        "withdraw o-1 expired desk/o-1",
        "withdraw o-2 expired desk/o-2",
    ]


# ---- what waits, and until when -------------------------------------------------------------


async def two_deadlines(env: TestEnv) -> None:
    """Two questions of one tree: one expires in an hour, the other in two days."""
    env.mock_llm(RefundAgent).then_return(
        call_tools(
            tool_call(UrgentRefundTool, order_id="o-1"),
            tool_call(RejectRefundTool, order_id="o-2"),
        ),
        DONE,
    )
    await env.app.execute(RefundWorkflow, REQUEST, tenant_id="acme", owner_id="ada")


async def test_the_inbox_says_when_each_question_expires_and_lists_what_expires_soon(
    env: TestEnv,
) -> None:
    began = env.clock.now()
    await two_deadlines(env)
    page = await env.app.pending(tenant_id="acme")
    assert sorted(e.expires_at for e in page.entries if e.expires_at) == [
        began + timedelta(hours=1),
        began + DAYS_2,
    ]
    soon = await env.app.pending(tenant_id="acme", expiring_before=began + timedelta(hours=2))
    assert [e.pause.ask.tool for e in soon.entries] == ["urgent-refund-tool"]
    assert (
        await env.app.count_pending(tenant_id="acme", expiring_before=began + timedelta(hours=2))
        == 1
    )
    with pytest.raises(DtoValidationError, match="expiring_before"):
        await env.app.pending(tenant_id="acme", expiring_before=datetime(2026, 1, 1))


async def test_get_pauses_gives_the_deadline_and_the_time_left_and_filters_by_it(
    env: TestEnv,
) -> None:
    began = env.clock.now()
    await two_deadlines(env)
    await env.clock.advance(timedelta(minutes=15))

    async def as_ada(request: Any) -> Caller:
        return Caller(owner_id="ada", tenant_id="acme")

    api = Starlette(routes=[Mount("/agboss", pause_router(env.app, authenticate=as_ada))])
    server, task, port = await serve(api)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}/agboss") as http:
            listed = (await http.get("/pauses")).json()["entries"]
            soon_at = (began + timedelta(hours=2)).isoformat()
            soon = await http.get("/pauses", params={"expiring_before": soon_at})
            bad = await http.get("/pauses", params={"expiring_before": "tomorrow"})
    finally:
        server.should_exit = True
        await task
    by_tool = {entry["ask"]["tool"]: entry for entry in listed}
    urgent = by_tool["urgent-refund-tool"]
    assert urgent["expires_at"] == (began + timedelta(hours=1)).isoformat().replace("+00:00", "Z")
    assert urgent["expires_in_seconds"] == 45 * 60
    assert by_tool["reject-refund-tool"]["expires_in_seconds"] == (DAYS_2.total_seconds() - 900)
    assert [e["ask"]["tool"] for e in soon.json()["entries"]] == ["urgent-refund-tool"]
    assert bad.status_code == 422
    assert "expiring_before='tomorrow'" in bad.json()["detail"]


def test_the_command_line_lists_what_expires_within_a_time(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'agboss.db'}"

    async def asked() -> None:
        # Asked now: the command reads the system clock.
        clock = TestClock(datetime.now(UTC))
        async with test_with(DeadlineApplication, store=url, clock=clock) as env:
            await two_deadlines(env)

    asyncio.run(asked())
    runner = CliRunner()
    app = "tests.apps.deadline_app:DeadlineApplication"
    command = ["pauses", "list", "--app", app, "--store", url, "--tenant", "acme", "--json"]
    listed = runner.invoke(cli, command)
    assert listed.exit_code == 0, listed.output
    assert all(json.loads(line)["expires_at"] for line in listed.output.splitlines())
    both = runner.invoke(cli, [*command, "--expiring-within", "30d"])
    assert len(both.output.splitlines()) == 2
    soon = runner.invoke(cli, [*command, "--expiring-within", "2h"])
    assert [json.loads(line)["tool"] for line in soon.output.splitlines()] == ["urgent-refund-tool"]
    none = runner.invoke(cli, [*command, "--expiring-within", "30m"])
    assert none.output == ""
    table = runner.invoke(cli, command[:-1])  # the table has an "expires" column
    assert "expires" in table.output
