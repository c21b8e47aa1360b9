"""A branch that fails takes its own pauses with it: FailFast, COLLECT, quorum, child workflows.

pauses.md: a branch that fails cancels its launch and the pauses under it are withdrawn; the
tree goes on to the join "instead of waiting for answers nobody needs". These are the pauses a
failed branch asked itself, in the same model turn as the call that failed it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agboss import (
    ExecutionStatus,
    NotPausedError,
    PauseResolution,
    PauseStatus,
)
from agboss.testing import TestEnv, call_tools, reply_with, tool_call
from tests.apps import tree_app
from tests.apps.tree_app import (
    AlphaAgent,
    BetaAgent,
    CheckDto,
    CollectWorkflow,
    DeclinedWorkflow,
    FailingAgent,
    GammaAgent,
    NestedFailFastWorkflow,
    QuorumWorkflow,
    ShipTool,
    SummaryDto,
    TreeApplication,
    TreeRecorder,
)
from tests.test_trees import ORDERS, finishes, pauses

pytestmark = pytest.mark.application.with_args(TreeApplication)


def asks_then_breaks(env: TestEnv, recorded: TreeRecorder, agent: type[Any], order: str) -> None:
    """In one turn the agent asks for ``order`` (sent, waiting) and calls a tool whose
    channel's send raises (o8): its step fails, with its own pause waiting."""
    recorded.decline.add("o8")
    env.mock_llm(agent).then_return(
        call_tools(tool_call(ShipTool, order_id=order), tool_call(ShipTool, order_id="o8")),
        reply_with(CheckDto, verdict="never"),
    )


async def pause_status(env: TestEnv, order: str) -> tuple[PauseStatus, PauseResolution | None]:
    """The status of the pause that asked about ``order`` (its id from the channel's send)."""
    desk = env.mock_of(tree_app.DeskHoldApprovalChannel)
    [pause_id] = [
        call.args[0].pause_id
        for call in desk.send.call_args_list
        if call.args[0].value.arguments.order_id == order
    ]
    pause = await env.app.store.pauses.find_by_tenant_id_and_pause_id("default", pause_id)
    assert pause is not None
    return pause.status, pause.resolution


async def assert_withdrawn_and_closed(env: TestEnv, recorded: TreeRecorder, order: str) -> None:
    assert f"withdraw {order} withdrawn" in recorded.sent  # its channel was told once
    assert recorded.sent.count(f"withdraw {order} withdrawn") == 1
    assert await pause_status(env, order) == (PauseStatus.CANCELLED, PauseResolution.WITHDRAWN)
    desk = env.mock_of(tree_app.DeskHoldApprovalChannel)
    [pause_id] = [
        call.args[0].pause_id
        for call in desk.send.call_args_list
        if call.args[0].value.arguments.order_id == order
    ]
    with pytest.raises(NotPausedError):  # an answer is refused, not recorded for nobody
        await env.app.resume(pause_id, decision={"approved": True}, owner_id="u")


async def test_fail_fast_withdraws_the_failed_branchs_own_waiting_pause(
    env: TestEnv, recorded: TreeRecorder
) -> None:
    env.mock_of(tree_app.DeskHoldApprovalChannel)
    asks_then_breaks(env, recorded, AlphaAgent, "o1")
    pauses(env, BetaAgent, "o2")
    result = await env.app.execute(DeclinedWorkflow, ORDERS, owner_id="u")
    assert result.status is ExecutionStatus.COMPLETED
    assert result.output == SummaryDto(text="recovered from AgentFailedError")
    assert result.pending == []
    await assert_withdrawn_and_closed(env, recorded, "o1")
    await assert_withdrawn_and_closed(env, recorded, "o2")


async def test_collect_withdraws_the_failed_branchs_own_pause_and_joins_the_rest(
    env: TestEnv,
    recorded: TreeRecorder,
) -> None:
    env.mock_of(tree_app.DeskHoldApprovalChannel)
    finishes(env, AlphaAgent, "alpha ok")
    asks_then_breaks(env, recorded, FailingAgent, "o1")
    result = await env.app.execute(CollectWorkflow, ORDERS, owner_id="u")
    assert result.status is ExecutionStatus.COMPLETED
    assert result.pending == []
    assert result.output is not None
    assert result.output.text.startswith("alpha ok; error: ")  # type: ignore[attr-defined]
    await assert_withdrawn_and_closed(env, recorded, "o1")


