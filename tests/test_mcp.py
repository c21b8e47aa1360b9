"""An agent's tools may come from an MCP server (issue 25, "MCP tools"): a real server written
with the official SDK (`tests.mcp_server`), run as a subprocess over stdio and over streamable
HTTP on loopback. Its tools are listed at `App.create`, called like any tool, approved like any
tool (by a channel named per tool or pattern, answered by the pause's id), and their arguments
— and a decision's ``override_arguments`` — are checked against the server's input schema."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from agboss import (
    AgentFailedError,
    App,
    AssemblyError,
    ConfigurationError,
    DtoValidationError,
    ExecutionStatus,
    McpCallError,
    OnInterrupted,
    PendingPause,
    WorkflowFinishTextDto,
)
from agboss.mcp import McpInputRequest, McpServer
from agboss.models import ChatRequest, MessageRole
from agboss.testing import TestEnv, call_tools, reply_with, test_with, tool_call
from tests.apps.mcp_app import (
    ROOT,
    STATE_KEY,
    McpRecorder,
    OrderDesk,
    RefundApprovalChannel,
    desk_named,
    order_desk_app,
    stdio_desk,
)
from tests.apps.recorded import recording

Desk = Callable[..., McpServer]
"""Makes the order desk's declaration (on one transport) with these options."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def calls(tmp_path: Path) -> Path:
    return tmp_path / "calls.jsonl"


def ran(calls: Path) -> list[dict[str, Any]]:
    """What the server really ran, in order."""
    if not calls.exists():
        return []
    return [json.loads(line) for line in calls.read_text().splitlines()]


