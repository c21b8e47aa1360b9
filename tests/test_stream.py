"""`App.stream`: what an execution does as it happens — model turns, tool runs, pauses asked
and answered, the end — for a chat UI or a progress bar; a view, not the record (issue 25,
"streaming out")."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
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
from agboss.models import ChatRequest, Message, MessageRole
from agboss.testing import TestEnv, invalid_answer
from tests.apps.desk import DeskRecorder, OfficeAgent, OfficeApplication, OfficeWorkflow
from tests.test_openai_provider import request
from tests.test_round_trips import ASK, DONE

K = ExecutionEventKind
REQUEST = WorkflowStartTextDto(text="Book the taxi")


pytestmark = pytest.mark.application.with_args(OfficeApplication)


def said_hi(on_text: Callable[[str], None]) -> ChatRequest:
    """A one-message request whose text streams to ``on_text``."""
    return request(messages=(Message(MessageRole.USER, "hi"),), tools=(), on_text=on_text)


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
    recorded: DeskRecorder,
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
    assert recorded.runs == ["book-expense taxi 12.5"]


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


# ---- text as it streams in, from a provider that streams -------------------------------------


async def test_an_openai_model_s_text_streams_in_pieces_before_its_turn(tmp_path: Path) -> None:
    from agboss import App
    from agboss.models.openai import OpenAIProvider
    from tests.apps.office import OfficeApplication as PlainOffice
    from tests.apps.office import OfficeWorkflow as PlainWorkflow
    from tests.loopback import loopback_server, streamed_completion

    with loopback_server() as server:
        server.replies.append(
            streamed_completion(
                "Return",
                "ing it.",
                tool_call={"name": "final_answer", "arguments": {"text": "Done."}},
            )
        )
        provider = OpenAIProvider(base_url=server.base_url, api_key="k")
        async with await App.create(
            PlainOffice, store=tmp_path / "a.db", providers=[provider]
        ) as app:
            events = await collect(
                app.stream(app.execute(PlainWorkflow, {"text": "Return L-7"}, owner_id="ada"))
            )
        await provider.aclose()
    assert server.requests[0]["stream"] is True
    assert [(e.kind, e.text) for e in events[:2]] == [
        (K.TEXT_DELTA, "Return"),
        (K.TEXT_DELTA, "ing it."),
    ]
    turn = events[2]
    assert turn.kind is K.MODEL_ANSWERED
    assert turn.text == "Returning it."
    assert turn.tool_calls == ("final_answer",)
    ended = events[-1]
    assert ended.output.output.text == "Done."
    assert ended.output.spend.input_tokens == 11  # the usage of the stream's last chunk


async def test_an_anthropic_model_s_text_streams_in_pieces(tmp_path: Path) -> None:
    from agboss.models.anthropic import AnthropicProvider
    from tests.loopback import events, loopback_server

    pieces: list[str] = []
    with loopback_server() as server:
        usage = {"input_tokens": 9, "output_tokens": 0}
        server.replies.append(
            events(
                (
                    "message_start",
                    {
                        "type": "message_start",
                        "message": {
                            "id": "msg_s",
                            "type": "message",
                            "role": "assistant",
                            "model": "claude-t",
                            "content": [],
                            "stop_reason": None,
                            "stop_sequence": None,
                            "usage": usage,
                        },
                    },
                ),
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "text", "text": ""},
                    },
                ),
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": "Hel"},
                    },
                ),
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": "lo"},
                    },
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                (
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                        "usage": {"output_tokens": 2},
                    },
                ),
                ("message_stop", {"type": "message_stop"}),
            )
        )
        provider = AnthropicProvider(
            base_url=server.base_url.removesuffix("/v1"), api_key="k", serves=("*",)
        )
        request = said_hi(pieces.append)
        response = await provider.chat_model("claude-t").complete(request)
        await provider.aclose()
    assert server.requests[0]["stream"] is True
    assert pieces == ["Hel", "lo"]
    assert response.content == "Hello"
    assert response.usage.output_tokens == 2


async def test_the_responses_api_s_text_streams_in_pieces() -> None:
    from agboss.models.openai import OpenAIApi, OpenAIProvider
    from tests.loopback import events, loopback_server

    done = {
        "id": "resp_s",
        "object": "response",
        "created_at": 0,
        "model": "m",
        "status": "completed",
        "output": [
            {
                "type": "message",
                "id": "m1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "Hello", "annotations": []}],
            }
        ],
        "usage": {"input_tokens": 4, "output_tokens": 2, "total_tokens": 6},
    }
    pieces: list[str] = []
    with loopback_server() as server:
        server.replies.append(
            events(
                (
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "item_id": "m1",
                        "output_index": 0,
                        "content_index": 0,
                        "delta": "Hel",
                        "sequence_number": 1,
                        "logprobs": [],
                    },
                ),
                (
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "item_id": "m1",
                        "output_index": 0,
                        "content_index": 0,
                        "delta": "lo",
                        "sequence_number": 2,
                        "logprobs": [],
                    },
                ),
                (
                    "response.completed",
                    {"type": "response.completed", "response": done, "sequence_number": 3},
                ),
            )
        )
        provider = OpenAIProvider(base_url=server.base_url, api_key="k", api=OpenAIApi.RESPONSES)
        request = said_hi(pieces.append)
        response = await provider.chat_model("m").complete(request)
        await provider.aclose()
    assert pieces == ["Hel", "lo"]
    assert response.content == "Hello"
    assert response.usage.input_tokens == 4
