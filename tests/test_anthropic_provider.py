"""The provider on the `anthropic` SDK, against a real HTTP server on loopback that speaks the
Messages API's wire format (the SDK's ``base_url``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from agboss import App, ExecutionStatus, ModelProviderError, WorkflowFinishTextDto
from agboss.models import ToolCall
from agboss.models.anthropic import AnthropicProvider
from tests.apps.office import OfficeApplication, OfficeRecorder, OfficeWorkflow
from tests.apps.recorded import recording
from tests.loopback import LoopbackServer, Reply, loopback_server
from tests.test_openai_provider import request


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with loopback_server() as running:
        yield running


def root(server: LoopbackServer) -> str:
    return server.base_url.removesuffix("/v1")  # the SDK adds /v1/messages


@pytest.fixture
async def provider(server: LoopbackServer) -> AsyncIterator[AnthropicProvider]:
    made = AnthropicProvider(base_url=root(server), api_key="sk-ant-test", serves=("*",))
    yield made
    await made.aclose()


def message(*content: dict[str, Any]) -> Reply:
    return Reply(
        body={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": list(content),
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 17, "output_tokens": 9},
        }
    )


def tool_use(name: str, arguments: dict[str, Any], id: str = "toolu_1") -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": name, "input": arguments}


async def test_a_call_is_sent_in_the_messages_wire_format(
    server: LoopbackServer, provider: AnthropicProvider
) -> None:
    server.replies.append(message({"type": "text", "text": "done"}))
    await provider.chat_model("claude-test").complete(request(require_tool=True))
    [body] = server.requests
    assert server.paths == ["/v1/messages"]
    sent = server.headers[0]
    assert "sk-ant-test" in (sent.get("x-api-key") or sent.get("authorization", ""))
    assert body["model"] == "claude-test"
    assert body["system"] == "Be brief."
    assert body["max_tokens"] == 4096
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Refund order 7"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "c1", "name": "refund-tool", "input": {"order_id": "7"}}
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": '{"status": "ok"}'}
            ],
        },
    ]
    assert body["tools"] == [
        {"name": "refund-tool", "description": "Refunds", "input_schema": {"type": "object"}}
    ]
    assert body["tool_choice"] == {"type": "any"}
    assert body["metadata"] == {"user_id": "acme"}
    assert "stream" not in body


async def test_text_tool_uses_and_usage_are_read_back(
    server: LoopbackServer, provider: AnthropicProvider
) -> None:
    server.replies.append(
        message(
            {"type": "text", "text": "Refunding."},
            tool_use("refund-tool", {"order_id": "8"}),
        )
    )
    response = await provider.chat_model("claude-test").complete(request())
    assert response.content == "Refunding."
    assert response.tool_calls == (
        ToolCall(id="toolu_1", name="refund-tool", arguments='{"order_id": "8"}'),
    )
    assert (response.usage.input_tokens, response.usage.output_tokens) == (17, 9)
    assert response.model == "claude-test"


async def test_overloads_and_rate_limits_are_retried_by_the_sdk_when_asked(
    server: LoopbackServer,
) -> None:
    # Off by default (the agent's RetryPolicy retries); max_retries turns the SDK's own on.
    provider = AnthropicProvider(base_url=root(server), api_key="k", serves=("*",), max_retries=2)
    server.replies.extend(
        [
            Reply(
                529,
                {"type": "error", "error": {"type": "overloaded_error", "message": "x"}},
                {"retry-after-ms": "5"},
            ),
            Reply(
                429,
                {"type": "error", "error": {"type": "rate_limit_error", "message": "y"}},
                {"retry-after-ms": "5"},
            ),
            message({"type": "text", "text": "finally"}),
        ]
    )
    response = await provider.chat_model("claude-test").complete(request())
    await provider.aclose()
    assert response.content == "finally"
    assert len(server.requests) == 3


async def test_a_rate_limit_past_the_retries_says_how_long_to_wait(server: LoopbackServer) -> None:
    provider = AnthropicProvider(base_url=root(server), api_key="k", serves=("*",), max_retries=0)
    server.replies.append(
        Reply(
            429,
            {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
            {"retry-after": "120"},
        )
    )
    with pytest.raises(ModelProviderError) as caught:
        await provider.chat_model("claude-test").complete(request())
    await provider.aclose()
    assert (caught.value.status, caught.value.retryable, caught.value.retry_after) == (
        429,
        True,
        120,
    )
    assert "slow down" in caught.value.message


async def test_a_refused_key_fails_at_once_with_a_hint(
    server: LoopbackServer, provider: AnthropicProvider
) -> None:
    server.replies.append(
        Reply(401, {"type": "error", "error": {"type": "authentication_error", "message": "no"}})
    )
    with pytest.raises(ModelProviderError) as caught:
        await provider.chat_model("claude-test").complete(request())
    assert caught.value.status == 401
    assert not caught.value.retryable
    assert "API key" in (caught.value.hint or "")
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "body", [b"<html>oops</html>", {"type": "message"}], ids=["not-json", "no-content"]
)
async def test_a_malformed_answer_is_a_clear_error(
    server: LoopbackServer, provider: AnthropicProvider, body: object
) -> None:
    server.replies.append(Reply(200, body))
    with pytest.raises(ModelProviderError) as caught:
        await provider.chat_model("claude-test").complete(request())
    assert caught.value.hint


async def test_it_serves_no_decision_model(provider: AnthropicProvider) -> None:
    assert provider.decision_model("claude-test") is None


async def test_the_office_workflow_runs_end_to_end_on_claude(
    server: LoopbackServer, provider: AnthropicProvider, tmp_path: Path
) -> None:
    recorded = OfficeRecorder()
    server.replies.extend(
        [
            message(tool_use("return-deposit-tool", {"lease_id": "L-7"})),
            message(tool_use("final_answer", {"text": "Returned."}, id="toolu_2")),
        ]
    )
    async with await App.create(
        OfficeApplication,
        store=tmp_path / "a.db",
        providers=[provider],
        dependencies=recording(recorded),
    ) as app:
        result = await app.execute(OfficeWorkflow, {"text": "Return L-7"}, owner_id="user-1")
    assert result.status is ExecutionStatus.COMPLETED
    assert result.output == WorkflowFinishTextDto(text="Returned.")
    assert len(recorded.runs) == 1
    assert result.spend.input_tokens == 34
    last = server.requests[1]["messages"][-1]
    assert last["role"] == "user"
    assert last["content"][0]["type"] == "tool_result"