class HttpDesk:
    """The order desk served over streamable HTTP on a loopback port, as a subprocess."""

    def __init__(self, calls: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.calls = calls
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.mcp_server", "http", str(self.port)],
            cwd=ROOT,
            env={
                "AGBOSS_MCP_CALLS": str(self.calls),
                "PYTHONPATH": str(ROOT),
                "AGBOSS_MCP_STATE_KEY": STATE_KEY,
            },
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise AssertionError("the MCP order desk did not start listening within 30 s")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None


@pytest.fixture
def http_desk(calls: Path) -> Iterator[HttpDesk]:
    desk = HttpDesk(calls)
    desk.start()
    try:
        yield desk
    finally:
        desk.stop()


@pytest.fixture(params=["stdio", "http"])
def desk(request: pytest.FixtureRequest, calls: Path) -> Desk:
    """The order desk's declaration, over each transport."""
    if request.param == "stdio":
        return lambda **options: stdio_desk(calls, **options)
    served: HttpDesk = request.getfixturevalue("http_desk")
    return lambda **options: McpServer.http("order-desk-mcp", url=served.url, **options)


def tool_messages(request: ChatRequest | Any) -> list[str]:
    return [m.content for m in request.messages if m.role is MessageRole.TOOL]


def approvals() -> dict[str, type[Any]]:
    return {"refund_*": RefundApprovalChannel}


# ---- listing and calling -----------------------------------------------------------------


async def test_the_servers_tools_are_listed_at_create_and_given_to_the_model_with_its_schemas(
    desk: Desk, calls: Path
) -> None:
    made = order_desk_app(desk())
    async with test_with(made.application) as env:
        env.mock_llm(made.agent).then_return(reply_with(WorkflowFinishTextDto, text="hello"))
        await env.app.execute(made.workflow, {"text": "hi"}, owner_id="u-1")
        [request] = env.mock_llm(made.agent).requests
        assert isinstance(request, ChatRequest)
        tools = {tool.name: tool for tool in request.tools}
        assert set(tools) == {
            "lookup_order",
            "refund_order",
            "close_account",
            "erase_history",
            "final_answer",
        }
        assert tools["refund_order"].description.startswith("Refunds part or all of an order")
        amount = tools["refund_order"].parameters["properties"]["amount"]
        assert amount["exclusiveMinimum"] == 0
        assert amount["maximum"] == 500
    assert ran(calls) == []


async def model_read(server: McpServer, *calls: Any) -> list[str]:
    """Runs one execution whose model makes these tool calls, then answers: what it read."""
    made = order_desk_app(server)
    async with test_with(made.application) as env:
        env.mock_llm(made.agent).then_return(
            call_tools(*calls), reply_with(WorkflowFinishTextDto, text="done")
        )
        result = await env.app.execute(made.workflow, {"text": "help"}, owner_id="u-1")
        assert result.status is ExecutionStatus.COMPLETED
        return tool_messages(env.mock_llm(made.agent).requests[1])


async def test_a_call_runs_on_the_server_and_the_model_reads_what_it_answered(
    desk: Desk, calls: Path
) -> None:
    [answer] = await model_read(desk(), tool_call("lookup_order", order_id="o-7"))
    read = json.loads(answer)
    assert read["structured_content"] == {"order_id": "o-7", "total": 120.0, "status": "delivered"}
    assert "delivered" in read["text"]
    assert ran(calls) == [{"tool": "lookup_order", "arguments": {"order_id": "o-7"}}]


async def test_arguments_the_input_schema_refuses_never_reach_the_server(
    desk: Desk, calls: Path
) -> None:
    lookup, refund = await model_read(
        desk(),
        tool_call("lookup_order", order_id="seven"),
        tool_call("refund_order", order_id="o-7", amount=-5),
    )
    assert lookup.startswith("Tool error: invalid arguments for lookup_order: order_id:")
    assert "does not match" in lookup
    assert "amount:" in refund
    assert "less than or equal to the minimum of 0" in refund
    assert ran(calls) == []


async def test_a_tool_that_fails_on_the_server_is_a_tool_error_the_model_reads(
    desk: Desk, calls: Path
) -> None:
    [error] = await model_read(desk(), tool_call("close_account", customer="vip"))
    assert error.startswith("Tool error: ")
    assert ran(calls) == [{"tool": "close_account", "arguments": {"customer": "vip"}}]


async def test_a_question_of_a_tool_without_a_channel_is_a_tool_error_the_model_reads(
    desk: Desk, calls: Path
) -> None:
    [refused] = await model_read(desk(), tool_call("erase_history", customer="ada"))
    assert refused == (
        "Tool error: erase_history asked 'Really erase everything ada ever ordered?', but "
        "it names no channel to ask; its server's declaration must name one for it in "
        "approvals="
    )
    assert ran(calls) == []


def asking() -> dict[str, type[Any]]:
    """Approvals for the refunds, and a channel to ask the history's questions."""
    return {"refund_*": RefundApprovalChannel, "erase_*": RefundApprovalChannel}


async def erase_paused(env: TestEnv, made: OrderDesk) -> PendingPause:
    env.mock_llm(made.agent).then_return(
        call_tools(tool_call("erase_history", customer="ada")),
        reply_with(WorkflowFinishTextDto, text="done"),
    )
    paused = await env.app.execute(made.workflow, {"text": "erase"}, owner_id="u-1")
    assert paused.status is ExecutionStatus.PAUSED
    [pending] = paused.pending
    return pending


async def test_a_question_a_tool_asks_mid_call_is_a_pause_of_its_channel_answered_by_id(
    desk: Desk, calls: Path
) -> None:
    made = order_desk_app(desk(approvals=asking()))
    recorded = McpRecorder()
    async with test_with(made.application, dependencies=recording(recorded)) as env:
        pending = await erase_paused(env, made)
        assert (pending.channel, pending.ask.tool) == ("refund-approval-channel", "erase_history")
        question = McpInputRequest.model_validate(pending.ask.arguments)
        assert question.elicitation == "Really erase everything ada ever ordered?"
        assert question.requested_schema["required"] == ["sure"]
        assert env.app.arguments_schema(pending) == question.requested_schema
        call, asked = recorded.asked  # the call was approved at once by the channel; then it asked
        assert call.value.arguments.values == {"customer": "ada"}
        assert isinstance(asked.value.arguments, McpInputRequest)
        assert asked.pause_id == pending.pause_id
        assert ran(calls) == []

        for wrong in ({"approved": True}, {"approved": True, "override_arguments": {"sure": 3}}):
            with pytest.raises(DtoValidationError):
                await env.app.resume(pending.pause_id, decision=wrong, owner_id="u-1")
        done = await env.app.resume(
            pending.pause_id,
            decision={"approved": True, "override_arguments": {"sure": True}},
            owner_id="u-1",
        )
        assert done.status is ExecutionStatus.COMPLETED
        [answer] = tool_messages(env.mock_llm(made.agent).requests[1])
        assert json.loads(answer)["text"] == "erased ada"
        steps = [s.kind for s in (await env.app.get(done.execution_id, record=True)).record.steps]
        assert steps == ["model-call", "tool-input", "tool-run", "model-call"]
    assert ran(calls) == [{"tool": "erase_history", "arguments": {"customer": "ada", "sure": True}}]


async def test_a_rejected_question_is_declined_and_the_model_reads_what_the_server_says(
    calls: Path,
) -> None:
    made = order_desk_app(stdio_desk(calls, approvals=asking()))
    async with test_with(made.application) as env:
        pending = await erase_paused(env, made)
        done = await env.app.resume(pending.pause_id, decision={"approved": False}, owner_id="u-1")
        assert done.status is ExecutionStatus.COMPLETED
        [declined] = tool_messages(env.mock_llm(made.agent).requests[1])
        assert declined.startswith("Tool error: ")
        assert "decline" in declined
    assert ran(calls) == []


async def test_a_question_is_answered_in_words_through_its_roles_reply_interpreter(
    calls: Path,
) -> None:
    made = order_desk_app(stdio_desk(calls, approvals=asking()))
    async with test_with(made.application) as env:
        pending = await erase_paused(env, made)
        assert env.app.accepts_reply(pending)
        done = await env.app.resume(pending.pause_id, reply="yes", owner_id="u-1")
        assert done.status is ExecutionStatus.COMPLETED
    assert ran(calls) == [{"tool": "erase_history", "arguments": {"customer": "ada", "sure": True}}]


async def test_a_question_waits_across_a_restart_of_the_app(desk: Desk, calls: Path) -> None:
    # The desk seals its request_state with a key of the test's: a stdio desk started again
    # by the restarted app still reads it (an HTTP desk keeps running meanwhile).
    made = order_desk_app(desk(approvals=asking()))
    async with test_with(made.application) as env:
        pending = await erase_paused(env, made)
        await env.restart()
        done = await env.app.resume(
            pending.pause_id,
            decision={"approved": True, "override_arguments": {"sure": False}},
            owner_id="u-1",
        )
        assert done.status is ExecutionStatus.COMPLETED
    assert ran(calls) == [
        {"tool": "erase_history", "arguments": {"customer": "ada", "sure": False}}
    ]


async def test_servers_declared_on_the_application_give_their_tools_to_every_agent(
    calls: Path,
) -> None:
    made = order_desk_app(stdio_desk(calls, only=["lookup_*"]), on_application=True)
    async with test_with(made.application) as env:
        env.mock_llm(made.agent).then_return(reply_with(WorkflowFinishTextDto, text="hi"))
        await env.app.execute(made.workflow, {"text": "hi"}, owner_id="u-1")
        [request] = env.mock_llm(made.agent).requests
        assert isinstance(request, ChatRequest)
        assert [tool.name for tool in request.tools] == ["lookup_order", "final_answer"]


async def test_a_prefix_names_the_tools_as_the_model_sees_them(calls: Path) -> None:
    made = order_desk_app(stdio_desk(calls, prefix="desk_", only=["lookup_order"]))
    async with test_with(made.application) as env:
        env.mock_llm(made.agent).then_return(
            call_tools(tool_call("desk_lookup_order", order_id="o-1")),
            reply_with(WorkflowFinishTextDto, text="ok"),
        )
        await env.app.execute(made.workflow, {"text": "o-1"}, owner_id="u-1")
    assert ran(calls) == [{"tool": "lookup_order", "arguments": {"order_id": "o-1"}}]


# ---- approvals ---------------------------------------------------------------------------


async def test_a_call_whose_tool_names_a_channel_pauses_and_runs_once_with_the_override(
    desk: Desk, calls: Path
) -> None:
    made = order_desk_app(desk(approvals=approvals()))
    recorded = McpRecorder()
    async with test_with(made.application, dependencies=recording(recorded)) as env:
        env.mock_llm(made.agent).then_return(
            call_tools(
                tool_call("lookup_order", order_id="o-1"),
                tool_call("refund_order", order_id="o-1", amount=120),
            ),
            reply_with(WorkflowFinishTextDto, text="refunded"),
        )
        paused = await env.app.execute(made.workflow, {"text": "refund o-1"}, owner_id="u-1")
        assert paused.status is ExecutionStatus.PAUSED
        [pending] = paused.pending
        assert (pending.channel, pending.ask.tool) == ("refund-approval-channel", "refund_order")
        assert pending.ask.arguments == {"order_id": "o-1", "amount": 120}
        [asked] = recorded.asked
        assert asked.pause_id == pending.pause_id
        assert asked.value.arguments.values == {"order_id": "o-1", "amount": 120}
        assert ran(calls) == [{"tool": "lookup_order", "arguments": {"order_id": "o-1"}}]

        with pytest.raises(DtoValidationError) as refused:
            await env.app.resume(
                pending.pause_id,
                decision={
                    "approved": True,
                    "override_arguments": {"order_id": "o-1", "amount": 900},
                },
                owner_id="u-1",
            )
        assert "override_arguments is not a valid input of refund_order" in refused.value.message
        assert "amount: 900 is greater than the maximum of 500" in str(refused.value)
        assert [p.pause_id for p in (await env.app.get(paused.execution_id)).pending] == [
            pending.pause_id
        ]

        done = await env.app.resume(
            pending.pause_id,
            decision={"approved": True, "override_arguments": {"order_id": "o-1", "amount": 60}},
            owner_id="u-1",
        )
        assert done.status is ExecutionStatus.COMPLETED
    assert ran(calls)[1:] == [
        {"tool": "refund_order", "arguments": {"order_id": "o-1", "amount": 60.0}}
    ]


async def test_a_rejected_call_never_reaches_the_server_and_the_model_reads_why(
    calls: Path,
) -> None:
    made = order_desk_app(stdio_desk(calls, approvals=approvals()))
    async with test_with(made.application) as env:
        env.mock_llm(made.agent).then_return(
            call_tools(tool_call("refund_order", order_id="o-1", amount=120)),
            reply_with(WorkflowFinishTextDto, text="no refund"),
        )
        paused = await env.app.execute(made.workflow, {"text": "refund o-1"}, owner_id="u-1")
        await env.app.resume(
            paused.pending[0].pause_id,
            decision={"approved": False, "reason": "delivered in full"},
            owner_id="u-1",
        )
        [rejected] = tool_messages(env.mock_llm(made.agent).requests[1])
        assert rejected.startswith("Tool error: the call was rejected by ")
        assert rejected.endswith(": delivered in full")
    assert ran(calls) == []


@pytest.mark.parametrize("instances", [1, 2], ids=["restarted", "other-instance"])
async def test_a_paused_call_is_answered_after_a_restart_or_on_another_instance(
    calls: Path, instances: int
) -> None:
    made = order_desk_app(stdio_desk(calls, approvals=approvals()))
    async with test_with(made.application, instances=instances) as env:
        env.mock_llm(made.agent).then_return(
            call_tools(tool_call("refund_order", order_id="o-3", amount=10)),
            reply_with(WorkflowFinishTextDto, text="refunded"),
        )
        paused = await env.apps[0].execute(made.workflow, {"text": "refund"}, owner_id="u-1")
        if instances == 1:
            await env.restart()
        done = await env.apps[-1].resume(
            paused.pending[0].pause_id, decision={"approved": True}, owner_id="u-1"
        )
        assert done.status is ExecutionStatus.COMPLETED
    assert ran(calls) == [{"tool": "refund_order", "arguments": {"order_id": "o-3", "amount": 10}}]


# ---- wiring errors -----------------------------------------------------------------------


async def test_a_missing_server_or_tool_is_reported_with_the_other_wiring_errors(
    tmp_path: Path,
) -> None:
    class NotAChannel: ...

    gone = McpServer.stdio("gone-desk-mcp", command=str(tmp_path / "no-such-server"))
    wrong = desk_named(
        "Desk Two",
        approvals={"refnud_*": RefundApprovalChannel, "close_*": NotAChannel},
        only=["lookup_order", "find_*"],
    )
    hung = McpServer.stdio(
        "hung-desk-mcp",
        command=sys.executable,
        args=["-c", "import time; time.sleep(120)"],  # never answers the handshake
        connect_timeout=timedelta(seconds=1),
    )
    made = order_desk_app(gone, wrong, hung)
    began = time.monotonic()
    with pytest.raises(AssemblyError) as failed:
        await App.create(made.application, store=tmp_path / "a.db")
    assert time.monotonic() - began < 15  # the servers are opened at once, each bounded
    found = {(v.rule, v.component) for v in failed.value.violations}
    assert found == {
        ("mcp.unreachable", "gone-desk-mcp"),
        ("mcp.unreachable", "hung-desk-mcp"),
        ("mcp.name", "Desk Two"),
        ("mcp.channel-not-a-channel", "Desk Two"),
        ("mcp.unknown-tool", "Desk Two"),
        ("model.unserved", "order-agent"),  # no provider is given: reported with them
    }, failed.value
    text = str(failed.value)
    assert "no-such-server" in text
    assert "within 1 s (connect_timeout)" in text
    assert "approvals names 'refnud_*', which matches none of its tools" in text
    assert "only names 'find_*', which matches none of its tools" in text
    assert "NotAChannel" in text


async def test_an_approved_tool_is_asked_about_when_cut_off_and_ask_needs_a_channel(
    calls: Path, tmp_path: Path
) -> None:
    desk = stdio_desk(calls, approvals=approvals(), only=["lookup_order", "refund_order"])
    async with test_with(order_desk_app(desk).application) as env:
        tools = env.app.assembly.agent_tools["order-agent"]
        assert tools["refund_order"][1].on_interrupted is OnInterrupted.ASK  # it has a channel
        assert tools["lookup_order"][1].on_interrupted is OnInterrupted.RERUN
    asked = desk_named(
        "asked-desk-mcp",
        approvals=approvals(),
        only=["lookup_order", "refund_order"],
        on_interrupted=OnInterrupted.ASK,
    )
    with pytest.raises(AssemblyError) as failed:
        async with test_with(order_desk_app(asked).application):
            pass
    [violation] = [v for v in failed.value.violations if v.rule == "mcp.ask-without-channel"]
    assert violation.component == "asked-desk-mcp"
    assert "lookup_order have no channel to ask" in violation.message


async def test_two_tools_of_one_name_for_an_agent_are_a_wiring_error(
    calls: Path, tmp_path: Path
) -> None:
    one = stdio_desk(calls, only=["lookup_order"])
    two = desk_named("second-desk-mcp", only=["lookup_*"])
    with pytest.raises(AssemblyError) as failed:
        async with test_with(order_desk_app(one, two).application):
            pass
    [violation] = failed.value.violations
    assert (violation.rule, violation.component) == ("mcp.duplicate-tool", "order-agent")
    assert "2 tools named 'lookup_order' (order-desk-mcp, second-desk-mcp)" in violation.message
    prefixed = desk_named("second-desk-mcp", only=["lookup_*"], prefix="second_")
    async with test_with(order_desk_app(one, prefixed).application) as env:
        assert set(env.app.assembly.agent_tools["order-agent"]) == {
            "lookup_order",
            "second_lookup_order",
        }


async def test_an_application_that_declares_a_server_without_the_sdk_is_told_what_to_install(
    monkeypatch: pytest.MonkeyPatch, calls: Path, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "agboss.mcp.client._connection", None)
    made = order_desk_app(stdio_desk(calls))
    with pytest.raises(ConfigurationError) as failed:
        await App.create(made.application, store=tmp_path / "a.db")
    assert failed.value.hint == "pip install 'agboss[mcp]'"


# ---- a server that goes away -------------------------------------------------------------


async def test_a_server_that_went_away_fails_the_step_and_is_reconnected_when_it_is_back(
    http_desk: HttpDesk, calls: Path
) -> None:
    made = order_desk_app(McpServer.http("order-desk-mcp", url=http_desk.url))
    async with test_with(made.application) as env:
        script = env.mock_llm(made.agent)
        script.then_return(call_tools(tool_call("lookup_order", order_id="o-1")))
        http_desk.stop()
        with pytest.raises(AgentFailedError) as failed:
            await env.app.execute(made.workflow, {"text": "o-1"}, owner_id="u-1")
        cause: BaseException | None = failed.value
        while cause is not None and not isinstance(cause, McpCallError):
            cause = cause.__cause__
        assert isinstance(cause, McpCallError), failed.value
        assert cause.server == "order-desk-mcp"

        http_desk.start()
        script.then_return(
            call_tools(tool_call("lookup_order", order_id="o-2")),
            reply_with(WorkflowFinishTextDto, text="delivered"),
        )
        result = await env.app.execute(made.workflow, {"text": "o-2"}, owner_id="u-1")
        assert result.status is ExecutionStatus.COMPLETED
    assert ran(calls) == [{"tool": "lookup_order", "arguments": {"order_id": "o-2"}}]
