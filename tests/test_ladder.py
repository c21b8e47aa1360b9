"""A question's ladder (issue 27): reminders at given times before its deadline, each once, on
any instance, after a restart too — stored with the pause, on the application's Clock, on both
stores, through the public API."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from starlette.applications import Starlette
from starlette.routing import Mount

from agboss import (
    App,
    AssemblyError,
    ChannelOf,
    ExecutionStatus,
    PauseAnswerer,
    Remind,
    agent,
    application,
    channel,
    channel_role,
    tool,
    workflow,
)
from agboss.cli._main import cli
from agboss.testing import TestClock, TestEnv, call_tools, test_with, tool_call
from agboss.web import Caller, pause_router
from tests.apps import deadline_app
from tests.apps.deadline_app import (
    DAYS_2,
    HOUR,
    DeadlineApplication,
    DeadlineRecorder,
    OrderDto,
    RefundAgent,
    RefundWorkflow,
    RejectRefundTool,
    RemindedRefundChannel,
    RemindedRefundTool,
)
from tests.apps.office_parts import DeskDoneDto, office_flow
from tests.test_deadlines import DONE, REQUEST, answered_by, asked, pause_id_of
from tests.test_web import serve

DAY = timedelta(hours=24)


pytestmark = pytest.mark.application.with_args(DeadlineApplication)


async def test_a_question_nobody_answers_is_reminded_at_each_step_once_then_expires(
    env: TestEnv,
    recorded: DeadlineRecorder,
) -> None:
    began = env.clock.now()
    result = await asked(env, RemindedRefundTool)
    assert result.wake_at == began + HOUR  # the tree moves by itself at the first step
    await env.clock.advance(HOUR - timedelta(seconds=1))
    assert recorded.told == ["send o-1"]
    await env.clock.advance(timedelta(seconds=1))
    assert recorded.told == ["send o-1", "remind o-1 #1 desk/o-1"]
    paused = await env.app.get(result.execution_id)
    assert paused.status is ExecutionStatus.PAUSED
    assert paused.wake_at == began + DAY  # the next step
    await env.clock.jump(DAY - HOUR)
    await env.clock.jump(DAYS_2 - DAY)
    await answered_by(env, result)
    assert recorded.told == [
        "send o-1",
        "remind o-1 #1 desk/o-1",
        "remind o-1 #2 desk/o-1",
        "withdraw o-1 expired desk/o-1",
    ]
    assert recorded.runs == []


async def test_an_answered_question_is_not_reminded(
    env: TestEnv, recorded: DeadlineRecorder
) -> None:
    await asked(env, RemindedRefundTool)
    await env.clock.advance(HOUR - timedelta(seconds=1))
    approved = await env.app.resume(
        pause_id_of(recorded), decision={"approved": True}, answered_by="manager-17"
    )
    assert approved.status is ExecutionStatus.COMPLETED
    await env.clock.jump(DAYS_2)
    assert recorded.told == ["send o-1"]
    assert recorded.runs == ["RemindedRefundTool o-1"]


async def test_steps_that_fell_due_together_remind_once(
    env: TestEnv, recorded: DeadlineRecorder
) -> None:
    result = await asked(env, RemindedRefundTool)
    await env.clock.jump(DAY + HOUR)  # nobody ran meanwhile: both steps are due
    await env.app.sweep()
    assert recorded.told == ["send o-1", "remind o-1 #2 desk/o-1"]
    paused = await env.app.get(result.execution_id)
    assert paused.status is ExecutionStatus.PAUSED
    assert result.wake_at is not None
    assert paused.wake_at == result.wake_at - HOUR + DAYS_2  # only the deadline is left


async def test_a_reminder_due_across_a_restart_is_sent_by_the_new_instances_sweep(
    env: TestEnv,
    recorded: DeadlineRecorder,
) -> None:
    result = await asked(env, RemindedRefundTool)
    await env.restart()  # the instance that armed the timer is gone
    await env.clock.advance(HOUR)
    assert recorded.told == ["send o-1", "remind o-1 #1 desk/o-1"]
    assert (await env.app.get(result.execution_id)).status is ExecutionStatus.PAUSED


@pytest.mark.application.with_args(DeadlineApplication, instances=2)
async def test_with_two_instances_sweeping_a_reminder_is_sent_once(
    env: TestEnv,
    recorded: DeadlineRecorder,
) -> None:
    await asked(env, RemindedRefundTool)
    await env.clock.jump(HOUR)
    await env.apps[0].sweep()
    await env.apps[1].sweep()
    await env.apps[0].sweep()
    assert recorded.told == ["send o-1", "remind o-1 #1 desk/o-1"]


async def test_a_remind_that_fails_is_one_warning_and_the_ladder_goes_on(
    env: TestEnv, caplog: pytest.LogCaptureFixture, recorded: DeadlineRecorder
) -> None:
    result = await asked(env, RemindedRefundTool)
    recorded.failing = True
    with caplog.at_level(logging.WARNING, logger="agboss"):
        await env.clock.advance(HOUR)
        await env.clock.advance(timedelta(minutes=5))
    failed = [r for r in caplog.records if getattr(r, "event", None) == "channel.remind-failed"]
    assert len(failed) == 1  # not tried again and again
    assert pause_id_of(recorded) not in failed[0].getMessage()
    recorded.failing = False
    await env.clock.jump(DAY - HOUR)
    assert recorded.told == ["send o-1", "remind o-1 #2 desk/o-1"]
    assert (await env.app.get(result.execution_id)).status is ExecutionStatus.PAUSED


async def test_the_pause_record_says_where_it_is_on_its_ladder(
    env: TestEnv, recorded: DeadlineRecorder
) -> None:
    began = env.clock.now()
    await asked(env, RemindedRefundTool)
    pauses = env.app.store.pauses
    pause = await pauses.find_by_tenant_id_and_pause_id("default", pause_id_of(recorded))
    assert pause is not None
    assert (pause.ladder_step, pause.next_step_at) == (0, began + HOUR)
    await env.clock.jump(HOUR)
    pause = await pauses.find_by_tenant_id_and_pause_id("default", pause_id_of(recorded))
    assert pause is not None
    assert (pause.ladder_step, pause.next_step_at) == (1, began + DAY)
    await env.clock.jump(DAY - HOUR)
    pause = await pauses.find_by_tenant_id_and_pause_id("default", pause_id_of(recorded))
    assert pause is not None
    assert (pause.ladder_step, pause.next_step_at) == (2, None)


# ---- assembly ------------------------------------------------------------------------------


def _role(
    name: str,
    ladder: list[Any] | Callable[[type[Any]], list[Any]],
    expires_after: timedelta | None = DAYS_2,
) -> tuple[type[Any], type[Any]]:
    """A role named ``name`` with ``ladder`` (or the ladder made from the role's class), and
    its desk and tool."""

    class Role(ChannelOf[OrderDto]): ...

    channel_role(
        name=name,
        description="A badly laddered role",
        approves=OrderDto,
        answered_by=PauseAnswerer.CHANNEL,
        expires_after=expires_after,
        ladder=ladder(Role) if callable(ladder) else ladder,
    )(Role)

    @channel(name=name.replace("-channel", "-desk-channel"), description="Asks the desk")
    class Desk(deadline_app._Desk, Role): ...

    @tool(
        name=name.replace("-channel", "-tool"),
        description="Refunds",
        input=OrderDto,
        output=DeskDoneDto,
        channel=Role,
    )
    class Tool(deadline_app._Refund): ...

    return Desk, Tool


async def test_ladder_wiring_errors_are_reported_together(tmp_path: Path) -> None:
    made = [
        _role("backwards-channel", [Remind(after=DAY), Remind(after=HOUR)]),
        _role("instant-channel", [Remind(after=timedelta(0))]),
        _role("late-channel", [Remind(after=DAYS_2)]),
    ]

    @tool(
        name="hasty-refund-tool",
        description="Expires before its role's first reminder",
        input=OrderDto,
        output=DeskDoneDto,
        channel=RemindedRefundChannel,
        expires_after=timedelta(minutes=30),
    )
    class HastyRefundTool(deadline_app._Refund): ...

    @agent(
        name="laddered-agent",
        description="Has the badly laddered tools",
        prompt="p",
        model="test/model",
        tools=[HastyRefundTool, *(tool_cls for _, tool_cls in made)],
    )
    class LadderedAgent: ...

    @workflow(name="laddered-workflow", version="1", flow=office_flow(LadderedAgent))
    class LadderedWorkflow: ...

    @application(
        name="laddered-application",
        workflows=[LadderedWorkflow],
        channels=[deadline_app.RemindedDeskChannel, *(desk for desk, _ in made)],
    )
    class LadderedApplication: ...

    with pytest.raises(AssemblyError) as caught:
        await App.create(LadderedApplication, store=tmp_path / "agboss.db")
    found = {(violation.rule, violation.component) for violation in caught.value.violations}
    assert {
        ("channel.ladder-not-increasing", "backwards-channel"),
        ("channel.ladder-not-positive", "instant-channel"),
        ("channel.ladder-past-deadline", "late-channel"),
        ("tool.ladder-past-deadline", "hasty-refund-tool"),
    } <= found


async def test_a_ladder_of_something_else_than_steps_is_a_wiring_error(tmp_path: Path) -> None:
    desk, refund_tool = _role("odd-channel", ["remind at noon"])

    @agent(
        name="odd-agent",
        description="Has the oddly laddered tool",
        prompt="p",
        model="test/model",
        tools=[refund_tool],
    )
    class OddAgent: ...

    @workflow(name="odd-workflow", version="1", flow=office_flow(OddAgent))
    class OddWorkflow: ...

    @application(name="odd-application", workflows=[OddWorkflow], channels=[desk])
    class OddApplication: ...

    with pytest.raises(AssemblyError) as caught:
        await App.create(OddApplication, store=tmp_path / "agboss.db")
    [violation] = caught.value.violations
    assert (violation.rule, violation.component) == ("channel-role.argument-type", "odd-channel")
    assert "Remind" in violation.message


# ---- where questions are listed --------------------------------------------------------------


async def test_the_inbox_says_what_each_questions_next_step_is_and_when(env: TestEnv) -> None:
    began = env.clock.now()
    env.mock_llm(RefundAgent).then_return(
        call_tools(
            tool_call(RemindedRefundTool, order_id="o-1"),
            tool_call(RejectRefundTool, order_id="o-2"),  # its role has no ladder
        ),
        DONE,
    )
    await env.app.execute(RefundWorkflow, REQUEST, owner_id="ada")
    page = await env.app.pending()
    steps = {e.pause.ask.tool: (e.next_step, e.next_step_at) for e in page.entries}
    assert steps == {
        "reminded-refund-tool": (Remind(after=HOUR), began + HOUR),
        "reject-refund-tool": (None, None),
    }
    await env.clock.jump(HOUR)
    [reminded] = [e for e in (await env.app.pending()).entries if e.next_step is not None]
    assert (reminded.next_step, reminded.next_step_at) == (Remind(after=DAY), began + DAY)
    await env.clock.jump(DAY - HOUR)
    assert all(e.next_step is None for e in (await env.app.pending()).entries)


def test_get_pauses_and_the_command_line_give_the_next_step(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'agboss.db'}"

    async def listed_by_the_router() -> tuple[datetime, dict[str, Any]]:
        clock = TestClock(datetime.now(UTC))  # the command reads the system clock
        async with test_with(DeadlineApplication, store=url, clock=clock) as env:
            began = env.clock.now()
            await asked(env, RemindedRefundTool)
            await env.clock.advance(timedelta(minutes=15))

            async def as_ada(request: Any) -> Caller:
                return Caller(owner_id="ada", tenant_id="default")

            api = Starlette(routes=[Mount("/agboss", pause_router(env.app, authenticate=as_ada))])
            server, task, port = await serve(api)
            try:
                async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}/agboss") as http:
                    [listed] = (await http.get("/pauses")).json()["entries"]
            finally:
                server.should_exit = True
                await task
        return began, listed

    began, listed = asyncio.run(listed_by_the_router())
    assert listed["next_step"] == "remind"
    assert listed["next_step_at"] == (began + HOUR).isoformat().replace("+00:00", "Z")
    assert listed["next_step_in_seconds"] == 45 * 60
    runner = CliRunner()
    command = ["pauses", "list", "--app", "tests.apps.deadline_app:DeadlineApplication"]
    command += ["--store", url]
    [line] = runner.invoke(cli, [*command, "--json"]).output.splitlines()
    assert json.loads(line)["next_step"] == "remind"
    assert json.loads(line)["next_step_at"] == (began + HOUR).isoformat()
    table = runner.invoke(cli, command).output
    assert "next" in table
    assert f"remind {(began + HOUR).strftime('%Y-%m-%d %H:%M')}" in table
