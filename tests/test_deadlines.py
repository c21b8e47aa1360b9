"""Questions that expire (issue 27): a deadline on the role (or the tool), stored with the
pause, applied by the instance's timer or any instance's sweep on the application's Clock,
and decided by ``on_expiry`` — on both stores, through the public API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from agboss import (
    AgentFailedError,
    App,
    AssemblyError,
    ChannelOf,
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
from agboss.engine._asking import spoken
from agboss.store.writes import AcquireLease, ReleaseLease
from agboss.testing import TestEnv, call_tools, reply_with, test_with, tool_call
from tests import deadline_app
from tests.deadline_app import (
    DAYS_2,
    RUNS,
    TOLD,
    ApproveRefundTool,
    DeadlineApplication,
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
from tests.office_parts import DeskDoneDto, office_flow
from tests.stores import STORE_KINDS, env_on

REQUEST = WorkflowStartTextDto(text="Refund o-1")
DONE = reply_with(WorkflowFinishTextDto, text="Done.")


@pytest.fixture(params=STORE_KINDS)
async def env(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TestEnv]:
    deadline_app.clear()
    async with env_on(request.param, tmp_path, DeadlineApplication) as made:
        yield made


async def asked(env: TestEnv, tool: type[Any], order: str = "o-1") -> ExecutionOutput:
    env.mock_llm(RefundAgent).then_return(call_tools(tool_call(tool, order_id=order)), DONE)
    result = await env.app.execute(RefundWorkflow, REQUEST, owner_id="ada")
    assert result.status is ExecutionStatus.PAUSED
    return result


def pause_id_of(env: TestEnv) -> str:
    """The channel pause's id, as its channel was sent it."""
    return deadline_app.PAUSE_IDS[-1]


async def answered_by(env: TestEnv, result: ExecutionOutput) -> ExecutionOutput:
    done = await env.app.get(result.execution_id, record=True)
    assert done.status is ExecutionStatus.COMPLETED
    return done


# ---- what a deadline decides -----------------------------------------------------------------


async def test_a_question_nobody_answers_in_time_is_rejected_and_the_model_reads_why(
    env: TestEnv,
) -> None:
    began = env.clock.now()
    result = await asked(env, RejectRefundTool)
    assert result.wake_at == began + DAYS_2  # the tree moves by itself then
    await env.clock.advance(DAYS_2 - timedelta(seconds=1))
    assert (await env.app.get(result.execution_id)).status is ExecutionStatus.PAUSED
    await env.clock.advance(timedelta(seconds=1))
    done = await answered_by(env, result)
    assert RUNS == []
    read = env.mock_llm(RefundAgent).requests[-1].messages[-1].content
    assert "the call was rejected by reject-refund-channel: no answer within 2 days" in read
    assert done.record is not None
    [entry] = done.record.pauses
    assert entry.resolution is PauseResolution.EXPIRED
    assert entry.responder is None
    assert entry.decision is not None
    assert (entry.decision.approved, entry.decision.reason) == (False, "no answer within 2 days")
    assert TOLD == ["send o-1", "withdraw o-1 expired desk/o-1"]  # its channel told, once


async def test_a_role_that_says_so_approves_a_question_nobody_answered(env: TestEnv) -> None:
    result = await asked(env, ApproveRefundTool)
    await env.clock.advance(DAYS_2)
    await answered_by(env, result)
    assert RUNS == ["ApproveRefundTool o-1"]


async def test_a_withdrawing_deadline_fails_the_step_with_pause_expired_error(
    env: TestEnv,
) -> None:
    result = await asked(env, WithdrawRefundTool)
    await env.clock.advance(DAYS_2)
    with pytest.raises(PauseExpiredError) as caught:
        await env.app.get(result.execution_id)
    assert caught.value.code == "pause.expired"
    assert isinstance(caught.value, AgentFailedError)
    assert caught.value.channel == "withdraw-refund-channel"
    assert RUNS == []
    assert TOLD == ["send o-1", "withdraw o-1 expired desk/o-1"]


async def test_a_tool_shortens_its_roles_deadline(env: TestEnv) -> None:
    began = env.clock.now()
    result = await asked(env, UrgentRefundTool)
    assert result.wake_at == began + timedelta(hours=1)
    await env.clock.advance(timedelta(hours=1))
    await answered_by(env, result)
    read = env.mock_llm(RefundAgent).requests[-1].messages[-1].content
    assert "no answer within 1 h" in read


