"""Pauses in trees: pauses.md on parallel branches, child workflows, FailFast and quorums."""

from __future__ import annotations

import pickle
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from agboss import (
    AgentFailedError,
    BudgetExceededError,
    ExecutionOutput,
    ExecutionStatus,
    NotPausedError,
    PauseResolution,
    PauseStatus,
)
from agboss.engine.trees import ExecutionFrame
from agboss.testing import TestEnv, call_tools, invalid_answer, reply_with, test_with, tool_call
from tests.apps import tree_app
from tests.apps.tree_app import (
    AlphaAgent,
    BareFailFastWorkflow,
    BetaAgent,
    CheckDto,
    CollectWorkflow,
    DeadlineWorkflow,
    DeclinedWorkflow,
    EachChildWorkflow,
    EachWorkflow,
    FailFastWorkflow,
    FailingAgent,
    GammaAgent,
    GroupsWorkflow,
    ItemAgent,
    NestedFailFastWorkflow,
    NestedWorkflow,
    OneSlotWorkflow,
    OrderDto,
    OrdersDto,
    ParallelWorkflow,
    QuorumWorkflow,
    ShipTool,
    StepChildWorkflow,
    SummaryDto,
    TreeApplication,
    TreeRecorder,
)
from tests.stores import STORE_KINDS, store_url

ORDERS = OrdersDto(orders=[OrderDto(order_id=f"o{i}") for i in range(3)])


pytestmark = pytest.mark.application.with_args(TreeApplication)


def pauses(env: TestEnv, agent: type[Any], order: str, verdict: str = "") -> None:
    env.mock_llm(agent).then_return(
        call_tools(tool_call(ShipTool, order_id=order)),
        reply_with(CheckDto, verdict=verdict or f"{order} done"),
    )


def finishes(env: TestEnv, agent: type[Any], verdict: str) -> None:
    env.mock_llm(agent).then_return(reply_with(CheckDto, verdict=verdict))


def fails(env: TestEnv, agent: type[Any]) -> None:
    env.mock_llm(agent).then_return(invalid_answer(nonsense=True))


def fails_once_answered(env: TestEnv, agent: type[Any], order: str) -> None:
    """The agent pauses on ``order``; once answered, it fails (in a later pass, so that its
    siblings have surely paused by then)."""
    env.mock_llm(agent).then_return(
        call_tools(tool_call(ShipTool, order_id=order)), invalid_answer(nonsense=True)
    )


def item_pauses(env: TestEnv, order: str) -> None:
    env.mock_llm(ItemAgent).when(input=OrderDto(order_id=order)).then_return(
        call_tools(tool_call(ShipTool, order_id=order)),
        reply_with(CheckDto, verdict=f"{order} shipped"),
    )


def pause_of(result: ExecutionOutput, order: str) -> str:
    for pause in result.pending:
        if pause.ask.arguments["order_id"] == order and pause.pause_id is not None:
            return pause.pause_id
    raise AssertionError(f"no pending pause for {order}: {result.pending}")


async def approve(env: TestEnv, pause_id: str, **options: Any) -> ExecutionOutput:
    return await env.app.resume(pause_id, decision={"approved": True}, owner_id="u", **options)


def model_calls(env: TestEnv, agent: type[Any]) -> int:
    return len(env.mock_llm(agent).requests)


# ---- a pause stops only those who cannot go on without it --------------------------------


async def test_a_paused_branch_does_not_stop_its_siblings_they_run_to_their_end(
    env: TestEnv,
    recorded: TreeRecorder,
) -> None:
    pauses(env, AlphaAgent, "o1")
    finishes(env, BetaAgent, "beta ok")
    finishes(env, GammaAgent, "gamma ok")
    result = await env.app.execute(ParallelWorkflow, ORDERS, owner_id="u")
    assert result.status is ExecutionStatus.PAUSED
    assert [p.agent for p in result.pending] == ["alpha-agent"]
    assert (model_calls(env, BetaAgent), model_calls(env, GammaAgent)) == (1, 1)
    assert recorded.joins == []  # the join waits for the paused one
    done = await approve(env, pause_of(result, "o1"))
    assert done.status is ExecutionStatus.COMPLETED
    assert done.output == SummaryDto(text="o1 done; beta ok; gamma ok")
    assert recorded.runs == ["ship o1"]


