"""`App.stream`: what an execution does as it happens — model turns, tool runs, pauses asked
and answered, the end — for a chat UI or a progress bar; a view, not the record (issue 25,
"streaming out")."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agboss import (
    AgentFailedError,
    ConfigurationError,
    ExecutionEvent,
    ExecutionEventKind,
    ExecutionStatus,
    WorkflowStartTextDto,
)
from agboss.testing import TestEnv, invalid_answer
from tests import desk
from tests.desk import OfficeAgent, OfficeApplication, OfficeWorkflow
from tests.stores import STORE_KINDS, env_on
from tests.test_round_trips import ASK, DONE

K = ExecutionEventKind
REQUEST = WorkflowStartTextDto(text="Book the taxi")


@pytest.fixture(params=STORE_KINDS)
async def env(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TestEnv]:
    desk.clear()
    async with env_on(request.param, tmp_path, OfficeApplication) as made:
        yield made


async def collect(stream: AsyncIterator[ExecutionEvent]) -> list[ExecutionEvent]:
    return [event async for event in stream]


async def test_an_execution_streams_its_model_turn_its_pause_and_its_end(env: TestEnv) -> None:
    env.mock_llm(OfficeAgent).then_return(ASK, DONE)
    events = await collect(env.app.stream(env.app.execute(OfficeWorkflow, REQUEST, owner_id="ada")))
    assert [e.kind for e in events] == [K.MODEL_ANSWERED, K.PAUSE_ASKED, K.ENDED]
    turn, asked, ended = events
    assert turn.agent == "office-agent"
    assert turn.tool_calls == ("book-expense-tool",)
    assert asked.tool == "book-expense-tool"
    paused = ended.output
    assert paused.status is ExecutionStatus.PAUSED
    assert ended.status == "paused"
    assert asked.pause_id == paused.pending[0].pause_id  # a thread-owner pause shows its id
    assert {e.execution_id for e in events} == {paused.execution_id}


async def test_a_resume_streams_the_answer_the_tool_run_and_the_closing_turn(
    env: TestEnv,
) -> None:
    env.mock_llm(OfficeAgent).then_return(ASK, DONE)
    paused = await env.app.execute(OfficeWorkflow, REQUEST, owner_id="ada")
    pause_id = paused.pending[0].pause_id
    assert pause_id is not None
    resumed = env.app.resume(pause_id, decision={"approved": True}, owner_id="ada")
    events = await collect(env.app.stream(resumed))
    kinds = [e.kind for e in events]
    # The replayed first turn says nothing: only what is done live is streamed.
    assert kinds == [K.PAUSE_ANSWERED, K.TOOL_STARTED, K.TOOL_DONE, K.MODEL_ANSWERED, K.ENDED]
    answered, started, done, closing, ended = events
    assert (answered.answered_by, answered.approved) == ("ada", True)
    assert started.tool == done.tool == "book-expense-tool"
    assert started.call_id == done.call_id
    assert not done.failed
    assert closing.tool_calls == ("final_answer",)
    assert ended.output.status is ExecutionStatus.COMPLETED
    assert desk.RUNS == ["book-expense taxi 12.5"]


async def test_a_failure_is_raised_from_the_stream(env: TestEnv) -> None:
    env.mock_llm(OfficeAgent).then_return(*[invalid_answer(nonsense=True)] * 5)
    seen: list[ExecutionEvent] = []

    async def read() -> None:
        async for event in env.app.stream(env.app.execute(OfficeWorkflow, REQUEST, owner_id="a")):
            seen.append(event)

    with pytest.raises(AgentFailedError):
        await read()
    assert seen  # what happened before the failure was streamed
    assert all(e.kind is K.MODEL_ANSWERED for e in seen)


async def test_without_a_stream_nothing_is_delivered_and_the_result_is_the_same(
    env: TestEnv,
) -> None:
    env.mock_llm(OfficeAgent).then_return(DONE, DONE)
    plain = await env.app.execute(OfficeWorkflow, REQUEST, owner_id="ada")
    streamed = await collect(
        env.app.stream(env.app.execute(OfficeWorkflow, REQUEST, owner_id="ada"))
    )
    assert streamed[-1].output.status is plain.status is ExecutionStatus.COMPLETED
    assert streamed[-1].output.output == plain.output


async def test_a_stream_takes_a_call_not_awaited(env: TestEnv) -> None:
    with pytest.raises(ConfigurationError, match="without awaiting"):
        async for _ in env.app.stream("execute"):  # type: ignore[arg-type]
            pass
