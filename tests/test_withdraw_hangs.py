"""A channel's ``withdraw`` that never returns is cut off at its tool's timeout, once.

pauses.md: a withdraw runs "under its tool's timeout on the application's Clock … a withdraw
that throws or runs past its timeout is one warning in the log, channel.withdraw-failed … and
nothing else: the join, .onError / .onJoinError and app.cancel go on as if it had returned";
and "once, by whoever closed the pause" — the recovery sweep of the same instance or of
another does not start it again while its holder is alive (issue 37, item 2).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from datetime import timedelta
from typing import TypeVar

import pytest

from agboss import ChannelWithdrawal, ExecutionStatus, PauseResolution
from agboss.testing import TestEnv, call_tools, tool_call
from tests.apps.tree_app import (
    SHIP_TIMEOUT,
    AlphaAgent,
    BetaAgent,
    DeclinedWorkflow,
    DeskHoldApprovalChannel,
    GammaAgent,
    OrderDto,
    QuorumWorkflow,
    ShipTool,
    TreeApplication,
    TreeRecorder,
)
from tests.test_trees import ORDERS, finishes, pause_of, pauses

T = TypeVar("T")


@pytest.fixture(params=[1, 2], ids=lambda count: f"{count}-instances")
def instances(request: pytest.FixtureRequest) -> int:
    return int(request.param)


pytestmark = pytest.mark.application.with_args(TreeApplication)


class Hanging:
    """A withdraw that waits until it is cut off; the pause ids it was called with."""

    def __init__(self, env: TestEnv) -> None:
        self.calls: list[str] = []
        self.started = asyncio.Event()
        env.mock_of(DeskHoldApprovalChannel).withdraw.side_effect = self.withdraw

    async def withdraw(self, withdrawal: ChannelWithdrawal[OrderDto]) -> None:
        self.calls.append(withdrawal.pause_id)
        self.started.set()
        await asyncio.Event().wait()


async def cut_off(env: TestEnv, hanging: Hanging, work: Awaitable[T]) -> T:
    """Runs ``work`` until a withdraw hangs, then moves the clock past the tool's timeout
    twice over — the recovery sweep of every instance runs every 30 s meanwhile."""
    task = asyncio.ensure_future(work)
    await asyncio.wait_for(hanging.started.wait(), 30)
    await asyncio.wait_for(env.clock.advance(SHIP_TIMEOUT * 2 + timedelta(minutes=1)), 60)
    return await asyncio.wait_for(task, 30)


def warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.getMessage().startswith("channel.withdraw-failed")]


async def test_app_cancel_returns_once_a_hanging_withdraw_passed_its_timeout(
    env: TestEnv, caplog: pytest.LogCaptureFixture
) -> None:
    pauses(env, AlphaAgent, "o1")
    pauses(env, BetaAgent, "o2")
    paused = await env.app.execute(DeclinedWorkflow, ORDERS, owner_id="u")
    assert len(paused.pending) == 2
    hanging = Hanging(env)
    with caplog.at_level(logging.WARNING, logger="agboss"):
        cancelled = await cut_off(env, hanging, env.app.cancel(paused.thread_id))
    assert cancelled is not None
    assert cancelled.status is ExecutionStatus.CANCELLED
    # Each pause's channel told once, by whoever closed it; each cut off is one warning.
    assert sorted(hanging.calls) == sorted([pause_of(paused, "o1"), pause_of(paused, "o2")])
    assert len(warnings(caplog)) == 2
    assert await env.app.store.executions.find_interrupted(env.clock.now(), 10) == []


async def test_a_fail_fast_join_goes_on_once_a_hanging_withdraw_passed_its_timeout(
    env: TestEnv, caplog: pytest.LogCaptureFixture, recorded: TreeRecorder
) -> None:
    recorded.decline.add(
        "o8"
    )  # alpha's send raises: its step fails, and FailFast withdraws beta's pause
    env.mock_llm(AlphaAgent).then_return(call_tools(tool_call(ShipTool, order_id="o8")))
    pauses(env, BetaAgent, "o2")
    hanging = Hanging(env)
    with caplog.at_level(logging.WARNING, logger="agboss"):
        result = await cut_off(
            env, hanging, env.app.execute(DeclinedWorkflow, ORDERS, owner_id="u")
        )
    assert result.status is ExecutionStatus.COMPLETED  # .on_join_error took the failure
    assert result.pending == []
    assert len(hanging.calls) == 1
    assert len(warnings(caplog)) == 1
    desk = env.mock_of(DeskHoldApprovalChannel)
    assert desk.withdraw.call_args.args[0].resolution is PauseResolution.WITHDRAWN


async def test_a_decided_quorum_goes_on_once_a_hanging_withdraw_passed_its_timeout(
    env: TestEnv, caplog: pytest.LogCaptureFixture
) -> None:
    finishes(env, AlphaAgent, "alpha ok")
    pauses(env, BetaAgent, "o2")
    pauses(env, GammaAgent, "o3")
    paused = await env.app.execute(QuorumWorkflow, ORDERS, owner_id="u")
    assert paused.status is ExecutionStatus.PAUSED
    hanging = Hanging(env)
    answer = env.app.resume(pause_of(paused, "o2"), decision={"approved": True}, owner_id="u")
    with caplog.at_level(logging.WARNING, logger="agboss"):
        result = await cut_off(env, hanging, answer)
    assert result.status is ExecutionStatus.COMPLETED  # the quorum of two was decided
    assert hanging.calls == [pause_of(paused, "o3")]
    assert len(warnings(caplog)) == 1