async def test_a_paused_branch_frees_its_max_concurrency_slot(env: TestEnv) -> None:
    pauses(env, AlphaAgent, "o1")
    pauses(env, BetaAgent, "o2")
    finishes(env, GammaAgent, "gamma ok")
    result = await env.app.execute(OneSlotWorkflow, ORDERS, owner_id="u")
    assert result.status is ExecutionStatus.PAUSED
    assert sorted(p.agent for p in result.pending) == ["alpha-agent", "beta-agent"]
    assert model_calls(env, GammaAgent) == 1  # it ran in the same pass, one slot at a time


async def test_the_join_waits_only_for_the_paused_ones_and_pending_keeps_the_rest(
    env: TestEnv,
    recorded: TreeRecorder,
) -> None:
    pauses(env, AlphaAgent, "o1")
    pauses(env, BetaAgent, "o2")
    finishes(env, GammaAgent, "gamma ok")
    result = await env.app.execute(ParallelWorkflow, ORDERS, owner_id="u")
    after_one = await approve(env, pause_of(result, "o1"))
    assert after_one.status is ExecutionStatus.PAUSED
    assert [p.agent for p in after_one.pending] == ["beta-agent"]
    assert recorded.joins == []
    done = await approve(env, pause_of(result, "o2"))
    assert done.status is ExecutionStatus.COMPLETED
    assert len(recorded.joins) == 1


async def test_on_execution_pause_fires_each_time_the_tree_rests(
    env: TestEnv, recorded: TreeRecorder
) -> None:
    pauses(env, AlphaAgent, "o1")
    pauses(env, BetaAgent, "o2")
    finishes(env, GammaAgent, "gamma ok")
    result = await env.app.execute(ParallelWorkflow, ORDERS, owner_id="u")
    await approve(env, pause_of(result, "o1"))
    assert [len(e.pending) for e in recorded.events] == [2, 1]
    await approve(env, pause_of(result, "o2"))
    assert len(recorded.events) == 2


async def test_pending_lists_each_item_pause_with_its_item_index(env: TestEnv) -> None:
    for order in ("o0", "o1", "o2"):
        item_pauses(env, order)
    result = await env.app.execute(EachWorkflow, ORDERS, owner_id="u")
    assert sorted((p.item_index, p.ask.arguments["order_id"]) for p in result.pending) == [
        (0, "o0"),
        (1, "o1"),
        (2, "o2"),
    ]
    assert all(p.child_execution_id is None for p in result.pending)


async def test_resuming_one_pause_re_runs_nothing_but_its_own_branch_and_the_join(
    env: TestEnv,
    recorded: TreeRecorder,
) -> None:
    orders = OrdersDto(orders=[OrderDto(order_id=f"o{i}") for i in range(5)])
    for item in orders.orders:
        item_pauses(env, item.order_id)
    result = await env.app.execute(EachWorkflow, orders, owner_id="u")
    assert len(result.pending) == 5
    calls_before, sent_before = model_calls(env, ItemAgent), list(recorded.sent)
    after = await approve(env, pause_of(result, "o2"))
    assert after.status is ExecutionStatus.PAUSED
    assert model_calls(env, ItemAgent) == calls_before + 1  # only o2's next turn
    assert sent_before == recorded.sent  # no other branch asked again
    assert recorded.runs == ["ship o2"]
    assert recorded.items == [2]  # the branch knows its item_index
    assert recorded.joins == []
    assert sorted(p.ask.arguments["order_id"] for p in after.pending) == ["o0", "o1", "o3", "o4"]


