"""An application whose agent's tools come from the MCP order desk (`tests.mcp_server`).

The server is reached over stdio or HTTP, so the application is made per test by
`order_desk_app`: the declaration (and so the transport) is part of the agent's spec.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from agboss import (
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    DecidedBy,
    PauseAnswerer,
    ReplyInterpretation,
    ReplyInterpreterHandler,
    ToolCallApprovalDecisionDto,
    agent,
    application,
    channel,
    channel_role,
    provide,
    reply_interpreter,
    workflow,
)
from agboss.interpreters import InterpreterInput
from agboss.mcp import McpArguments, McpInputRequest, McpServer
from tests.apps.office_parts import office_flow
from tests.apps.recorded import Recorder, Records

ROOT = Path(__file__).resolve().parents[2]

STATE_KEY = "order-desk-test-key-" + "0" * 13
"""The key the desk seals its questions' state with (32 bytes), the same in every process."""


@dataclass
class McpRecorder(Recorder):
    """What the order desk's channel was sent in one test (`tests.apps.recorded`)."""

    asked: list[ChannelAsk[McpArguments]] = field(default_factory=list)
    """Every question the refund channel was sent."""


def stdio_desk(calls: Path, **options: Any) -> McpServer:
    """The order desk as a subprocess, recording its calls in ``calls``."""
    return desk_named("order-desk-mcp", {"AGBOSS_MCP_CALLS": str(calls)}, **options)


def desk_named(name: str, env: dict[str, str] | None = None, **options: Any) -> McpServer:
    """The order desk (`tests.mcp_server`) over stdio, declared as ``name``, its process
    given ``env`` besides what it always needs (this tree on its path, the state key)."""
    return McpServer.stdio(
        name,
        command=sys.executable,
        args=["-m", "tests.mcp_server"],
        env={"PYTHONPATH": str(ROOT), "AGBOSS_MCP_STATE_KEY": STATE_KEY, **(env or {})},
        cwd=ROOT,
        **options,
    )


@reply_interpreter(
    name="desk-reply-interpreter",
    description="Reads a manager's yes or no",
    decided_by=DecidedBy.CODE,
)
class DeskReplyInterpreter(ReplyInterpreterHandler[McpArguments]):
    def interpret(self, input: InterpreterInput[McpArguments]) -> ReplyInterpretation:
        yes = input.reply.strip().lower() == "yes"
        if isinstance(input.ask.arguments, McpInputRequest):  # a question: "yes" is its answer
            answer = ToolCallApprovalDecisionDto(approved=True, override_arguments={"sure": yes})
            return ReplyInterpretation.understood(answer)
        return ReplyInterpretation.understood(ToolCallApprovalDecisionDto(approved=yes))


@channel_role(
    name="refund-approval-channel",
    description="A manager approves refunds made through MCP",
    approves=McpArguments,
    answered_by=PauseAnswerer.THREAD_OWNER,
    reply_interpreter=DeskReplyInterpreter,
)
class RefundApprovalChannel(ChannelOf[McpArguments]): ...


@channel(name="desk-refund-approval-channel", description="Asks the manager", deps=[McpRecorder])
class DeskRefundApprovalChannel(Records[McpRecorder], RefundApprovalChannel):
    async def send(self, ask: ChannelAsk[McpArguments]) -> ChannelOutcome:
        self.recorded.asked.append(ask)
        question = isinstance(ask.value.arguments, McpInputRequest)
        if ask.value.tool == "erase_history" and not question:
            # Its calls need no approval, only the answers to what it asks.
            return ChannelOutcome.decided({"approved": True})
        return ChannelOutcome.await_reply()


class OrderDesk(NamedTuple):
    """The application made for one server, with its agent and workflow."""

    application: type[Any]
    agent: type[Any]
    workflow: type[Any]


def order_desk_app(*servers: McpServer, on_application: bool = False) -> OrderDesk:
    """The application: one agent with the servers' tools (declared on the agent, or on the
    application when ``on_application``)."""

    @agent(
        name="order-agent",
        description="Answers customers about their orders",
        prompt="Help the customer with their order.",
        model="test/orders",
        tools=[] if on_application else list(servers),
    )
    class OrderAgent: ...

    @workflow(name="order-workflow", version="1", flow=office_flow(OrderAgent))
    class OrderWorkflow: ...

    @application(
        name="order-desk-application",
        workflows=[OrderWorkflow],
        channels=[DeskRefundApprovalChannel],
        mcp_servers=list(servers) if on_application else [],
        dependencies=[provide(McpRecorder)],
    )
    class OrderDeskApplication: ...

    return OrderDesk(OrderDeskApplication, OrderAgent, OrderWorkflow)
