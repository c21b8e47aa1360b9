"""Applications whose executions fan out: parallel branches, per-item branches, child workflows."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from pydantic import BaseModel

from agboss import (
    AgentFailedError,
    Budget,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    ChannelWithdrawal,
    ExecutionContext,
    ExecutionPauseEvent,
    Failure,
    JoinDeadlineError,
    JoinHandler,
    JoinInput,
    PauseAnswerer,
    QuorumGroup,
    ToolHandler,
    agent,
    application,
    channel,
    channel_role,
    join,
    provide,
    start,
    tool,
    workflow,
    workflow_finish,
    workflow_start,
)
from tests.apps.recorded import Recorder, Records


class OrderDto(BaseModel):
    order_id: str


class OrdersDto(BaseModel):
    orders: list[OrderDto]


class CheckDto(BaseModel):
    verdict: str


class SummaryDto(BaseModel):
    text: str


class PaymentDeclinedError(Exception):
    """A domain error: the payment provider declined."""


@dataclass
class TreeRecorder(Recorder):
    """What the tree application did in one test (`tests.apps.recorded`)."""

    runs: list[str] = field(default_factory=list)
    items: list[int | None] = field(default_factory=list)
    """The item index each ship-tool run read from its ExecutionContext."""
    joins: list[JoinInput] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)
    events: list[ExecutionPauseEvent] = field(default_factory=list)
    decline: set[str] = field(default_factory=set)
    """Set by a test: order ids whose hold the channel cannot even send (it raises
    PaymentDeclinedError)."""


@channel_role(
    name="hold-approval-channel",
    description="The owner approves shipping an order",
    approves=OrderDto,
    answered_by=PauseAnswerer.THREAD_OWNER,
)
class HoldApprovalChannel(ChannelOf[OrderDto]): ...


@channel(name="desk-hold-approval-channel", description="Asks at the desk", deps=[TreeRecorder])
class DeskHoldApprovalChannel(Records[TreeRecorder], HoldApprovalChannel):
    async def send(self, ask: ChannelAsk[OrderDto]) -> ChannelOutcome:
        order = ask.value.arguments.order_id
        if order in self.recorded.decline:
            raise PaymentDeclinedError(f"the payment of {order} was declined")
        self.recorded.sent.append(f"send {order}")
        return ChannelOutcome.await_reply()

    async def withdraw(self, withdrawal: ChannelWithdrawal[OrderDto]) -> None:
        self.recorded.sent.append(
            f"withdraw {withdrawal.value.arguments.order_id} {withdrawal.resolution}"
        )


SHIP_TIMEOUT = timedelta(minutes=5)
"""The ship tool's timeout: its channel's withdraw is cut off at it."""


@tool(
    name="ship-tool",
    description="Ships an order",
    input=OrderDto,
    output=CheckDto,
    channel=HoldApprovalChannel,
    deps=[ExecutionContext, TreeRecorder],
    timeout=SHIP_TIMEOUT,
)
class ShipTool(ToolHandler[OrderDto, CheckDto]):
    def __init__(self, context: ExecutionContext, recorded: TreeRecorder) -> None:
        self.context = context
        self.recorded = recorded

    async def run(self, args: OrderDto) -> CheckDto:
        self.recorded.runs.append(f"ship {args.order_id}")
        assert self.context.step is not None
        self.recorded.items.append(self.context.step.item_index)
        return CheckDto(verdict=f"shipped {args.order_id}")


def _agent(name: str, input: type[BaseModel], **options: Any) -> Any:
    return agent(
        name=name,
        description=f"The {name}",
        prompt="Check it.",
        model="test/model",
        tools=[ShipTool],
        input=input,
        output=CheckDto,
        **options,
    )


@_agent("alpha-agent", OrdersDto)
class AlphaAgent: ...


@_agent("beta-agent", OrdersDto)
class BetaAgent: ...


@_agent("gamma-agent", OrdersDto)
class GammaAgent: ...


@_agent("failing-agent", OrdersDto, max_validation_attempts=0)
class FailingAgent: ...


@_agent("item-agent", OrderDto)
class ItemAgent: ...


@join(name="checks-join", description="Lists the verdicts", output=SummaryDto, deps=[TreeRecorder])
class ChecksJoin(Records[TreeRecorder], JoinHandler[SummaryDto]):
    def join(self, input: JoinInput) -> SummaryDto:
        self.recorded.joins.append(input)
        verdicts = [
            r.output.verdict
            if isinstance(r.output, CheckDto)
            else r.output.text
            if isinstance(r.output, SummaryDto)
            else f"error: {r.error}"
            for r in input.results
        ]
        quorum = ""
        if input.quorum is not None:
            quorum = f" | quorum {input.quorum.reached} {input.quorum.winner}"
        return SummaryDto(text="; ".join(verdicts) + quorum)


@join(name="recover-join", description="Says what failed", output=SummaryDto, deps=[TreeRecorder])
class RecoverJoin(Records[TreeRecorder], JoinHandler[SummaryDto]):
    async def join(self, input: JoinInput) -> SummaryDto:
        self.recorded.joins.append(input)
        return SummaryDto(text=f"recovered from {type(input.error).__name__}")


@workflow_start(name="orders-workflow-start", description="Orders", input=OrdersDto)
class OrdersStart: ...


@workflow_start(name="order-workflow-start", description="One order", input=OrderDto)
class OrderStart: ...


@workflow_finish(name="summary-workflow-finish", description="A summary", output=SummaryDto)
class SummaryFinish: ...


@workflow_finish(name="check-workflow-finish", description="A verdict", output=CheckDto)
class CheckFinish: ...


def _orders() -> Any:
    return start(OrdersStart).returns(OrdersDto)


@workflow(
    name="parallel-workflow",
    version="1",
    flow=[
        _orders()
        .to_parallel(AlphaAgent, BetaAgent, GammaAgent)
        .join(ChecksJoin)
        .to_finish(SummaryFinish)
    ],
)
class ParallelWorkflow: ...


@workflow(
    name="one-slot-workflow",
    version="1",
    flow=[
        _orders()
        .to_parallel(AlphaAgent, BetaAgent, GammaAgent, max_concurrency=1)
        .join(ChecksJoin)
        .to_finish(SummaryFinish)
    ],
)
class OneSlotWorkflow: ...


@workflow(
    name="each-workflow",
    version="1",
    flow=[_orders().to_each(ItemAgent, over="orders").join(ChecksJoin).to_finish(SummaryFinish)],
)
class EachWorkflow: ...


@workflow(
    name="fail-fast-workflow",
    version="1",
    flow=[
        _orders()
        .to_parallel(AlphaAgent, FailingAgent)
        .join(ChecksJoin)
        .on_join_error(AgentFailedError, RecoverJoin)
        .to_finish(SummaryFinish)
    ],
)
class FailFastWorkflow: ...


@workflow(
    name="bare-fail-fast-workflow",
    version="1",
    flow=[
        _orders().to_parallel(AlphaAgent, FailingAgent).join(ChecksJoin).to_finish(SummaryFinish)
    ],
)
class BareFailFastWorkflow: ...


@workflow(
    name="declined-workflow",
    version="1",
    flow=[
        _orders()
        .to_parallel(AlphaAgent, BetaAgent)
        .join(ChecksJoin)
        .on_join_error(PaymentDeclinedError, RecoverJoin)
        .to_finish(SummaryFinish)
    ],
)
class DeclinedWorkflow: ...


@workflow(
    name="collect-workflow",
    version="1",
    flow=[
        _orders()
        .to_parallel(AlphaAgent, FailingAgent, failure=Failure.COLLECT)
        .join(ChecksJoin)
        .to_finish(SummaryFinish)
    ],
)
class CollectWorkflow: ...


@workflow(
    name="quorum-workflow",
    version="1",
    flow=[
        _orders()
        .to_parallel(AlphaAgent, BetaAgent, GammaAgent, failure=Failure.COLLECT)
        .join_quorum(ChecksJoin, min=2, deadline=timedelta(hours=1))
        .to_finish(SummaryFinish)
    ],
)
class QuorumWorkflow: ...


@workflow(
    name="groups-workflow",
    version="1",
    flow=[
        _orders()
        .to_parallel(AlphaAgent, BetaAgent, GammaAgent)
        .join_quorum_groups(
            ChecksJoin,
            groups=[
                QuorumGroup("pair", (AlphaAgent, BetaAgent), min=2),
                QuorumGroup("solo", (GammaAgent,), min=1),
            ],
        )
        .to_finish(SummaryFinish)
    ],
)
class GroupsWorkflow: ...


@workflow(
    name="deadline-workflow",
    version="1",
    flow=[
        _orders()
        .to_parallel(AlphaAgent, BetaAgent)
        .join(ChecksJoin, deadline=timedelta(hours=1))
        .on_join_error(JoinDeadlineError, RecoverJoin)
        .to_finish(SummaryFinish)
    ],
)
class DeadlineWorkflow: ...


# ---- child workflows --------------------------------------------------------------------


@workflow(
    name="order-workflow",
    version="1",
    flow=[start(OrderStart).returns(OrderDto).to_agent(ItemAgent).to_finish(CheckFinish)],
)
class OrderWorkflow: ...


@workflow(
    name="alpha-child-workflow",
    version="1",
    flow=[_orders().to_agent(AlphaAgent).to_finish(CheckFinish)],
)
class AlphaChildWorkflow: ...


@workflow(
    name="failing-child-workflow",
    version="1",
    flow=[_orders().to_agent(FailingAgent).to_finish(CheckFinish)],
)
class FailingChildWorkflow: ...


@workflow(
    name="each-child-workflow",
    version="1",
    flow=[
        _orders()
        .to_each_workflow(OrderWorkflow, over="orders")
        .join(ChecksJoin)
        .to_finish(SummaryFinish)
    ],
)
class EachChildWorkflow: ...


@workflow(
    name="order-step-workflow",
    version="1",
    flow=[start(OrderStart).returns(OrderDto).to_workflow(OrderWorkflow).to_finish(CheckFinish)],
)
class OrderStepWorkflow: ...


@workflow(
    name="each-grandchild-workflow",
    version="1",
    flow=[
        _orders()
        .to_each_workflow(OrderStepWorkflow, over="orders")
        .join(ChecksJoin)
        .to_finish(SummaryFinish)
    ],
)
class EachGrandchildWorkflow: ...


@workflow(
    name="step-child-workflow",
    version="1",
    flow=[_orders().to_workflow(AlphaChildWorkflow).to_finish(CheckFinish)],
)
class StepChildWorkflow: ...


@workflow(
    name="nested-fail-fast-workflow",
    version="1",
    flow=[
        _orders()
        .to_parallel_workflows(EachChildWorkflow, FailingChildWorkflow)
        .join(ChecksJoin)
        .on_join_error(AgentFailedError, RecoverJoin)
        .to_finish(SummaryFinish)
    ],
)
class NestedFailFastWorkflow: ...


@workflow(
    name="nested-workflow",
    version="1",
    flow=[
        _orders()
        .to_parallel_workflows(EachChildWorkflow, AlphaChildWorkflow)
        .join(ChecksJoin)
        .to_finish(SummaryFinish)
    ],
)
class NestedWorkflow: ...


@workflow(
    name="budgeted-workflow",
    version="1",
    flow=[_orders().to_workflow(AlphaChildWorkflow).to_finish(CheckFinish)],
    budget=Budget(tokens=1),
)
class BudgetedWorkflow: ...


@application(
    name="tree-application",
    workflows=[
        ParallelWorkflow,
        OneSlotWorkflow,
        EachWorkflow,
        FailFastWorkflow,
        BareFailFastWorkflow,
        DeclinedWorkflow,
        CollectWorkflow,
        QuorumWorkflow,
        GroupsWorkflow,
        DeadlineWorkflow,
        EachChildWorkflow,
        EachGrandchildWorkflow,
        StepChildWorkflow,
        NestedFailFastWorkflow,
        NestedWorkflow,
        BudgetedWorkflow,
    ],
    channels=[DeskHoldApprovalChannel],
    dependencies=[provide(TreeRecorder)],
    deps=[TreeRecorder],
)
class TreeApplication(Records[TreeRecorder]):
    def on_execution_pause(self, event: ExecutionPauseEvent) -> None:
        self.recorded.events.append(event)