# ---- a pause inside a child is its root's ---------------------------------------------------


async def test_a_pause_inside_a_child_is_listed_by_the_root_and_answered_by_id(
    env: TestEnv,
) -> None:
    for order in ("o0", "o1", "o2"):
        item_pauses(env, order)
    result = await env.app.execute(EachChildWorkflow, ORDERS, owner_id="u")
    assert result.status is ExecutionStatus.PAUSED
    assert len(result.pending) == 3  # several children wait at once
    children = {p.child_execution_id for p in result.pending}
    assert len(children) == 3
    assert None not in children
    assert sorted(p.item_index for p in result.pending) == [0, 1, 2]  # type: ignore[type-var]
    for order in ("o0", "o1"):
        await approve(env, pause_of(result, order))
    done = await approve(env, pause_of(result, "o2"))
    assert done.status is ExecutionStatus.COMPLETED
    assert done.output == SummaryDto(text="o0 shipped; o1 shipped; o2 shipped")
    assert [child.status for child in done.children] == [ExecutionStatus.COMPLETED] * 3
    assert done.children[0].output == CheckDto(verdict="o0 shipped")


async def test_result_children_read_late_are_the_same_and_pickle_as_a_list(
    env: TestEnv,
) -> None:
    for order in ("o0", "o1", "o2"):
        item_pauses(env, order)
    result = await env.app.execute(EachChildWorkflow, ORDERS, owner_id="u")
    for order in ("o0", "o1", "o2"):
        done = await approve(env, pause_of(result, order))
    assert len(done.children) == 3
    again = await env.app.get(done.execution_id)
    assert done.children == list(again.children)  # read late, built from the same rows
    recorded = await env.app.get(done.execution_id, record=True)
    assert [(c.output, c.spend) for c in recorded.children] == [
        (c.output, c.spend) for c in done.children
    ]
    assert done.spend.model_calls == sum(c.spend.model_calls for c in done.children)
    copied = pickle.loads(pickle.dumps(done))
    assert type(copied.children) is list
    assert copied.children == done.children


async def test_a_workflow_as_a_step_pauses_and_goes_on_with_the_id_it_paused_with(
    env: TestEnv,
) -> None:
    pauses(env, AlphaAgent, "o1", "child done")
    result = await env.app.execute(StepChildWorkflow, ORDERS, owner_id="u")
    [pause] = result.pending
    assert pause.child_execution_id == result.children[0].execution_id
    done = await approve(env, pause_of(result, "o1"))
    assert done.output == CheckDto(verdict="child done")


async def test_children_nest_to_any_depth(env: TestEnv) -> None:
    for order in ("o0", "o1", "o2"):
        item_pauses(env, order)
    pauses(env, AlphaAgent, "o9", "alpha child")
    result = await env.app.execute(NestedWorkflow, ORDERS, owner_id="u")
    assert len(result.pending) == 4
    for order in ("o0", "o1", "o2", "o9"):
        last = await approve(env, pause_of(result, order))
    assert last.status is ExecutionStatus.COMPLETED
    assert last.output == SummaryDto(text="o0 shipped; o1 shipped; o2 shipped; alpha child")


# ---- FailFast drops paused siblings -----------------------------------------------------------


