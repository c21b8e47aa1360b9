"""Tools cut off mid-call: a process that dies inside a tool's handler, after the call's intent
was committed and before its result (issue 38).

``python -m tests.apps.interrupted_app URL TOOL [PAUSE_ID]``: executes the workflow whose agent
calls ``TOOL`` (or answers ``PAUSE_ID``, approving the call), on an `App` with a short lease; the
tool notes its run in ``AGBOSS_TEST_RUNS`` and, with ``AGBOSS_DIE_IN_TOOL=1``, kills its own process
with SIGKILL before it returns — the call may have run, and left no result (with
``AGBOSS_STOP_IN_TOOL=1`` it stops itself with SIGSTOP instead, to be continued later; with
``AGBOSS_RESTART_IN_TOOL=1`` it restarts the PostgreSQL cluster ``AGBOSS_RESTART_POSTGRES``
names, every connection dying with it).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agboss import (
    App,
    ApprovalAsk,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    ExecutionContext,
    FunctionProvider,
    OnInterrupted,
    PauseAnswerer,
    ToolHandler,
    WorkflowStartTextDto,
    agent,
    application,
    channel,
    channel_role,
    provide,
    tool,
    workflow,
)
from agboss.agents import ANSWER_TOOL
from agboss.components import spec_of
from agboss.models import ChatRequest, ChatResponse, MessageRole, ToolCall
from tests.apps.office_parts import office_flow
from tests.apps.recorded import Recorder, Records

LEASE_TTL = timedelta(milliseconds=600)
"""Short: the test need not wait long for the dead holder's lease to expire."""


class PaymentDto(BaseModel):
    invoice: str
    amount: float


class PaidDto(BaseModel):
    status: str


def _ran(tool_name: str, context: ExecutionContext, args: PaymentDto) -> None:
    line = {
        "tool": tool_name,
        "key": context.step.idempotency_key,
        "attempt": context.step.attempt,
        "amount": args.amount,
        "pid": os.getpid(),
    }
    with Path(os.environ["AGBOSS_TEST_RUNS"]).open("a") as runs:
        runs.write(json.dumps(line) + "\n")
    if os.environ.get("AGBOSS_DIE_IN_TOOL") == "1":
        os.kill(os.getpid(), signal.SIGKILL)  # mid-call: the payment may have gone out
    if os.environ.get("AGBOSS_STOP_IN_TOOL") == "1":
        os.kill(os.getpid(), signal.SIGSTOP)  # stalled mid-call, past its lease
    if os.environ.get("AGBOSS_RESTART_IN_TOOL") == "1":  # the server restarts mid-call
        version, name = os.environ["AGBOSS_RESTART_POSTGRES"].split()
        subprocess.run(["pg_ctlcluster", version, name, "restart"], check=True)


@channel_role(
    name="payment-approval-channel",
    description="A manager approves payments",
    approves=PaymentDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
)
class PaymentApprovalChannel(ChannelOf[PaymentDto]): ...


@dataclass
class InterruptedRecorder(Recorder):
    """What the channel of the payment application was sent (`tests.apps.recorded`)."""

    asked: list[ApprovalAsk[PaymentDto]] = field(default_factory=list)


@channel(
    name="inbox-payment-approval-channel",
    description="Waits for the manager",
    deps=[InterruptedRecorder],
)
class InboxPaymentApprovalChannel(Records[InterruptedRecorder], PaymentApprovalChannel):
    async def send(self, ask: ChannelAsk[PaymentDto]) -> ChannelOutcome:
        self.recorded.asked.append(ask.value)
        return ChannelOutcome.await_reply()


class _Payer(ToolHandler[PaymentDto, PaidDto]):
    """Pays: what each payment tool runs (each declares its own interruption)."""

    def __init__(self, context: ExecutionContext) -> None:
        self.context = context

    def run(self, args: PaymentDto) -> PaidDto:
        spec = spec_of(type(self))
        assert spec is not None
        _ran(spec.name, self.context, args)
        return PaidDto(status=f"paid {args.invoice}")


@tool(
    name="pay-tool",
    description="Pays an invoice",
    input=PaymentDto,
    output=PaidDto,
    deps=[ExecutionContext],
    on_interrupted=OnInterrupted.FAIL,
)
class PayTool(_Payer): ...


@tool(
    name="pay-again-tool",
    description="Pays an invoice with a provider that deduplicates by the idempotency key",
    input=PaymentDto,
    output=PaidDto,
    deps=[ExecutionContext],
)
class PayAgainTool(_Payer): ...


@tool(
    name="approved-pay-tool",
    description="Pays an invoice once a manager approved it",
    input=PaymentDto,
    output=PaidDto,
    channel=PaymentApprovalChannel,
    deps=[ExecutionContext],
    on_interrupted=OnInterrupted.FAIL,
)
class ApprovedPayTool(_Payer): ...


@tool(
    name="asked-pay-tool",
    description="Pays an invoice once a manager approved it; a person is asked if cut off",
    input=PaymentDto,
    output=PaidDto,
    channel=PaymentApprovalChannel,
    deps=[ExecutionContext],
)
class AskedPayTool(_Payer):
    """Declares no ``on_interrupted``: a tool with a channel is asked about (``ASK``)."""


@agent(
    name="payment-agent",
    description="Pays invoices",
    prompt="Pay it.",
    model="test/payments",
    tools=[PayTool, PayAgainTool, ApprovedPayTool, AskedPayTool],
)
class PaymentAgent: ...


@workflow(name="payment-workflow", version="1", flow=office_flow(PaymentAgent))
class PaymentWorkflow: ...


@application(
    name="payment-application",
    workflows=[PaymentWorkflow],
    channels=[InboxPaymentApprovalChannel],
    dependencies=[provide(InterruptedRecorder)],
)
class PaymentApplication: ...


def model(request: ChatRequest) -> ChatResponse:
    """Calls the tool the request names (its text), then says what the tool answered."""
    results = [m.content for m in request.messages if m.role is MessageRole.TOOL]
    if results:
        said = json.dumps({"text": results[-1][:200]})
        return ChatResponse(tool_calls=(ToolCall(id="a", name=ANSWER_TOOL, arguments=said),))
    tool_name = next(m.content for m in request.messages if m.role is MessageRole.USER)
    arguments = json.dumps({"invoice": "inv-7", "amount": 120.0})
    return ChatResponse(tool_calls=(ToolCall(id="c", name=tool_name, arguments=arguments),))


async def open_app(url: str, **options: Any) -> App:
    """The application on a store, with the scripted model."""
    return await App.create(
        PaymentApplication, store=url, providers=[FunctionProvider(model)], **options
    )


async def main(url: str, tool_name: str, *answer: str) -> None:
    app = await open_app(url, lease_ttl=LEASE_TTL)
    try:
        if answer:
            await app.resume(answer[0], decision={"approved": True}, owner_id="u-1")
        else:
            start = WorkflowStartTextDto(text=tool_name)
            await app.execute(PaymentWorkflow, start, owner_id="u-1", thread_id="t-1")
    finally:
        await app.close()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
