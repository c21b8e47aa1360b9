"""What a pass woken by time asks of its store: it enters only the branches whose question is
due — read with the lease, as an answer's is — or whose step rests until its next attempt
(their paths kept with the tree's wake-up), not every waiting branch. Counted at the store's
driver, as `tests/test_round_trips.py` counts an answer's."""

from __future__ import annotations

from datetime import timedelta

import pytest

from agboss import ExecutionOutput, ExecutionStatus, ModelProviderError, WorkflowFinishTextDto
from agboss.testing import TestEnv, call_tools, fail_with, reply_with, tool_call
from tests.apps.deadline_app import (
    HOUR,
    CollectedOrdersWorkflow,
    DeadlineApplication,
    DeadlineRecorder,
    OrderDto,
    OrderRefundAgent,
    OrdersDto,
    RejectRefundTool,
    RemindedRefundTool,
)
from tests.calls import Calls

pytestmark = pytest.mark.application.with_args(DeadlineApplication)

DONE = reply_with(WorkflowFinishTextDto, text="Refunded.")

SWEPT = timedelta(seconds=1)
"""The last moment before the reminder: counted with the pass it wakes."""

SWEEP = "SELECT e.execution_id FROM executions AS e "
"""The read of a sweep that runs in that moment (the trees to move): the instance's, not the
pass's."""


def passes_reads(calls: Calls) -> int:
    """The reads counted, but the sweep's."""
    return sum(not statement.startswith(SWEEP) for statement in calls.statements)


async def launched(env: TestEnv, count: int) -> ExecutionOutput:
    """A per-item launch of ``count`` questions, the first of which is reminded in an hour
    (the others expire in two days)."""
    orders = [f"{count}-{index}" for index in range(count)]  # each launch's own
    for order in orders:
        tool = RemindedRefundTool if order == f"{count}-0" else RejectRefundTool
        env.mock_llm(OrderRefundAgent).when(input=OrderDto(order_id=order)).then_return(
            call_tools(tool_call(tool, order_id=order)), DONE
        )
    items = OrdersDto(orders=[OrderDto(order_id=order) for order in orders])
    result = await env.app.execute(CollectedOrdersWorkflow, items, owner_id="ada")
    assert len(result.pending) == count
    return result


async def woken_reads(
    env: TestEnv, recorded: DeadlineRecorder, count: int, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str]:
    """The reads of the pass the first question's reminder wakes, in a launch of ``count``;
    and the launch's root."""
    before = len(recorded.told)  # a test may launch again on the same store
    root = (await launched(env, count)).execution_id
    await env.clock.advance(HOUR - SWEPT)  # the sweeps of the hour find nothing to move
    calls = Calls()
    calls.watch(env.app.store, monkeypatch)
    await env.clock.advance(SWEPT)  # the reminder is due: this instance's timer wakes the tree
    told = recorded.told[before:]
    assert told[-1].startswith(f"remind {count}-0 #1"), told
    assert [line for line in told if line.startswith("remind")] == [told[-1]]
    monkeypatch.undo()
    return passes_reads(calls), root


async def answer_reads(
    env: TestEnv, root: str, monkeypatch: pytest.MonkeyPatch, order: str = "80-0"
) -> int:
    """The reads of the pass that moves an answer to ``order``'s question (the reminded one)."""
    [pause] = [
        pause
        for pause in (await env.app.get(root)).pending
        if pause.ask.arguments == {"order_id": order}
    ]
    pause_id = await env.app.pause_id_of(pause.pause_ref)  # as the channel's side knows it
    calls = Calls()
    calls.watch(env.app.store, monkeypatch)
    moved = await env.app.resume(pause_id, decision={"approved": True}, answered_by="desk")
    assert len(moved.pending) == len((await env.app.get(root)).pending)
    monkeypatch.undo()
    return passes_reads(calls)