async def test_fail_fast_withdraws_paused_siblings_and_the_join_error_handler_runs_at_once(
    env: TestEnv,
) -> None:
    pauses(env, AlphaAgent, "o1")
    fails_once_answered(env, FailingAgent, "o2")
    desk = env.mock_of(tree_app.DeskHoldApprovalChannel)
    paused = await env.app.execute(FailFastWorkflow, ORDERS, owner_id="u")
    result = await approve(env, pause_of(paused, "o2"), record=True)
    assert result.status is ExecutionStatus.COMPLETED
    assert result.output == SummaryDto(text="recovered from AgentFailedError")
    assert result.pending == []
    desk.withdraw.assert_called_once()
    withdrawal = desk.withdraw.call_args.args[0]
    assert withdrawal.resolution is PauseResolution.WITHDRAWN
    assert withdrawal.value.arguments.order_id == "o1"
    assert result.record is not None
    resolutions = {
        p.step.tool_call.arguments["order_id"]: p.resolution for p in result.record.pauses
    }  # type: ignore[union-attr,index]
    assert resolutions == {"o1": PauseResolution.WITHDRAWN, "o2": PauseResolution.REPLIED}
    with pytest.raises(NotPausedError):
        await approve(env, pause_of(paused, "o1"))


async def test_without_a_handler_the_execution_fails_with_the_branchs_own_error(
    env: TestEnv,
    recorded: TreeRecorder,
) -> None:
    pauses(env, AlphaAgent, "o1")
    fails_once_answered(env, FailingAgent, "o2")
    paused = await env.app.execute(BareFailFastWorkflow, ORDERS, owner_id="u")
    with pytest.raises(AgentFailedError) as caught:
        await approve(env, pause_of(paused, "o2"))
    assert caught.value.agent == "failing-agent"
    assert sorted(recorded.sent) == ["send o1", "send o2", "withdraw o1 withdrawn"]


async def test_on_join_error_matches_a_domain_error_in_the_cause_chain(
    env: TestEnv, recorded: TreeRecorder
) -> None:
    recorded.decline.add("o8")
    pauses(env, AlphaAgent, "o1")
    env.mock_llm(BetaAgent).then_return(
        call_tools(tool_call(ShipTool, order_id="o2")),
        call_tools(tool_call(ShipTool, order_id="o8")),  # its channel's send raises
    )
    paused = await env.app.execute(DeclinedWorkflow, ORDERS, owner_id="u")
    result = await approve(env, pause_of(paused, "o2"))
    assert result.output == SummaryDto(text="recovered from AgentFailedError")
    [failed] = [j for j in recorded.joins if j.error is not None]
    assert isinstance(failed.error, AgentFailedError)
    assert isinstance(failed.error.__cause__, tree_app.PaymentDeclinedError)
    # o1 was sent, so it is told once; o8's send threw: never sent, never withdrawn.
    assert sorted(recorded.sent) == ["send o1", "send o2", "withdraw o1 withdrawn"]


async def test_fail_fast_withdraws_a_sibling_childs_pauses_at_any_depth(
    env: TestEnv, recorded: TreeRecorder
) -> None:
    for order in ("o0", "o1", "o2"):
        item_pauses(env, order)
    fails_once_answered(env, FailingAgent, "o9")
    paused = await env.app.execute(NestedFailFastWorkflow, ORDERS, owner_id="u")
    assert len(paused.pending) == 4
    result = await approve(env, pause_of(paused, "o9"), record=True)
    assert result.status is ExecutionStatus.COMPLETED
    assert result.output == SummaryDto(text="recovered from AgentFailedError")
    assert result.pending == []
    withdrawn = sorted(line for line in recorded.sent if line.startswith("withdraw"))
    assert withdrawn == [f"withdraw o{i} withdrawn" for i in range(3)]
    paused_child = next(c for c in result.children if c.execution_id.endswith("@0"))
    assert paused_child.status is ExecutionStatus.CANCELLED


async def test_collect_gives_the_join_each_branchs_output_or_error(
    env: TestEnv, recorded: TreeRecorder
) -> None:
    finishes(env, AlphaAgent, "alpha ok")
    fails(env, FailingAgent)
    result = await env.app.execute(CollectWorkflow, ORDERS, owner_id="u")
    assert result.status is ExecutionStatus.COMPLETED
    [joined] = recorded.joins
    assert joined.results[0].output == CheckDto(verdict="alpha ok")
    assert isinstance(joined.results[1].error, AgentFailedError)


# ---- quorums ----------------------------------------------------------------------------------


