"""Resting retries (issue 39): a wait longer than a third of the lease rests the tree — status
`WAITING`, ``wake_at`` stored with it, no lease held, no task parked — and the instance's timer
or, across a restart, any instance's sweep moves it when it is due; on both stores, against a
real OpenAI-compatible server on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from agboss import (
    ExecutionStatus,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
)
from agboss.models.openai import OpenAICompatibleProvider
from agboss.store.writes import AcquireLease, ReleaseLease
from agboss.testing import TestEnv, call_tools, reply_with, test_with, tool_call
from tests.apps.pay_app import (
    LatePayAgent,
    LatePayApplication,
    LatePayTool,
    LatePayWorkflow,
    PayApplication,
    PayRecorder,
    PayWorkflow,
)
from tests.apps.recorded import recording
from tests.loopback import LoopbackServer, Reply, completion, loopback_server
from tests.stores import STORE_KINDS, store_url

ANSWER = completion(tool_calls=[{"name": "final_answer", "arguments": {"text": "Done."}}])


@pytest.fixture(params=STORE_KINDS)
async def url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    async with store_url(request.param, tmp_path) as made:
        yield made


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with loopback_server() as made:
        yield made


async def lease_is_free(env: TestEnv, root: str) -> bool:
    """Whether another instance could take the tree's lease now (then gives it back)."""
    store = env.apps[-1].store
    [taken] = (
        await store.write([AcquireLease(root, "probe", timedelta(seconds=30), env.clock.now())])
    ).pairs()
    acquired = taken[1]
    if acquired is None:
        return False
    await store.write([ReleaseLease(acquired.fence)])  # type: ignore[attr-defined]
    return True


async def test_a_429_asking_two_minutes_rests_the_tree_until_then_across_a_restart(
    url: str, server: LoopbackServer
) -> None:
    provider = OpenAICompatibleProvider(base_url=server.base_url, serves=("test/*",))
    server.replies.extend(
        [Reply(429, {"error": {"message": "slow down"}}, {"retry-after": "120"}), ANSWER]
    )
    async with test_with(PayApplication, store=url, providers=[provider]) as env:
        began = env.clock.now()
        rested = await env.app.execute(PayWorkflow, WorkflowStartTextDto(text="hi"), owner_id="u")
        assert rested.status is ExecutionStatus.WAITING  # returned at once: nothing parked
        assert rested.wake_at == began + timedelta(seconds=120)
        assert rested.pending == []
        assert await lease_is_free(env, rested.execution_id)  # no lease held meanwhile
        assert (await env.app.get(rested.execution_id)).wake_at == rested.wake_at
        await env.restart()  # the instance that armed the timer is gone
        await env.clock.advance(timedelta(seconds=110))  # the sweeps before it is due
        assert (await env.app.get(rested.execution_id)).status is ExecutionStatus.WAITING
        assert len(server.requests) == 1
        await env.clock.advance(timedelta(seconds=30))  # due: a sweep of the new instance
        done = await env.app.get(rested.execution_id, record=True)
        assert done.status is ExecutionStatus.COMPLETED
        assert done.output == WorkflowFinishTextDto(text="Done.")
        assert done.wake_at is None
        assert len(server.requests) == 2
        assert done.record is not None
        assert len(done.record.ledger) == 1  # the attempt that answered, counted once
    await provider.aclose()


async def test_the_instances_own_timer_wakes_the_tree_when_it_is_due(
    url: str, server: LoopbackServer
) -> None:
    provider = OpenAICompatibleProvider(base_url=server.base_url, serves=("test/*",))
    server.replies.extend(
        [Reply(503, {"error": {"message": "busy"}}, {"retry-after": "15"}), ANSWER]
    )
    async with test_with(PayApplication, store=url, providers=[provider]) as env:
        rested = await env.app.execute(PayWorkflow, WorkflowStartTextDto(text="hi"), owner_id="u")
        assert rested.status is ExecutionStatus.WAITING
        await env.clock.advance(timedelta(seconds=15))  # before the first sweep (30 s)
        done = await env.app.get(rested.execution_id)
        assert done.status is ExecutionStatus.COMPLETED
    await provider.aclose()


async def test_a_tools_long_wait_rests_the_tree_and_its_attempts_go_on(url: str) -> None:
    recorded = PayRecorder()
    async with test_with(LatePayApplication, store=url, dependencies=recording(recorded)) as env:
        env.mock_llm(LatePayAgent).then_return(
            call_tools(tool_call(LatePayTool, purpose="busy1", amount=1.0)),
            reply_with(WorkflowFinishTextDto, text="Paid."),
        )
        began = env.clock.now()
        rested = await env.app.execute(
            LatePayWorkflow, WorkflowStartTextDto(text="pay"), owner_id="u"
        )
        assert rested.status is ExecutionStatus.WAITING
        assert rested.wake_at == began + timedelta(minutes=5)
        assert [run.split()[:2] for run in recorded.runs] == [["busy", "1"]]
        await env.clock.advance(timedelta(minutes=5))
        done = await env.app.get(rested.execution_id)
        assert done.status is ExecutionStatus.COMPLETED
        assert [run.split()[:2] for run in recorded.runs] == [["busy", "1"], ["paid", "2"]]
        keys = {run.split()[2] for run in recorded.runs}
        assert len(keys) == 1  # the same call, its key kept across the rest


async def test_a_resting_tree_is_cancelled_like_any_other(url: str, server: LoopbackServer) -> None:
    provider = OpenAICompatibleProvider(base_url=server.base_url, serves=("test/*",))
    server.replies.extend([Reply(429, {"error": "slow"}, {"retry-after": "600"}), ANSWER])
    async with test_with(PayApplication, store=url, providers=[provider]) as env:
        rested = await env.app.execute(PayWorkflow, WorkflowStartTextDto(text="hi"), owner_id="u")
        assert rested.status is ExecutionStatus.WAITING
        cancelled = await env.app.cancel(rested.thread_id)
        assert cancelled is not None
        assert cancelled.status is ExecutionStatus.CANCELLED
        await env.clock.advance(timedelta(minutes=11))
        assert (await env.app.get(rested.execution_id)).status is ExecutionStatus.CANCELLED
        assert len(server.requests) == 1  # never woken
    await provider.aclose()