async def test_a_quorum_withdraws_a_failed_branchs_own_pause(
    env: TestEnv, recorded: TreeRecorder
) -> None:
    env.mock_of(tree_app.DeskHoldApprovalChannel)
    pauses(env, AlphaAgent, "o2", "alpha ok")
    finishes(env, BetaAgent, "beta ok")
    asks_then_breaks(env, recorded, GammaAgent, "o1")
    paused = await env.app.execute(QuorumWorkflow, ORDERS, owner_id="u")
    assert paused.status is ExecutionStatus.PAUSED  # one of two so far: the quorum waits...
    assert [p.ask.arguments["order_id"] for p in paused.pending] == ["o2"]
    await assert_withdrawn_and_closed(
        env, recorded, "o1"
    )  # ...but not for the failed branch's pause
    [o2] = paused.pending
    assert o2.pause_id is not None
    done = await env.app.resume(o2.pause_id, decision={"approved": True}, owner_id="u")
    assert done.status is ExecutionStatus.COMPLETED


async def test_a_failed_child_workflow_withdraws_its_own_pause(
    env: TestEnv, recorded: TreeRecorder
) -> None:
    env.mock_of(tree_app.DeskHoldApprovalChannel)
    for order in ("o0", "o1", "o2"):
        env.mock_llm(tree_app.ItemAgent).when(input=tree_app.OrderDto(order_id=order)).then_return(
            call_tools(tool_call(ShipTool, order_id=order)),
            reply_with(CheckDto, verdict=f"{order} shipped"),
        )
    asks_then_breaks(env, recorded, FailingAgent, "o9")
    result = await env.app.execute(NestedFailFastWorkflow, ORDERS, owner_id="u")
    assert result.status is ExecutionStatus.COMPLETED
    assert result.output == SummaryDto(text="recovered from AgentFailedError")
    assert result.pending == []
    for order in ("o0", "o1", "o2", "o9"):
        await assert_withdrawn_and_closed(env, recorded, order)


# ---- a call that waited for the lease -----------------------------------------------------


@pytest.fixture
def two(env: TestEnv) -> TestEnv:
    """The tree application on two instances (the test's mark says how many)."""
    return env


@pytest.mark.application.with_args(TreeApplication, instances=2)
async def test_a_resume_that_waited_for_the_lease_fires_no_second_pause_event(
    two: TestEnv,
    recorded: TreeRecorder,
) -> None:
    for order in ("o0", "o1", "o2"):
        two.mock_llm(tree_app.ItemAgent).when(input=tree_app.OrderDto(order_id=order)).then_return(
            call_tools(tool_call(ShipTool, order_id=order)),
            reply_with(CheckDto, verdict=f"{order} shipped"),
        )
    started, go_on = asyncio.Event(), asyncio.Event()

    async def ship(args: tree_app.OrderDto) -> CheckDto:
        if args.order_id == "o0":  # item 0's tool runs while item 1 is answered elsewhere
            started.set()
            await go_on.wait()
        return CheckDto(verdict=f"shipped {args.order_id}")

    two.mock_of(ShipTool).run.side_effect = ship
    paused = await two.apps[0].execute(tree_app.EachWorkflow, ORDERS, owner_id="u")
    assert len(recorded.events) == 1
    ids = {p.ask.arguments["order_id"]: p.pause_id for p in paused.pending}
    first = asyncio.ensure_future(
        two.apps[0].resume(str(ids["o0"]), decision={"approved": True}, owner_id="u")
    )
    await started.wait()
    second = asyncio.ensure_future(
        two.apps[1].resume(str(ids["o1"]), decision={"approved": True}, owner_id="u")
    )
    for _ in range(2000):  # until the second answer is recorded (and its call waits)
        found = await two.app.store.pauses.find_by_tenant_id_and_pause_id("default", str(ids["o1"]))
        if found is not None and found.status is PauseStatus.RESOLVED:
            break
        await asyncio.sleep(0.002)
    else:
        raise AssertionError("the second answer was never recorded")
    go_on.set()
    moved, waited = await first, await second
    # The first call's pass took both answers and the tree rested once, on item 2.
    assert [p.ask.arguments["order_id"] for p in moved.pending] == ["o2"]
    assert len(recorded.events) == 2
    assert [len(event.pending) for event in recorded.events] == [3, 1]
    # The call that waited returns the tree as it stands, its decision taken.
    assert waited.status is ExecutionStatus.PAUSED
    assert [p.ask.arguments["order_id"] for p in waited.pending] == ["o2"]
    taken = await two.app.store.pauses.find_by_tenant_id_and_pause_id("default", str(ids["o1"]))
    assert taken is not None
    assert taken.status is PauseStatus.TAKEN