async def test_a_decided_quorum_drops_its_waiting_branches_in_the_same_call(env: TestEnv) -> None:
    finishes(env, AlphaAgent, "alpha ok")
    pauses(env, BetaAgent, "o2")
    pauses(env, GammaAgent, "o3")
    desk = env.mock_of(tree_app.DeskHoldApprovalChannel)
    paused = await env.app.execute(QuorumWorkflow, ORDERS, owner_id="u")
    assert paused.status is ExecutionStatus.PAUSED  # one of two counted so far
    result = await approve(env, pause_of(paused, "o2"))
    assert result.status is ExecutionStatus.COMPLETED
    assert result.pending == []
    assert result.output == SummaryDto(text="alpha ok; o2 done | quorum True None")
    desk.withdraw.assert_called_once()
    assert desk.withdraw.call_args.args[0].value.arguments.order_id == "o3"
    with pytest.raises(NotPausedError):
        await approve(env, pause_of(paused, "o3"))


async def test_a_quorum_that_can_no_longer_be_reached_is_decided(
    env: TestEnv, recorded: TreeRecorder
) -> None:
    finishes(env, AlphaAgent, "alpha ok")
    fails(env, BetaAgent)
    fails(env, GammaAgent)
    # BetaAgent and GammaAgent allow validation attempts: script them out instead.
    env.mock_llm(BetaAgent).then_return(*[invalid_answer(nonsense=True)] * 3)
    env.mock_llm(GammaAgent).then_return(*[invalid_answer(nonsense=True)] * 3)
    result = await env.app.execute(QuorumWorkflow, ORDERS, owner_id="u")
    assert result.status is ExecutionStatus.COMPLETED
    [joined] = recorded.joins
    assert joined.quorum is not None
    assert joined.quorum.reached is False


async def test_a_deadline_that_passes_while_the_tree_rests_withdraws_nothing_until_the_next_pass(
    env: TestEnv,
    recorded: TreeRecorder,
) -> None:
    finishes(env, AlphaAgent, "alpha ok")
    pauses(env, BetaAgent, "o2")
    pauses(env, GammaAgent, "o3")
    result = await env.app.execute(QuorumWorkflow, ORDERS, owner_id="u")
    assert result.status is ExecutionStatus.PAUSED
    await env.clock.jump(timedelta(hours=2))  # past the deadline; the sweep runs meanwhile
    store = env.app.store
    assert len(await store.pauses.find_by_root(result.execution_id, (PauseStatus.PENDING,))) == 2
    done = await approve(env, pause_of(result, "o2"))  # the next pass finds it decided
    assert done.status is ExecutionStatus.COMPLETED
    assert done.pending == []
    [joined] = recorded.joins
    assert joined.quorum is not None
    assert joined.quorum.deadline_passed
    assert recorded.sent.count("withdraw o3 withdrawn") == 1
    assert recorded.runs == []  # the answer came after the quorum was decided


async def test_a_quorum_group_wins(env: TestEnv, recorded: TreeRecorder) -> None:
    pauses(env, AlphaAgent, "o1")
    pauses(env, BetaAgent, "o2")
    pauses(env, GammaAgent, "o3")
    paused = await env.app.execute(GroupsWorkflow, ORDERS, owner_id="u")
    result = await approve(env, pause_of(paused, "o3"))
    assert result.status is ExecutionStatus.COMPLETED
    assert result.output == SummaryDto(text="o3 done | quorum True solo")
    assert sorted(recorded.sent) == sorted(
        ["send o1", "send o2", "send o3", "withdraw o1 withdrawn", "withdraw o2 withdrawn"]
    )


