"""Traces: OpenTelemetry spans for passes, model calls, tool runs and channels."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agboss import (
    AgentFailedError,
    ExecutionStatus,
    ToolCallApprovalDecisionDto,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
)
from agboss.testing import call_tools, fail_with, reply_with, test_with, tool_call
from tests.apps.replies_app import (
    OfficeAgent,
    OfficeApplication,
    OfficeWorkflow,
    RefundCardTool,
    RefundReplyInterpreter,
    SlackRefundApprovalChannel,
)
from tests.test_retry_policies import PayAgent, PayApplication, PayWorkflow, moved

_EXPORTER = InMemorySpanExporter()
_PROVIDER = TracerProvider()
_PROVIDER.add_span_processor(SimpleSpanProcessor(_EXPORTER))
trace.set_tracer_provider(_PROVIDER)  # once per process: the API's proxy tracer follows it


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()


def attributes(exporter: InMemorySpanExporter, name: str) -> list[dict[str, Any]]:
    return [dict(s.attributes or {}) for s in exporter.get_finished_spans() if s.name == name]


async def test_a_reply_interpreters_model_call_is_traced_under_the_pauses_execution(
    spans: InMemorySpanExporter,
) -> None:
    async with test_with(OfficeApplication) as env:
        env.mock_llm(OfficeAgent).then_return(
            call_tools(tool_call(RefundCardTool, order_id="7", amount=50.0)),
            reply_with(WorkflowFinishTextDto, text="done"),
        )
        env.mock_llm(RefundReplyInterpreter).then_return(
            reply_with(ToolCallApprovalDecisionDto, approved=True)
        )
        slack = env.mock_of(SlackRefundApprovalChannel)
        paused = await env.app.execute(OfficeWorkflow, {"text": "refund 7"}, owner_id="u")
        pause_id = slack.send.call_args.args[0].pause_id
        done = await env.app.resume(pause_id, reply="fine", answered_by="manager-17")
    assert done.status is ExecutionStatus.COMPLETED
    calls = [
        dict(s.attributes or {})
        for s in spans.get_finished_spans()
        if (s.attributes or {}).get("gen_ai.operation.name") == "chat"
    ]
    assert [c["agboss.cost_caller"] for c in calls] == [
        "agent:office-agent",
        "reply-interpreter:refund-reply-interpreter",
        "agent:office-agent",
    ]
    assert {c["agboss.execution_id"] for c in calls} == {paused.execution_id}
    assert calls[1]["agboss.decision_model"] is False
    [tool] = attributes(spans, "execute_tool refund-card-tool")  # the GenAI conventions'
    assert tool["agboss.tool"] == "refund-card-tool"
    assert (tool["gen_ai.tool.name"], tool["gen_ai.tool.type"]) == ("refund-card-tool", "function")
    assert tool["gen_ai.tool.call.id"]
    invoked = attributes(spans, "invoke_agent office-agent")  # asked, then after the yes
    assert [(a["gen_ai.agent.name"], a["gen_ai.conversation.id"]) for a in invoked] == [
        ("office-agent", done.thread_id)
    ] * 2
    [send] = attributes(spans, "agboss.channel-send")
    assert send["agboss.channel"] == "refund-approval-channel"
    [answered] = attributes(spans, "agboss.answer")  # asked, answered: agboss's own spans
    assert (answered["agboss.tool"], answered["agboss.channel"], answered["agboss.approved"]) == (
        "refund-card-tool",
        "refund-approval-channel",
        True,
    )
    passes = attributes(spans, "agboss.pass")
    assert [p["agboss.status"] for p in passes] == ["paused", "completed"]
    every_value = [
        str(v) for s in spans.get_finished_spans() for v in (s.attributes or {}).values()
    ]
    assert not any(pause_id in value for value in every_value)  # the id never leaves its channel


async def test_withdrawing_a_question_is_an_agboss_span_without_its_id(
    spans: InMemorySpanExporter,
) -> None:
    async with test_with(OfficeApplication) as env:
        env.mock_llm(OfficeAgent).then_return(
            call_tools(tool_call(RefundCardTool, order_id="7", amount=50.0))
        )
        slack = env.mock_of(SlackRefundApprovalChannel)
        paused = await env.app.execute(OfficeWorkflow, {"text": "refund 7"}, owner_id="u")
        pause_id = slack.send.call_args.args[0].pause_id
        await env.app.cancel(paused.thread_id, owner_id="u")
    [withdrawn] = attributes(spans, "agboss.channel-withdraw")  # asked, then withdrawn
    assert (withdrawn["agboss.tool"], withdrawn["agboss.channel"]) == (
        "refund-card-tool",
        "refund-approval-channel",
    )
    assert withdrawn["agboss.resolution"] == "cancelled"
    every_value = [str(v) for v in withdrawn.values()]
    assert not any(pause_id in value for value in every_value)


async def test_a_channel_pauses_id_in_its_channels_error_is_redacted_everywhere_agboss_shows_it(
    spans: InMemorySpanExporter,
) -> None:
    sent: list[str] = []

    async def leaky_send(ask: Any) -> Any:
        sent.append(ask.pause_id)
        raise ConnectionError(f"slack refused the post for pause {ask.pause_id}")

    async with test_with(OfficeApplication) as env:
        env.mock_llm(OfficeAgent).then_return(
            call_tools(tool_call(RefundCardTool, order_id="7", amount=50.0))
        )
        env.mock_of(SlackRefundApprovalChannel).send.side_effect = leaky_send
        with pytest.raises(AgentFailedError) as failed:
            await env.app.execute(OfficeWorkflow, {"text": "refund 7"}, owner_id="u")
        [secret] = sent
        [send] = attributes(spans, "agboss.channel-send")
        with pytest.raises(AgentFailedError) as stored:  # read back from the store
            await env.app.get(str(send["agboss.execution_id"]))
    shown = [failed.value, failed.value.__cause__, stored.value, stored.value.__cause__]
    assert isinstance(failed.value.__cause__, ConnectionError)  # still matched by its class
    for error in shown:
        assert secret not in str(error)
        assert "<pause id>" in str(error)
    events = [
        event
        for finished in spans.get_finished_spans()
        for event in finished.events
        if event.name == "exception"
    ]
    assert events  # the failure is traced...
    for event in events:
        for value in (event.attributes or {}).values():
            assert secret not in str(value)  # ...without the pause's id
    for finished in spans.get_finished_spans():
        assert secret not in str(finished.status.description)


async def test_each_attempt_of_a_retried_model_call_is_its_own_span(
    spans: InMemorySpanExporter,
) -> None:
    async with test_with(PayApplication) as env:
        env.mock_llm(PayAgent).then_return(
            fail_with(ConnectionError("reset")), reply_with(WorkflowFinishTextDto, text="ok")
        )
        await moved(
            env,
            env.app.execute(PayWorkflow, WorkflowStartTextDto(text="hi"), owner_id="u"),
            timedelta(milliseconds=500),
        )
    chats = [s for s in spans.get_finished_spans() if s.name.startswith("chat ")]
    calls = [dict(s.attributes or {}) for s in chats]
    assert [call["agboss.attempt"] for call in calls] == [1, 2]
    assert len({call["agboss.step"] for call in calls}) == 1  # one step, two attempts
    [failed, answered] = chats
    assert not failed.status.is_ok
    assert "agboss.input_tokens" in (answered.attributes or {})
    assert "gen_ai.usage.input_tokens" in (answered.attributes or {})
    assert calls[0]["gen_ai.request.model"] == calls[0]["agboss.model"]
