"""The providers on the `openai` SDK, against a real HTTP server on loopback that speaks the
Chat Completions and Responses wire formats (the SDK's ``base_url``)."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from agboss import (
    AgentFailedError,
    App,
    ExecutionStatus,
    ModelProviderError,
    PauseStatus,
    WorkflowFinishTextDto,
)
from agboss.models import (
    ChatRequest,
    Message,
    MessageRole,
    ModelCaller,
    ToolCall,
    ToolSchema,
)
from agboss.models._decisions import Decision, DecisionRequest
from agboss.models.openai import OpenAIApi, OpenAICompatibleProvider, OpenAIProvider
from tests.apps.office import OfficeApplication, OfficeRecorder, OfficeWorkflow
from tests.apps.recorded import recording
from tests.loopback import LoopbackServer, Reply, completion, loopback_server

FAST = {"timeout": timedelta(seconds=10)}


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with loopback_server() as running:
        yield running


@pytest.fixture
async def provider(server: LoopbackServer) -> AsyncIterator[OpenAICompatibleProvider]:
    made = OpenAICompatibleProvider(base_url=server.base_url, api_key="sk-test", **FAST)
    yield made
    await made.aclose()


def request(**overrides: object) -> ChatRequest:
    values: dict[str, object] = {
        "model": "moonshotai/kimi-k2.6",
        "messages": (
            Message(MessageRole.SYSTEM, "Be brief."),
            Message(MessageRole.USER, "Refund order 7"),
            Message(
                MessageRole.ASSISTANT,
                "",
                (ToolCall(id="c1", name="refund-tool", arguments='{"order_id": "7"}'),),
            ),
            Message(MessageRole.TOOL, '{"status": "ok"}', tool_call_id="c1"),
        ),
        "tools": (ToolSchema("refund-tool", "Refunds", {"type": "object"}),),
        "caller": ModelCaller("agent", "refund-agent", "acme", "ex-1"),
    }
    values.update(overrides)
    return ChatRequest(**values)  # type: ignore[arg-type]


async def test_a_call_is_sent_in_the_openai_wire_format(
    server: LoopbackServer, provider: OpenAICompatibleProvider
) -> None:
    server.replies.append(completion(content="done"))
    await provider.chat_model("moonshotai/kimi-k2.6").complete(request())
    [body] = server.requests
    assert server.paths == ["/v1/chat/completions"]
    assert server.headers[0]["authorization"] == "Bearer sk-test"
    assert body["model"] == "moonshotai/kimi-k2.6"
    assert body["messages"][2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "refund-tool", "arguments": '{"order_id": "7"}'},
            }
        ],
    }
    assert body["messages"][3] == {
        "role": "tool",
        "content": '{"status": "ok"}',
        "tool_call_id": "c1",
    }
    assert body["tools"][0]["function"]["name"] == "refund-tool"
    assert body["tool_choice"] == "auto"
    assert body["user"] == "acme"  # the tenant: a provider may rate-limit by it
    assert "stream" not in body  # streaming off: one answer, read whole


async def test_tool_calls_and_usage_are_read_back(
    server: LoopbackServer, provider: OpenAICompatibleProvider
) -> None:
    server.replies.append(
        completion(tool_calls=[{"name": "refund-tool", "arguments": {"order_id": "7"}}], cost=0.002)
    )
    response = await provider.chat_model("m").complete(request())
    assert response.tool_calls == (
        ToolCall(id="call_0", name="refund-tool", arguments='{"order_id": "7"}'),
    )
    assert (response.usage.input_tokens, response.usage.output_tokens) == (11, 7)
    assert response.usage.cost == pytest.approx(0.002)


async def test_a_rate_limit_is_one_attempt_marked_retryable_with_the_wait_it_asks(
    server: LoopbackServer, provider: OpenAICompatibleProvider
) -> None:
    # One policy, one loop: the agent's RetryPolicy tries it again (tests/test_retry_policies).
    server.replies.append(Reply(429, {"error": "slow down"}, {"retry-after-ms": "1500"}))
    with pytest.raises(ModelProviderError) as caught:
        await provider.chat_model("m").complete(request())
    assert len(server.requests) == 1  # the SDK did not retry it on its own
    assert (caught.value.status, caught.value.retryable) == (429, True)
    assert caught.value.retry_after == 1.5


async def test_the_sdks_own_retries_can_be_turned_on(server: LoopbackServer) -> None:
    provider = OpenAICompatibleProvider(base_url=server.base_url, max_retries=2, **FAST)
    server.replies.extend(
        [
            Reply(429, {"error": "slow down"}, {"retry-after-ms": "5"}),
            Reply(503, {"error": "busy"}, {"retry-after-ms": "5"}),
            completion(content="finally"),
        ]
    )
    response = await provider.chat_model("m").complete(request())
    await provider.aclose()
    assert response.content == "finally"
    assert len(server.requests) == 3


async def test_a_rate_limit_that_outlasts_the_retries_says_how_long_to_wait(
    server: LoopbackServer,
) -> None:
    provider = OpenAIProvider(base_url=server.base_url, max_retries=0)
    server.replies.append(Reply(429, {"error": {"message": "slow down"}}, {"retry-after": "120"}))
    with pytest.raises(ModelProviderError) as caught:
        await provider.chat_model("m").complete(request())
    await provider.aclose()
    assert caught.value.status == 429
    assert caught.value.retryable
    assert caught.value.retry_after == 120
    assert "slow down" in caught.value.message


async def test_a_refused_request_fails_at_once_with_a_clear_error(
    server: LoopbackServer, provider: OpenAICompatibleProvider
) -> None:
    server.replies.append(Reply(401, {"error": "bad key"}))
    with pytest.raises(ModelProviderError) as caught:
        await provider.chat_model("m").complete(request())
    assert caught.value.status == 401
    assert caught.value.code == "model.provider-error"
    assert "check the provider's API key" in str(caught.value)
    assert len(server.requests) == 1


async def test_errors_that_keep_coming_fail_after_the_retries(server: LoopbackServer) -> None:
    provider = OpenAICompatibleProvider(base_url=server.base_url, max_retries=2, **FAST)
    server.replies.extend([Reply(502, {"error": "bad gateway"}, {"retry-after-ms": "1"})] * 3)
    with pytest.raises(ModelProviderError, match="answered 502") as caught:
        await provider.chat_model("m").complete(request())
    await provider.aclose()
    assert len(server.requests) == 3  # the first and the SDK's two retries
    assert caught.value.retryable
    assert "bad gateway" in caught.value.message


@pytest.mark.parametrize(
    "body",
    [b"<html>not json</html>", {"id": "x", "object": "chat.completion"}, {"choices": []}],
    ids=["not-json", "no-choices", "empty-choices"],
)
async def test_a_malformed_answer_is_a_clear_error(
    server: LoopbackServer, provider: OpenAICompatibleProvider, body: object
) -> None:
    server.replies.append(Reply(200, body))
    with pytest.raises(ModelProviderError) as caught:
        await provider.chat_model("m").complete(request())
    assert caught.value.hint


async def test_an_unreachable_server_is_retried_then_a_clear_error() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = OpenAICompatibleProvider(base_url=f"http://127.0.0.1:{port}/v1", max_retries=1)
    with pytest.raises(ModelProviderError, match="could not be reached") as caught:
        await provider.chat_model("m").complete(request())
    await provider.aclose()
    assert caught.value.retryable
    assert "base URL" in (caught.value.hint or "")


async def test_model_names_can_be_sent_as_the_server_knows_them(server: LoopbackServer) -> None:
    server.replies.append(completion(content="ok"))
    provider = OpenAICompatibleProvider(
        base_url=server.base_url, model_names={"*": "llama3.2"}, **FAST
    )
    await provider.chat_model("moonshotai/kimi-k2.6").complete(request())
    await provider.aclose()
    assert server.requests[0]["model"] == "llama3.2"


async def test_the_office_workflow_runs_end_to_end_on_the_provider(
    server: LoopbackServer, provider: OpenAICompatibleProvider, tmp_path: Path
) -> None:
    recorded = OfficeRecorder()
    server.replies.extend(
        [
            completion(
                tool_calls=[{"name": "return-deposit-tool", "arguments": {"lease_id": "L-7"}}]
            ),
            completion(tool_calls=[{"name": "final_answer", "arguments": {"text": "Returned."}}]),
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
    assert result.spend.input_tokens == 22
    assert server.requests[1]["messages"][-1]["role"] == "tool"


async def test_a_provider_error_fails_the_agent_step(
    server: LoopbackServer, provider: OpenAICompatibleProvider, tmp_path: Path
) -> None:
    server.replies.append(Reply(400, {"error": "context too long"}))
    async with await App.create(
        OfficeApplication, store=tmp_path / "a.db", providers=[provider]
    ) as app:
        with pytest.raises(AgentFailedError, match="its model call failed") as caught:
            await app.execute(OfficeWorkflow, {"text": "Return L-7"}, owner_id="user-1")
    assert isinstance(caught.value.__cause__, ModelProviderError)


def decision_reply(top: list[tuple[str, float]], content: str = "yes") -> Reply:
    import math

    return Reply(
        body={
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "logprobs": {
                        "content": [
                            {
                                "token": top[0][0],
                                "logprob": math.log(top[0][1]),
                                "top_logprobs": [
                                    {"token": token, "logprob": math.log(p)} for token, p in top
                                ],
                            }
                        ]
                    },
                }
            ],
            "usage": {"prompt_tokens": 30, "completion_tokens": 1},
        }
    )


def decision_request() -> DecisionRequest:
    return DecisionRequest(
        model="typesafe/jev-1.13",
        instructions="The clerk answered a deposit return.",
        state="### ask\n{}\n\n### reply\nsure",
        decisions=(Decision.noul("approved", "Does the reply approve the call?"),),
        caller=ModelCaller("reply-interpreter", "deposit-reply-interpreter", "acme", "ex-1"),
    )


async def test_a_decision_model_is_p_yes_from_the_token_log_probabilities(
    server: LoopbackServer,
) -> None:
    provider = OpenAICompatibleProvider(
        base_url=server.base_url,
        decision_models=["typesafe/*"],
        **FAST,
    )
    assert provider.decision_model("moonshotai/kimi-k2.6") is None
    decider = provider.decision_model("typesafe/jev-1.13")
    assert decider is not None
    server.replies.append(
        decision_reply([("Yes", 0.6), (" yes", 0.12), ("No", 0.18), ("Maybe", 0.1)])
    )
    response = await decider.decide(decision_request())
    await provider.aclose()
    assert response.probabilities["approved"] == pytest.approx(0.72 / 0.9)
    assert response.usage.input_tokens == 30
    [body] = server.requests
    assert body["logprobs"] is True
    assert body["max_tokens"] == 1
    assert body["messages"][0]["content"].startswith("Does the reply approve the call?")
    assert body["messages"][0]["content"].endswith("The clerk answered a deposit return.")
    assert body["messages"][1]["content"] == "### ask\n{}\n\n### reply\nsure"


async def test_a_decision_model_without_log_probabilities_reads_its_one_word(
    server: LoopbackServer,
) -> None:
    provider = OpenAICompatibleProvider(
        base_url=server.base_url,
        decision_models=["*"],
        **FAST,
    )
    server.replies.append(completion(content="No."))
    server.replies.append(completion(content="Perhaps"))
    decider = provider.decision_model("m")
    assert decider is not None
    assert (await decider.decide(decision_request())).probabilities["approved"] == 0.0
    with pytest.raises(ModelProviderError, match="neither yes nor no"):
        await decider.decide(decision_request())
    await provider.aclose()


async def test_a_reply_interpreter_reads_a_reply_through_the_provider(
    server: LoopbackServer, tmp_path: Path
) -> None:
    from tests.apps.replies_app import OfficeApplication as RepliesApplication
    from tests.apps.replies_app import OfficeWorkflow as RepliesWorkflow
    from tests.apps.replies_app import RepliesRecorder

    recorded = RepliesRecorder()
    provider = OpenAICompatibleProvider(
        base_url=server.base_url,
        decision_models=["typesafe/*"],
        **FAST,
    )
    server.replies.extend(
        [
            completion(
                tool_calls=[{"name": "return-deposit-tool", "arguments": {"lease_id": "L-7"}}]
            ),
            decision_reply([("yes", 0.95), ("no", 0.05)]),
            completion(tool_calls=[{"name": "final_answer", "arguments": {"text": "Returned."}}]),
        ]
    )
    async with await App.create(
        RepliesApplication,
        store=tmp_path / "a.db",
        providers=[provider],
        dependencies=recording(recorded),
    ) as app:
        paused = await app.execute(RepliesWorkflow, {"text": "return L-7"}, owner_id="user-1")
        assert paused.status is ExecutionStatus.PAUSED
        [pause] = await app.store.pauses.find_by_root(paused.execution_id, (PauseStatus.PENDING,))
        done = await app.resume(pause.pause_id, reply="yes, give it back", answered_by="clerk-3")
    await provider.aclose()
    assert done.status is ExecutionStatus.COMPLETED
    assert recorded.runs == ["return-deposit L-7"]
    assert done.spend.model_calls == 3


# ---- the Responses API ----------------------------------------------------------------------


def responses_reply(*output: dict[str, object]) -> Reply:
    return Reply(
        body={
            "id": "resp_1",
            "object": "response",
            "model": "served-model",
            "status": "completed",
            "output": list(output),
            "usage": {"input_tokens": 13, "output_tokens": 5, "total_tokens": 18},
        }
    )


async def test_the_responses_api_is_sent_its_items_and_read_back(server: LoopbackServer) -> None:
    provider = OpenAIProvider(base_url=server.base_url, api_key="sk-test", api=OpenAIApi.RESPONSES)
    server.replies.append(
        responses_reply(
            {
                "type": "message",
                "id": "m1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "Refunding.", "annotations": []}],
            },
            {
                "type": "function_call",
                "id": "f1",
                "call_id": "c2",
                "name": "refund-tool",
                "arguments": '{"order_id": "8"}',
                "status": "completed",
            },
        )
    )
    response = await provider.chat_model("m").complete(request(require_tool=True))
    await provider.aclose()
    assert server.paths == ["/v1/responses"]
    [body] = server.requests
    assert body["instructions"] == "Be brief."
    assert body["input"] == [
        {"role": "user", "content": "Refund order 7"},
        {
            "type": "function_call",
            "call_id": "c1",
            "name": "refund-tool",
            "arguments": '{"order_id": "7"}',
        },
        {"type": "function_call_output", "call_id": "c1", "output": '{"status": "ok"}'},
    ]
    assert body["tools"][0]["name"] == "refund-tool"
    assert body["tool_choice"] == "required"
    assert body["store"] is False
    assert response.content == "Refunding."
    assert response.tool_calls == (
        ToolCall(id="c2", name="refund-tool", arguments='{"order_id": "8"}'),
    )
    assert (response.usage.input_tokens, response.usage.output_tokens) == (13, 5)


async def test_the_office_workflow_runs_end_to_end_on_the_responses_api(
    server: LoopbackServer, tmp_path: Path
) -> None:
    recorded = OfficeRecorder()
    provider = OpenAIProvider(base_url=server.base_url, api_key="sk-test", api=OpenAIApi.RESPONSES)

    def call(name: str, arguments: str) -> dict[str, object]:
        return {
            "type": "function_call",
            "id": f"f-{name}",
            "call_id": f"c-{name}",
            "name": name,
            "arguments": arguments,
            "status": "completed",
        }

    server.replies.extend(
        [
            responses_reply(call("return-deposit-tool", '{"lease_id": "L-7"}')),
            responses_reply(call("final_answer", '{"text": "Returned."}')),
        ]
    )
    async with await App.create(
        OfficeApplication,
        store=tmp_path / "a.db",
        providers=[provider],
        dependencies=recording(recorded),
    ) as app:
        result = await app.execute(OfficeWorkflow, {"text": "Return L-7"}, owner_id="user-1")
    await provider.aclose()
    assert result.status is ExecutionStatus.COMPLETED
    assert result.output == WorkflowFinishTextDto(text="Returned.")
    assert len(recorded.runs) == 1
    assert server.requests[1]["input"][-1]["type"] == "function_call_output"