async def test_a_pass_woken_by_one_due_question_of_80_reads_what_an_answer_reads(
    env: TestEnv, monkeypatch: pytest.MonkeyPatch, recorded: DeadlineRecorder
) -> None:
    woken, root = await woken_reads(env, recorded, 80, monkeypatch)
    answered = await answer_reads(env, root, monkeypatch)
    assert woken <= answered, (woken, answered)


@pytest.mark.parametrize("count", [5, 40])
async def test_what_a_woken_pass_reads_does_not_grow_with_the_questions_waiting(
    env: TestEnv, monkeypatch: pytest.MonkeyPatch, count: int, recorded: DeadlineRecorder
) -> None:
    few, _ = await woken_reads(env, recorded, count, monkeypatch)
    # The same launch once more in the same store, eight times as wide.
    more, _ = await woken_reads(env, recorded, count * 8, monkeypatch)
    assert more == few, (few, more)


async def test_the_other_questions_keep_their_deadline_after_the_woken_pass(
    env: TestEnv, monkeypatch: pytest.MonkeyPatch, recorded: DeadlineRecorder
) -> None:
    _, root = await woken_reads(env, recorded, 5, monkeypatch)
    await env.clock.jump(timedelta(days=2))  # every question's deadline has come
    assert (await env.app.pending(owner_id="ada")).entries == []
    done = await env.app.get(root)
    assert done.status is ExecutionStatus.COMPLETED, done


# ---- a resting step --------------------------------------------------------------------------

BUSY = ModelProviderError("busy", status=503, retryable=True, retry_after=HOUR.total_seconds())
"""A provider that asks to come back in an hour: longer than a lease, so the call rests."""


async def rested_reads(
    env: TestEnv, count: int, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str]:
    """The reads of the pass woken by the first branch's resting model call (its provider was
    busy for an hour), in a launch whose other ``count - 1`` branches wait on questions; and
    the launch's root."""
    orders = [f"r{count}-{index}" for index in range(count)]
    for order in orders:
        script = env.mock_llm(OrderRefundAgent).when(input=OrderDto(order_id=order))
        asks = call_tools(tool_call(RejectRefundTool, order_id=order))
        script.then_return(*((fail_with(BUSY),) if order == orders[0] else ()), asks, DONE)
    items = OrdersDto(orders=[OrderDto(order_id=order) for order in orders])
    result = await env.app.execute(CollectedOrdersWorkflow, items, owner_id="ada")
    assert len(result.pending) == count - 1
    root = await env.app.store.executions.find_by_id(result.execution_id)
    assert root is not None
    assert root.resting_paths is not None
    assert len(root.resting_paths) == 1  # the one branch that rests, kept with its wake-up
    await env.clock.advance(HOUR - SWEPT)  # the sweeps of the hour find nothing to move
    calls = Calls()
    calls.watch(env.app.store, monkeypatch)
    await env.clock.advance(SWEPT)  # the call is due again: this instance's timer wakes the tree
    monkeypatch.undo()
    woken = await env.app.get(result.execution_id)
    assert len(woken.pending) == count  # the rested branch's call ran and asked its question
    assert woken.wake_at is not None
    assert woken.wake_at > env.clock.now()  # the questions' deadlines: no wake-up left behind
    return passes_reads(calls), result.execution_id


async def test_a_pass_woken_by_one_resting_branch_of_80_reads_what_an_answer_reads(
    env: TestEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    woken, root = await rested_reads(env, 80, monkeypatch)
    answered = await answer_reads(env, root, monkeypatch, order="r80-0")
    # Besides what an answer's pass reads, the branch's own work: its first model call reads
    # the thread's earlier exchanges, and the question it then asks is looked for by its step.
    assert woken <= answered + 2, (woken, answered)


async def test_what_a_pass_woken_by_a_resting_step_reads_does_not_grow_with_the_branches(
    env: TestEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    few, _ = await rested_reads(env, 5, monkeypatch)
    more, _ = await rested_reads(env, 40, monkeypatch)
    assert more == few, (few, more)