# ---- decided: item_index through children, children's pending, send-failed ----------------


async def test_a_grandchilds_pause_under_a_per_item_child_carries_the_childs_item(
    env: TestEnv,
) -> None:
    for order in ("o0", "o1", "o2"):
        env.mock_llm(tree_app.ItemAgent).when(input=tree_app.OrderDto(order_id=order)).then_return(
            call_tools(tool_call(ShipTool, order_id=order)),
            reply_with(CheckDto, verdict=f"{order} shipped"),
        )
    paused = await env.app.execute(tree_app.EachGrandchildWorkflow, ORDERS, owner_id="u")
    by_order = {p.ask.arguments["order_id"]: p for p in paused.pending}
    assert {order: p.item_index for order, p in by_order.items()} == {"o0": 0, "o1": 1, "o2": 2}
    for index, child in enumerate(paused.children):  # each per-item child ...
        [grandchild] = child.children  # ... runs a workflow step: the grandchild waits
        [pause] = grandchild.pending
        assert pause.item_index == index
        assert pause.child_execution_id == grandchild.execution_id
    recorded = await env.app.get(paused.execution_id, record=True)
    assert recorded.record is not None
    for index, child_record in enumerate(recorded.record.children):
        assert child_record.children[0].item_index == index
        assert child_record.status is ExecutionStatus.PAUSED  # an ExecutionStatus, not a str


async def test_a_paused_child_lists_the_waiting_pauses_of_its_own_subtree(env: TestEnv) -> None:
    for order in ("o0", "o1", "o2"):
        env.mock_llm(tree_app.ItemAgent).when(input=tree_app.OrderDto(order_id=order)).then_return(
            call_tools(tool_call(ShipTool, order_id=order)),
            reply_with(CheckDto, verdict=f"{order} shipped"),
        )
    paused = await env.app.execute(tree_app.EachGrandchildWorkflow, ORDERS, owner_id="u")
    assert [child.status for child in paused.children] == [ExecutionStatus.PAUSED] * 3
    assert [[p.ask.arguments["order_id"] for p in c.pending] for c in paused.children] == [
        ["o0"],
        ["o1"],
        ["o2"],
    ]
    assert sorted(p.pause_id or "" for c in paused.children for p in c.pending) == sorted(
        p.pause_id or "" for p in paused.pending
    )
    first = paused.pending[0]
    assert first.pause_id is not None
    after = await env.app.resume(first.pause_id, decision={"approved": True}, owner_id="u")
    done = [c for c in after.children if c.status is ExecutionStatus.COMPLETED]
    assert len(done) == 1
    assert done[0].pending == []


async def test_a_pause_whose_send_raised_is_recorded_as_send_failed_not_cancelled(
    env: TestEnv,
    recorded: TreeRecorder,
) -> None:
    env.mock_of(tree_app.DeskHoldApprovalChannel)
    asks_then_breaks(env, recorded, AlphaAgent, "o1")
    pauses(env, BetaAgent, "o2")
    result = await env.app.execute(DeclinedWorkflow, ORDERS, owner_id="u", record=True)
    assert result.record is not None
    resolutions = {
        entry.step.tool_call.arguments["order_id"]: entry.resolution  # type: ignore[union-attr]
        for entry in result.record.pauses
    }
    assert resolutions == {
        "o1": PauseResolution.WITHDRAWN,  # asked, then taken back
        "o2": PauseResolution.WITHDRAWN,
        "o8": PauseResolution.SEND_FAILED,  # nobody was ever asked
    }