async def test_an_expired_failfast_branch_withdraws_its_sibling_and_the_join_handles_it(
    env: TestEnv,
) -> None:
    env.mock_llm(RefundAgent).then_return(
        call_tools(tool_call(RejectRefundTool, order_id="o-1")), DONE
    )
    env.mock_llm(SecondRefundAgent).then_return(
        call_tools(tool_call(WithdrawRefundTool, order_id="o-2")), DONE
    )
    result = await env.app.execute(TwoDesksWorkflow, REQUEST, owner_id="ada")
    assert len(result.pending) == 2
    await env.clock.advance(DAYS_2)
    done = await answered_by(env, result)
    assert done.output == WorkflowFinishTextDto(text="a question expired")
    assert done.record is not None
    resolutions = sorted(entry.resolution.value for entry in done.record.pauses)
    assert resolutions in (["expired", "expired"], ["expired", "withdrawn"])
    assert RUNS == []


# ---- answers and the deadline ----------------------------------------------------------------


async def test_an_answer_before_the_deadline_wins_and_the_deadline_then_changes_nothing(
    env: TestEnv,
) -> None:
    await asked(env, RejectRefundTool)
    await env.clock.advance(DAYS_2 - timedelta(seconds=1))
    approved = await env.app.resume(
        pause_id_of(env), decision={"approved": True}, answered_by="manager-17"
    )
    assert approved.status is ExecutionStatus.COMPLETED
    await env.clock.advance(timedelta(days=3))
    assert RUNS == ["RejectRefundTool o-1"]
    assert TOLD == ["send o-1"]


async def test_an_answer_at_the_deadline_is_refused_and_the_deadline_decides(
    env: TestEnv,
) -> None:
    result = await asked(env, RejectRefundTool)
    pause_id = pause_id_of(env)
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
    assert RUNS == []
    with pytest.raises(NotPausedError):  # a late answer, after the deadline decided
        await env.app.answer(pause_id, decision={"approved": True}, answered_by="manager-17")


async def test_a_deadline_that_passed_across_a_restart_is_applied_by_the_new_instances_sweep(
    env: TestEnv,
) -> None:
    result = await asked(env, RejectRefundTool)
    await env.restart()  # the instance that armed the timer is gone
    await env.clock.advance(DAYS_2 - timedelta(minutes=1))  # its sweeps before: nothing due
    assert (await env.app.get(result.execution_id)).status is ExecutionStatus.PAUSED
    await env.clock.advance(timedelta(minutes=1))  # due: the new instance's next sweep
    await answered_by(env, result)
    assert TOLD == ["send o-1", "withdraw o-1 expired desk/o-1"]


async def test_with_two_instances_a_deadline_decides_once(tmp_path: Path) -> None:
    deadline_app.clear()
    async with env_on("sqlite", tmp_path, DeadlineApplication, instances=2) as env:
        result = await asked(env, RejectRefundTool)
        await env.clock.jump(DAYS_2)
        await env.apps[0].sweep()
        await env.apps[1].sweep()
        await answered_by(env, result)
        assert TOLD == ["send o-1", "withdraw o-1 expired desk/o-1"]
        assert len(env.mock_llm(RefundAgent).requests) == 2


async def test_the_pause_record_carries_its_deadline(env: TestEnv) -> None:
    began = env.clock.now()
    await asked(env, RejectRefundTool)
    pause = await env.app.store.pauses.find_by_tenant_id_and_pause_id("default", pause_id_of(env))
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
    from tests.desk import OfficeAgent, OfficeApplication, OfficeWorkflow, ReturnDepositTool

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
) -> None:
    per_order(env, {"o-1": WithdrawRefundTool, "o-2": RejectRefundTool})
    result = await env.app.execute(deadline_app.ChildOrdersWorkflow, ORDERS, owner_id="ada")
    assert len(result.pending) == 2
    assert {p.child_execution_id is not None for p in result.pending} == {True}
    await env.clock.advance(DAYS_2)
    done = await answered_by(env, result)
    assert done.output == WorkflowFinishTextDto(text="a question expired")
    assert RUNS == []


async def test_under_collect_each_expired_question_is_its_own_branchs_outcome(
    env: TestEnv,
) -> None:
    per_order(env, {"o-1": WithdrawRefundTool, "o-2": RejectRefundTool})
    result = await env.app.execute(deadline_app.CollectedOrdersWorkflow, ORDERS, owner_id="ada")
    await env.clock.advance(DAYS_2)
    done = await answered_by(env, result)
    assert done.output == WorkflowFinishTextDto(text="PauseExpiredError | ok")
    assert done.record is not None
    assert [e.resolution for e in done.record.pauses] == [PauseResolution.EXPIRED] * 2
    assert sorted(TOLD) == [
        "send o-1",
        "send o-2",
        "withdraw o-1 expired desk/o-1",
        "withdraw o-2 expired desk/o-2",
    ]
