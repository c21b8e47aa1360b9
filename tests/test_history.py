"""A thread continues a conversation: an execution on a thread is sent the thread's earlier
exchanges — each earlier request and its answer — before its own, durably (read from the
store: across a restart, on another instance), through the PII seam, as much as the agent's
``history=`` says (issue 25, "threads that remember")."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from agboss import (
    ConfigurationError,
    ExecutionStatus,
    History,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
)
from agboss.models import ChatRequest, MessageRole
from agboss.testing import TestEnv, reply_with
from tests.apps.history_app import (
    BriefAgent,
    BriefWorkflow,
    ChatAgent,
    ChatWorkflow,
    ForgetfulAgent,
    ForgetfulWorkflow,
    HistoryApplication,
)
from tests.stores import env_on


@pytest.fixture(params=[1, 2], ids=lambda count: f"{count}-instances")
def instances(request: pytest.FixtureRequest) -> int:
    return int(request.param)


pytestmark = pytest.mark.application.with_args(HistoryApplication)


def answers(env: TestEnv, agent: type[Any], *texts: str) -> None:
    env.mock_llm(agent).then_return(*(reply_with(WorkflowFinishTextDto, text=t) for t in texts))


def said(request: ChatRequest | Any) -> list[tuple[str, str]]:
    """The conversation a model call was sent, system prompt left out."""
    return [(m.role.value, m.content) for m in request.messages if m.role is not MessageRole.SYSTEM]


async def ask(env: TestEnv, workflow: type[Any], text: str, *, app: int = 0) -> None:
    await env.clock.advance(timedelta(seconds=5))  # a person takes a moment to write
    result = await env.apps[app % len(env.apps)].execute(
        workflow, WorkflowStartTextDto(text=text), owner_id="ada", thread_id="th-1"
    )
    assert result.status is ExecutionStatus.COMPLETED


async def test_a_second_request_on_a_thread_is_sent_the_first_and_its_answer(
    env: TestEnv,
) -> None:
    answers(env, ChatAgent, "Booked the 9:40 train.", "It leaves from platform 4.")
    await ask(env, ChatWorkflow, "Book me a train to Lyon")
    await ask(env, ChatWorkflow, "Which platform?", app=1)  # another instance, if there are two
    first, second = env.mock_llm(ChatAgent).requests
    assert said(first) == [("user", "Book me a train to Lyon")]
    assert said(second) == [
        ("user", "Book me a train to Lyon"),
        ("assistant", "Booked the 9:40 train."),
        ("user", "Which platform?"),
    ]


async def test_the_conversation_survives_a_restart(env: TestEnv) -> None:
    answers(env, ChatAgent, "one", "two", "three")
    await ask(env, ChatWorkflow, "first")
    await ask(env, ChatWorkflow, "second")
    await env.restart()
    await ask(env, ChatWorkflow, "third")
    assert said(env.mock_llm(ChatAgent).requests[-1]) == [
        ("user", "first"),
        ("assistant", "one"),
        ("user", "second"),
        ("assistant", "two"),
        ("user", "third"),
    ]


async def test_another_thread_is_another_conversation(env: TestEnv) -> None:
    answers(env, ChatAgent, "one", "two")
    await ask(env, ChatWorkflow, "first")
    await env.app.execute(ChatWorkflow, WorkflowStartTextDto(text="elsewhere"), owner_id="ada")
    assert said(env.mock_llm(ChatAgent).requests[-1]) == [("user", "elsewhere")]


async def test_history_last_sends_only_the_most_recent_exchanges(env: TestEnv) -> None:
    answers(env, BriefAgent, "one", "two", "three")
    for text in ("first", "second", "third"):
        await ask(env, BriefWorkflow, text)
    assert said(env.mock_llm(BriefAgent).requests[-1]) == [
        ("user", "second"),
        ("assistant", "two"),
        ("user", "third"),
    ]


async def test_history_none_sends_nothing_earlier(env: TestEnv) -> None:
    answers(env, ForgetfulAgent, "one", "two")
    await ask(env, ForgetfulWorkflow, "first")
    await ask(env, ForgetfulWorkflow, "second")
    assert said(env.mock_llm(ForgetfulAgent).requests[-1]) == [("user", "second")]


async def test_an_earlier_request_reaches_the_model_through_the_pii_seam(env: TestEnv) -> None:
    answers(env, ChatAgent, "Noted.", "Done.")
    await ask(env, ChatWorkflow, "Pay it to DE89 3704 0044 0532 0130 00")
    await ask(env, ChatWorkflow, "Now, please")
    sent = str(said(env.mock_llm(ChatAgent).requests[-1]))
    assert "DE89" not in sent  # the IBAN went as a token, as in the request it came in
    assert "<IBAN_" in sent


def test_a_history_is_a_whole_number_of_turns() -> None:
    assert History.all().turns is None
    assert History.last(3).turns == 3
    assert History.none().turns == 0
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ConfigurationError):
            History.last(bad)  # type: ignore[arg-type]


async def test_a_paused_execution_goes_on_with_its_threads_conversation(
    tmp_path: Path,
) -> None:
    from tests.apps.desk import OfficeAgent, OfficeApplication, OfficeWorkflow
    from tests.test_round_trips import ASK, DONE

    async with env_on("sqlite", tmp_path, OfficeApplication) as made:
        made.mock_llm(OfficeAgent).then_return(DONE, ASK, DONE)
        first = await made.app.execute(
            OfficeWorkflow, WorkflowStartTextDto(text="hello"), owner_id="u", thread_id="th"
        )
        await made.clock.advance(timedelta(seconds=5))
        paused = await made.app.execute(
            OfficeWorkflow, WorkflowStartTextDto(text="book the taxi"), owner_id="u", thread_id="th"
        )
        [pending] = paused.pending
        assert pending.pause_id is not None
        await made.restart()  # the resumed pass rebuilds the conversation from the store
        done = await made.app.resume(pending.pause_id, decision={"approved": True}, owner_id="u")
    assert first.status is done.status is ExecutionStatus.COMPLETED
    *_, asked, closing = made.mock_llm(OfficeAgent).requests
    expected = [("user", "hello"), ("assistant", "Booked."), ("user", "book the taxi")]
    assert said(asked) == expected
    assert said(closing)[:3] == expected  # then the call, its approval and the tool's result
