"""The pay applications: a tool whose flaky gateway asks to be tried again, now or after a
wait longer than a lease, as the retry-policy and resting-retry tests use them."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from agboss import (
    ExecutionContext,
    RetryPolicy,
    ToolHandler,
    agent,
    application,
    provide,
    tool,
    workflow,
)
from tests.apps.office_parts import DeskDoneDto, ExpenseDto, office_flow
from tests.apps.recorded import Recorder


@dataclass
class PayRecorder(Recorder):
    """What the pay application did in one test (`tests.apps.recorded`)."""

    runs: list[str] = field(default_factory=list)
    """Each run of the gateway tool: its attempt, and what it did."""


class GatewayBusyError(Exception):
    """The payment gateway asks to try again later."""


class GatewayRefusedError(Exception):
    """The payment gateway refused: trying again changes nothing."""


@tool(
    name="pay-tool",
    description="Pays an expense through a flaky gateway",
    input=ExpenseDto,
    output=DeskDoneDto,
    deps=[ExecutionContext, PayRecorder],
    retry_policy=RetryPolicy(
        max_attempts=3, initial_interval=timedelta(seconds=2), retry_on=(GatewayBusyError,)
    ),
)
class PayTool(ToolHandler[ExpenseDto, DeskDoneDto]):
    def __init__(self, context: ExecutionContext, recorded: PayRecorder) -> None:
        self.context = context
        self.recorded = recorded

    async def run(self, args: ExpenseDto) -> DeskDoneDto:
        assert self.context.step is not None
        attempt = self.context.step.attempt
        key = self.context.step.idempotency_key
        if args.purpose.startswith("busy") and attempt <= int(args.purpose[-1]):
            self.recorded.runs.append(f"busy {attempt} {key}")
            raise GatewayBusyError(f"busy, attempt {attempt}")
        if args.purpose == "refused":
            self.recorded.runs.append(f"refused {attempt}")
            raise GatewayRefusedError("card declined")
        self.recorded.runs.append(f"paid {attempt} {key}")
        return DeskDoneDto(status=f"paid {args.purpose}")


@agent(
    name="pay-agent",
    description="Pays expenses",
    prompt="Pay it.",
    model="test/pay",
    tools=[PayTool],
    retry_policy=RetryPolicy(max_attempts=3, initial_interval=timedelta(seconds=1)),
)
class PayAgent: ...


@workflow(name="pay-workflow", version="1", flow=office_flow(PayAgent))
class PayWorkflow: ...


@application(name="pay-application", workflows=[PayWorkflow], dependencies=[provide(PayRecorder)])
class PayApplication: ...


@tool(
    name="late-pay-tool",
    description="Pays through a gateway that asks to come back in five minutes",
    input=ExpenseDto,
    output=DeskDoneDto,
    deps=[ExecutionContext, PayRecorder],
    retry_policy=RetryPolicy(
        max_attempts=2, initial_interval=timedelta(minutes=5), retry_on=(GatewayBusyError,)
    ),
)
class LatePayTool(PayTool):
    """The pay tool, whose gateway asks for a wait longer than a third of the lease."""


@agent(name="late-pay-agent", description="Pays", prompt="Pay it.", model="m", tools=[LatePayTool])
class LatePayAgent: ...


@workflow(name="late-pay-workflow", version="1", flow=office_flow(LatePayAgent))
class LatePayWorkflow: ...


@application(
    name="late-pay-application",
    workflows=[LatePayWorkflow],
    dependencies=[provide(PayRecorder)],
)
class LatePayApplication: ...