async def test_a_join_deadline_counts_elapsed_time_on_the_clock_pauses_included(
    env: TestEnv,
) -> None:
    pauses(env, AlphaAgent, "o1")
    pauses(env, BetaAgent, "o2")
    result = await env.app.execute(DeadlineWorkflow, ORDERS, owner_id="u")
    await approve(env, pause_of(result, "o1"))
    await env.clock.advance(timedelta(minutes=61))
    done = await approve(env, pause_of(result, "o2"))
    assert done.output == SummaryDto(text="recovered from JoinDeadlineError")


# ---- records ------------------------------------------------------------------------------------


async def test_the_roots_record_keeps_the_whole_trees_pauses_and_each_child_its_own(
    env: TestEnv,
) -> None:
    for order in ("o0", "o1", "o2"):
        item_pauses(env, order)
    pauses(env, AlphaAgent, "o9", "alpha child")
    result = await env.app.execute(NestedWorkflow, ORDERS, owner_id="u")
    for order in ("o0", "o1", "o2", "o9"):
        last = await approve(env, pause_of(result, order), record=True)
    assert last.record is not None
    assert len(last.record.pauses) == 4
    each_child, alpha_child = last.record.children
    assert [p.step.tool_call.arguments for p in alpha_child.pauses] == [{"order_id": "o9"}]  # type: ignore[union-attr]
    assert each_child.pauses == []  # its grandchildren's are in their own records
    grandchildren = each_child.children
    assert [(g.item_index, len(g.pauses)) for g in grandchildren] == [(0, 1), (1, 1), (2, 1)]
    assert [g.pauses[0].step.item_index for g in grandchildren] == [0, 1, 2]
    # result.children carries the same records
    assert [child.record for child in last.children] == last.record.children
    assert last.children[0].children[1].record == grandchildren[1]


