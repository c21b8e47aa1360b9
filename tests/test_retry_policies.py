"""Retry policies (issue 39): a model call tried again on what a later attempt may fix — a real
provider's 429 after its ``Retry-After`` — a tool on the types its ``retry_on`` names, each
attempt counted once, on the application's Clock; attempts exhausted fail the step with their
errors; the count survives a restart; on both stores."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from agboss import (
    AgentFailedError,
    AssemblyError,
    Budget,
    ConfigurationError,
    ExecutionOutput,
    ExecutionStatus,
    FunctionProvider,
    RetryPolicy,
    ToolHandler,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
    agent,
    application,
    provide,
    start,
    tool,
    workflow,
)
from agboss.models import ChatRequest, ChatResponse
from agboss.models.openai import OpenAICompatibleProvider
from agboss.testing import TestEnv, call_tools, fail_with, reply_with, test_with, tool_call
from tests.apps.office_parts import DeskDoneDto, ExpenseDto, office_flow
from tests.apps.pay_app import (
    GatewayBusyError,
    GatewayRefusedError,
    PayAgent,
    PayApplication,
    PayRecorder,
    PayTool,
    PayWorkflow,
)
from tests.apps.tree_app import (
    AlphaAgent,
    BetaAgent,
    CheckDto,
    ChecksJoin,
    DeskHoldApprovalChannel,
    OrdersDto,
    OrdersStart,
    SummaryFinish,
    TreeRecorder,
)
from tests.loopback import LoopbackServer, Reply, completion, loopback_server
from tests.stores import STORE_KINDS, store_url
from tests.test_trees import ORDERS

pytestmark = pytest.mark.application.with_args(PayApplication)


@pytest.fixture(params=STORE_KINDS)
async def url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    async with store_url(request.param, tmp_path) as made:
        yield made


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with loopback_server() as made:
        yield made


async def moved(env: TestEnv, work: Any, step: timedelta) -> ExecutionOutput:
    """Runs ``work`` while the test clock moves on by ``step`` at a time (the pass sleeps on
    the application's Clock between attempts)."""
    task = asyncio.ensure_future(work)
    for _ in range(200):
        if task.done():
            break
        await asyncio.sleep(0.02)
        await env.clock.advance(step)
    output: ExecutionOutput = await asyncio.wait_for(task, 10)
    return output


def pays(purpose: str) -> Any:
    return call_tools(tool_call(PayTool, purpose=purpose, amount=3.5))


DONE = reply_with(WorkflowFinishTextDto, text="Paid.")


async def test_an_outage_is_tried_again_after_the_backoff_and_counted_once(env: TestEnv) -> None:
    env.mock_llm(PayAgent).then_return(
        fail_with(ConnectionError("reset by peer")),
        fail_with(TimeoutError("read timed out")),
        reply_with(WorkflowFinishTextDto, text="Nothing to pay."),
    )
    began = env.clock.now()
    result = await moved(
        env,
        env.app.execute(PayWorkflow, WorkflowStartTextDto(text="hi"), owner_id="u", record=True),
        timedelta(milliseconds=500),
    )
    assert result.status is ExecutionStatus.COMPLETED
    assert env.clock.now() - began >= timedelta(seconds=3)  # waited 1 s, then 2 s
    assert len(env.mock_llm(PayAgent).requests) == 3
    assert result.record is not None
    assert [step.kind for step in result.record.steps] == ["model-call"]  # one step
    assert result.spend.model_calls == 1  # only the attempt that answered spent
    assert len(result.record.ledger) == 1


async def test_attempts_exhausted_fail_the_step_with_every_error(env: TestEnv) -> None:
    env.mock_llm(PayAgent).then_return(
        *(fail_with(ConnectionError(f"down {n}")) for n in range(1, 4))
    )
    with pytest.raises(AgentFailedError, match="after 3 attempts") as failed:
        await moved(
            env,
            env.app.execute(PayWorkflow, WorkflowStartTextDto(text="hi"), owner_id="u"),
            timedelta(milliseconds=500),
        )
    assert failed.value.attempts == [
        "ConnectionError: down 1",
        "ConnectionError: down 2",
        "ConnectionError: down 3",
    ]
    assert not failed.value.final  # app.retry may take it from there
    [listed] = (await env.app.failed()).entries
    assert "after 3 attempts" in listed.message


async def test_what_a_retry_cannot_fix_fails_at_once(env: TestEnv) -> None:
    env.mock_llm(PayAgent).then_return(fail_with(ValueError("a bug in the request")))
    with pytest.raises(AgentFailedError, match="its model call failed: ValueError") as failed:
        await env.app.execute(PayWorkflow, WorkflowStartTextDto(text="hi"), owner_id="u")
    assert failed.value.attempts == ["ValueError: a bug in the request"]
    assert len(env.mock_llm(PayAgent).requests) == 1


async def test_a_providers_429_is_tried_again_after_its_retry_after(
    url: str, server: LoopbackServer
) -> None:
    """A real OpenAI-compatible server on loopback: 429 with ``Retry-After: 5``, then an
    answer. The SDK does not retry on its own; the policy waits what the server asked (longer
    than its own backoff of 1 s) on the test clock."""
    provider = OpenAICompatibleProvider(base_url=server.base_url, serves=("test/*",))
    server.replies.extend(
        [
            Reply(429, {"error": {"message": "slow down"}}, {"retry-after": "5"}),
            completion(tool_calls=[{"name": "final_answer", "arguments": {"text": "Done."}}]),
        ]
    )
    async with test_with(PayApplication, store=url, providers=[provider]) as env:
        began = env.clock.now()
        result = await moved(
            env,
            env.app.execute(PayWorkflow, WorkflowStartTextDto(text="hi"), owner_id="u"),
            timedelta(seconds=1),
        )
        assert result.output == WorkflowFinishTextDto(text="Done.")
        assert len(server.requests) == 2
        assert env.clock.now() - began >= timedelta(seconds=5)
    await provider.aclose()


async def test_a_tool_is_tried_again_on_what_its_retry_on_names(
    env: TestEnv, recorded: PayRecorder
) -> None:
    env.mock_llm(PayAgent).then_return(pays("busy2"), DONE)
    result = await moved(
        env,
        env.app.execute(PayWorkflow, WorkflowStartTextDto(text="pay"), owner_id="u"),
        timedelta(seconds=1),
    )
    assert result.status is ExecutionStatus.COMPLETED
    assert [run.split()[:2] for run in recorded.runs] == [
        ["busy", "1"],
        ["busy", "2"],
        ["paid", "3"],
    ]
    assert len({run.split()[2] for run in recorded.runs}) == 1  # one call: the same key each time


async def test_a_tool_is_not_tried_again_on_anything_else(
    env: TestEnv, recorded: PayRecorder
) -> None:
    env.mock_llm(PayAgent).then_return(pays("refused"), DONE)
    with pytest.raises(AgentFailedError, match="pay-tool raised GatewayRefusedError") as failed:
        await env.app.execute(PayWorkflow, WorkflowStartTextDto(text="pay"), owner_id="u")
    assert recorded.runs == ["refused 1"]
    assert isinstance(failed.value.__cause__, GatewayRefusedError)


async def test_a_tools_attempts_exhausted_fail_the_step(
    env: TestEnv, recorded: PayRecorder
) -> None:
    env.mock_llm(PayAgent).then_return(pays("busy9"), DONE)
    with pytest.raises(AgentFailedError, match="after 3 attempts") as failed:
        await moved(
            env,
            env.app.execute(PayWorkflow, WorkflowStartTextDto(text="pay"), owner_id="u"),
            timedelta(seconds=1),
        )
    assert [run.split()[1] for run in recorded.runs] == ["1", "2", "3"]
    assert failed.value.attempts == [f"GatewayBusyError: busy, attempt {n}" for n in (1, 2, 3)]


async def test_the_attempt_count_survives_a_restart(env: TestEnv, recorded: PayRecorder) -> None:
    """Cut off while it waits for its second attempt (the instance closes): the failed first
    attempt is journaled, so the recovered pass makes the second and third, not a first."""
    env.mock_llm(PayAgent).then_return(pays("busy9"), DONE)
    task = asyncio.ensure_future(
        env.app.execute(PayWorkflow, WorkflowStartTextDto(text="pay"), owner_id="u")
    )
    for _ in range(100):
        if recorded.runs:
            break
        await asyncio.sleep(0.02)
    assert recorded.runs[0].startswith("busy 1")
    await asyncio.sleep(0.1)
    task.cancel()  # the caller goes away mid-wait
    with pytest.raises(asyncio.CancelledError):
        await task
    await env.restart()
    with pytest.raises(AgentFailedError, match="after 3 attempts"):
        await moved(env, _recovered(env), timedelta(seconds=1))
    assert [run.split()[1] for run in recorded.runs] == ["1", "2", "3"]


async def _recovered(env: TestEnv) -> ExecutionOutput:
    await env.clock.advance(timedelta(minutes=1))  # past the cut-off pass's lease
    for app in env.apps:
        await app.recover()
    [failed] = (await env.app.failed()).entries
    return await env.app.get(failed.execution_id)


async def test_policies_are_checked_with_the_other_wiring_rules() -> None:
    @tool(
        name="sloppy-tool",
        description="Retries nothing in particular",
        input=ExpenseDto,
        output=DeskDoneDto,
        retry_policy=RetryPolicy(max_attempts=3),
    )
    class SloppyTool(ToolHandler[ExpenseDto, DeskDoneDto]):
        def run(self, args: ExpenseDto) -> DeskDoneDto:
            return DeskDoneDto(status="ok")

    @agent(name="sloppy-agent", description="d", prompt="p", model="m", tools=[SloppyTool])
    class SloppyAgent: ...

    @workflow(name="sloppy-workflow", version="1", flow=office_flow(SloppyAgent))
    class SloppyWorkflow: ...

    @application(name="sloppy-application", workflows=[SloppyWorkflow])
    class SloppyApplication: ...

    with pytest.raises(AssemblyError) as caught:
        async with test_with(SloppyApplication):
            pass
    assert "tool.retry-on-missing" in caught.value.rules
    for bad in (
        {"max_attempts": 0},
        {"backoff": 0.5},
        {"initial_interval": timedelta(seconds=-1)},
        {"max_interval": timedelta(0), "initial_interval": timedelta(seconds=1)},
        {"retry_on": ("not a class",)},
    ):
        with pytest.raises(ConfigurationError):
            RetryPolicy(**bad)
    assert RetryPolicy(retry_on=[GatewayBusyError]).retry_on == (GatewayBusyError,)  # type: ignore[arg-type]
    policy = RetryPolicy(initial_interval=timedelta(seconds=1), max_interval=timedelta(seconds=5))
    assert [policy.interval(n).total_seconds() for n in (1, 2, 3, 4)] == [1, 2, 4, 5]
    assert policy.interval(1, timedelta(seconds=120)) == timedelta(seconds=120)


@workflow(
    name="budgeted-checks-workflow",
    version="1",
    flow=[
        start(OrdersStart)
        .returns(OrdersDto)
        .to_parallel(AlphaAgent, BetaAgent)
        .join(ChecksJoin)
        .to_finish(SummaryFinish)
    ],
    budget=Budget(tokens=5),
)
class BudgetedChecksWorkflow: ...


@application(
    name="budgeted-checks-application",
    workflows=[BudgetedChecksWorkflow],
    channels=[DeskHoldApprovalChannel],
    dependencies=[provide(TreeRecorder)],
)
class BudgetedChecksApplication: ...


async def test_each_attempt_is_checked_against_the_budgets_before_it_is_made(url: str) -> None:
    """Alpha's first call fails; while it waits, beta's answer spends the tree's budget; so
    alpha's second attempt is never made: the budget refuses it, and the step fails with both."""
    alpha_failed = asyncio.Event()
    calls: list[str] = []

    async def models(request: ChatRequest) -> ChatResponse:
        calls.append(request.caller.name)
        if request.caller.name == "alpha-agent":
            alpha_failed.set()
            raise ConnectionError("reset by peer")
        await alpha_failed.wait()  # beta answers only once alpha waits for its second attempt
        return reply_with(CheckDto, verdict="beta ok").response(request)

    async with test_with(
        BudgetedChecksApplication, store=url, providers=[FunctionProvider(models)]
    ) as env:
        with pytest.raises(AgentFailedError, match="budget") as failed:
            await moved(
                env,
                env.app.execute(BudgetedChecksWorkflow, ORDERS, owner_id="u"),
                timedelta(seconds=1),
            )
    assert calls.count("alpha-agent") == 1  # its second attempt was refused before the call
    assert failed.value.attempts[0] == "ConnectionError: reset by peer"
    assert failed.value.attempts[1].startswith("budget.exceeded")