async def test_resuming_one_pause_reads_no_other_paused_branch(
    env: TestEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    orders = OrdersDto(orders=[OrderDto(order_id=f"o{i}") for i in range(5)])
    for item in orders.orders:
        item_pauses(env, item.order_id)
    result = await env.app.execute(EachWorkflow, orders, owner_id="u")
    loaded: list[str] = []
    from_store: list[str] = []
    real_frame_load, real_store_load = ExecutionFrame.load, env.app.store.journal.load

    async def frame_load(frame: ExecutionFrame, prefix: str = "") -> None:
        loaded.append(prefix)
        await real_frame_load(frame, prefix)

    async def store_load(execution_id: str, prefix: str = "") -> Any:
        from_store.append(prefix)
        return await real_store_load(execution_id, prefix)

    monkeypatch.setattr(ExecutionFrame, "load", frame_load)
    monkeypatch.setattr(env.app.store.journal, "load", store_load)
    await approve(env, pause_of(result, "o2"))
    branches = {prefix.split("/")[0] for prefix in loaded if "@" in prefix}
    assert branches == {"1:checks-join#0@2"}  # only the answered branch was re-entered
    # Its steps came with the answer's lease; no branch's steps were read on their own.
    assert [prefix for prefix in from_store if "@" in prefix] == []


async def test_a_childs_model_calls_count_against_the_trees_budget(env: TestEnv) -> None:
    pauses(env, AlphaAgent, "o1")
    result = await env.app.execute(tree_app.BudgetedWorkflow, ORDERS, owner_id="u", record=True)
    assert result.record is not None
    assert [e.caller for e in result.record.ledger] == ["agent:alpha-agent"]
    assert result.record.ledger[0].execution_id == result.children[0].execution_id
    with pytest.raises(AgentFailedError) as caught:
        await approve(env, pause_of(result, "o1"))
    assert isinstance(caught.value.__cause__, BudgetExceededError)
    assert "budgeted-workflow" in str(caught.value.__cause__)


async def test_a_per_item_launch_over_no_items_joins_at_once(
    env: TestEnv, recorded: TreeRecorder
) -> None:
    result = await env.app.execute(EachWorkflow, OrdersDto(orders=[]), owner_id="u")
    assert result.status is ExecutionStatus.COMPLETED
    assert result.output == SummaryDto(text="")
    [joined] = recorded.joins
    assert joined.results == []


async def test_a_pass_that_takes_many_answers_recorded_meanwhile_rests_on_the_rest(
    env: TestEnv,
    recorded: TreeRecorder,
) -> None:
    # More answers than the resting commit checks itself (64): the pass reads them instead.
    orders = OrdersDto(orders=[OrderDto(order_id=f"o{i}") for i in range(70)])
    for item in orders.orders:
        item_pauses(env, item.order_id)
    result = await env.app.execute(EachWorkflow, orders, owner_id="u")
    assert len(result.pending) == 70
    for order in [f"o{i}" for i in range(69)]:
        await env.app.answer(
            pause_of(result, order), decision={"approved": True}, owner_id="u", move=False
        )
    [moved] = await env.app.recover()
    assert moved.status is ExecutionStatus.PAUSED
    assert [p.ask.arguments["order_id"] for p in moved.pending] == ["o69"]
    assert sorted(recorded.runs) == sorted(f"ship o{i}" for i in range(69))
    done = await approve(env, pause_of(moved, "o69"))
    assert done.status is ExecutionStatus.COMPLETED


def _as_read(result: ExecutionOutput) -> tuple[Any, ...]:
    """What an output says of a tree, children included."""
    return (
        result.status,
        result.spend,
        result.pending,
        [(c.execution_id, c.status, c.output, c.spend, c.pending) for c in result.children],
    )


async def test_each_resume_in_a_tree_of_children_says_what_a_fresh_read_of_it_says(
    env: TestEnv,
) -> None:
    # The instance keeps the tree's outline from its last pass and reads again only what the
    # next pass changed: the output must not differ from reading the whole tree.
    orders = OrdersDto(orders=[OrderDto(order_id=f"o{i}") for i in range(5)])
    for item in orders.orders[1:]:
        item_pauses(env, item.order_id)
    # o0 asks twice: answered once, its child spends and waits again, its status unchanged.
    env.mock_llm(ItemAgent).when(input=OrderDto(order_id="o0")).then_return(
        call_tools(tool_call(ShipTool, order_id="o0")),
        call_tools(tool_call(ShipTool, order_id="o0 again")),
        reply_with(CheckDto, verdict="o0 shipped"),
    )
    after = await env.app.execute(EachChildWorkflow, orders, owner_id="u")
    assert _as_read(after) == _as_read(await env.app.get(after.execution_id))
    for order in ["o0", "o0 again", "o1", "o2", "o3", "o4"]:
        after = await approve(env, pause_of(after, order))
        assert _as_read(after) == _as_read(await env.app.get(after.execution_id))
    assert after.status is ExecutionStatus.COMPLETED
    assert [c.status for c in after.children] == [ExecutionStatus.COMPLETED] * 5


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_resume_after_another_instance_moved_the_tree_shows_what_it_did(
    kind: str, tmp_path: Path
) -> None:
    orders = OrdersDto(orders=[OrderDto(order_id=f"o{i}") for i in range(3)])
    async with (
        store_url(kind, tmp_path) as url,
        test_with(TreeApplication, store=url) as first,
        test_with(TreeApplication, store=url) as second,
    ):
        for item in orders.orders:
            item_pauses(first, item.order_id)
        second.mock_llm(ItemAgent).when(input=OrderDto(order_id="o1")).then_return(
            reply_with(CheckDto, verdict="o1 shipped")
        )
        result = await first.app.execute(EachChildWorkflow, orders, owner_id="u")
        await approve(first, pause_of(result, "o0"))
        await approve(second, pause_of(result, "o1"))  # the first instance's outline is old
        after = await approve(first, pause_of(result, "o2"))
        assert after.status is ExecutionStatus.COMPLETED
        assert [c.output for c in after.children] == [
            CheckDto(verdict=f"o{i} shipped") for i in range(3)
        ]
        assert _as_read(after) == _as_read(await second.app.get(result.execution_id))
