"""Decision metrics (issue 56, point 4): OpenTelemetry instruments a team can alert on — the
time a question waits for its decision (a histogram by role, tool, outcome and who decided),
decisions by outcome and by whom (a counter), and the questions waiting (a gauge the sweep
reads). agboss depends on the API only: here the SDK's meter provider reads them in memory."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import metrics
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from agboss import StandingScope
from agboss.testing import TestEnv, call_tools, test_with, tool_call
from tests.apps import tree_app
from tests.apps.deadline_app import DeadlineApplication, RejectRefundTool
from tests.apps.desk import (
    BookExpenseTool,
    ExpenseApprovalChannel,
    OfficeAgent,
    OfficeApplication,
    OfficeWorkflow,
    StampTool,
)
from tests.apps.tree_app import AlphaAgent, FailFastWorkflow, FailingAgent, TreeApplication
from tests.stores import STORE_KINDS, store_url
from tests.test_builds_side_by_side import _owners, _paused
from tests.test_deadlines import DAYS_2, asked
from tests.test_pauses import BOTH, DONE, REQUEST
from tests.test_trees import ORDERS, approve, fails_once_answered, pause_of, pauses

STAMPED_AND_BOOKED = call_tools(
    tool_call(StampTool, lease_id="L-7"),
    tool_call(BookExpenseTool, purpose="taxi", amount=12.5),
)

_READER = InMemoryMetricReader()
metrics.set_meter_provider(MeterProvider(metric_readers=[_READER]))  # once per process


def _points(name: str) -> list[Any]:
    data = _READER.get_metrics_data()
    if data is None:  # nothing recorded yet
        return []
    return [
        point
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == name
        for point in metric.data.data_points
    ]


def _decided(tool: str) -> dict[tuple[str, str, str], tuple[int, float]]:
    """The decisions of ``tool``'s questions so far, by (role, outcome, who): how many, and
    the time they waited, summed (seconds)."""
    counts = {
        _key(point.attributes): int(point.value)
        for point in _points("agboss.decisions")
        if point.attributes["agboss.tool"] == tool
    }
    waited = {
        _key(point.attributes): float(point.sum)
        for point in _points("agboss.decision.duration")
        if point.attributes["agboss.tool"] == tool
    }
    return {key: (counts[key], waited[key]) for key in counts}


def _key(attributes: Any) -> tuple[str, str, str]:
    return (
        attributes["agboss.role"],
        attributes["agboss.outcome"],
        attributes["agboss.decided_by"],
    )


@pytest.fixture
def reader() -> InMemoryMetricReader:
    """The process's one reader: its sums are cumulative, so a test reads what it added."""
    return _READER


@pytest.mark.application.with_args(OfficeApplication)
async def test_a_persons_decision_is_counted_with_how_long_the_question_waited(
    env: TestEnv, reader: InMemoryMetricReader
) -> None:
    before = _decided("book-expense-tool")
    env.mock_llm(OfficeAgent).then_return(BOTH, DONE)
    began = await _paused(env)
    await env.clock.advance(timedelta(seconds=90))
    await env.app.resume(
        _owners(began).pause_id or "", decision={"approved": False}, owner_id="user-1"
    )
    after = _decided("book-expense-tool")
    key = ("expense-approval-channel", "rejected", "person")
    count, waited = after[key]
    was_count, was_waited = before.get(key, (0, 0.0))
    assert (count - was_count, waited - was_waited) == (1, 90.0)


@pytest.mark.application.with_args(OfficeApplication)
async def test_a_standing_decision_and_a_channel_that_decides_at_once_are_counted_by_who(
    env: TestEnv, reader: InMemoryMetricReader
) -> None:
    by_channel = ("auto-approve-channel", "approved", "code")
    by_standing = ("expense-approval-channel", "approved", "standing")
    stamped = _decided("stamp-tool").get(by_channel, (0, 0.0))[0]
    allowed = _decided("book-expense-tool").get(by_standing, (0, 0.0))[0]
    await env.app.allow(
        ExpenseApprovalChannel, scope=StandingScope.OWNER, owner_id="user-1", granted_by="ops"
    )
    env.mock_llm(OfficeAgent).then_return(STAMPED_AND_BOOKED, DONE)
    await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
    assert _decided("stamp-tool")[by_channel][0] == stamped + 1  # its channel approves at once
    assert _decided("book-expense-tool")[by_standing][0] == allowed + 1


@pytest.mark.application.with_args(DeadlineApplication)
async def test_a_deadline_that_decides_is_counted_as_expired(
    env: TestEnv, reader: InMemoryMetricReader
) -> None:
    key = ("reject-refund-channel", "expired", "deadline")
    before = _decided("reject-refund-tool").get(key, (0, 0.0))
    await asked(env, RejectRefundTool)
    await env.clock.jump(DAYS_2)
    count, waited = _decided("reject-refund-tool")[key]
    assert (count - before[0], waited - before[1]) == (1, DAYS_2.total_seconds())


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_the_questions_waiting_are_a_gauge_the_sweep_reads(
    kind: str, tmp_path: Path, reader: InMemoryMetricReader
) -> None:
    async with store_url(kind, tmp_path) as url, test_with(OfficeApplication, store=url) as env:
        reader.get_metrics_data()  # collected once: the sweep reads the count from now on
        env.mock_llm(OfficeAgent).then_return(BOTH, DONE)
        began = await _paused(env)
        await env.app.sweep()
        [waiting] = _points("agboss.questions.waiting")
        assert waiting.value == len(began.pending) == 2


@pytest.mark.application.with_args(TreeApplication)
async def test_a_question_a_dropped_branch_withdraws_is_counted_as_withdrawn_by_the_flow(
    env: TestEnv, reader: InMemoryMetricReader
) -> None:
    pauses(env, AlphaAgent, "o1")
    fails_once_answered(env, FailingAgent, "o2")
    env.mock_of(tree_app.DeskHoldApprovalChannel)
    before = sum(n for (_, by), n in _decided_by_outcome("withdrawn").items() if by == "flow")
    paused = await env.app.execute(FailFastWorkflow, ORDERS, owner_id="u")
    await approve(env, pause_of(paused, "o2"))  # its branch fails: FailFast drops o1's
    after = sum(n for (_, by), n in _decided_by_outcome("withdrawn").items() if by == "flow")
    assert after == before + 1


@pytest.mark.application.with_args(OfficeApplication)
async def test_questions_a_cancelled_thread_closes_are_counted_as_cancelled_by_a_person(
    env: TestEnv, reader: InMemoryMetricReader
) -> None:
    before = _decided_by_outcome("cancelled").get(("book-expense-tool", "person"), 0)
    env.mock_llm(OfficeAgent).then_return(BOTH, DONE)
    began = await _paused(env)
    await env.app.cancel(began.thread_id, owner_id="user-1")
    after = _decided_by_outcome("cancelled")
    assert after[("book-expense-tool", "person")] == before + 1
    assert after[("return-deposit-tool", "person")] >= 1


def _decided_by_outcome(outcome: str) -> dict[tuple[str, str], int]:
    """How many questions ended as ``outcome`` so far, by (tool, who)."""
    counted: dict[tuple[str, str], int] = {}
    for point in _points("agboss.decisions"):
        attributes = point.attributes
        if attributes["agboss.outcome"] == outcome:
            key = (attributes["agboss.tool"], attributes["agboss.decided_by"])
            counted[key] = counted.get(key, 0) + int(point.value)
    return counted


@pytest.mark.application.with_args(OfficeApplication)
async def test_each_tool_run_is_measured_as_the_genai_conventions_measure_an_operation(
    env: TestEnv, reader: InMemoryMetricReader
) -> None:
    def runs() -> int:
        return sum(
            int(point.count)
            for point in _points("gen_ai.client.operation.duration")
            if point.attributes.get("gen_ai.tool.name") == "stamp-tool"
            and point.attributes.get("gen_ai.operation.name") == "execute_tool"
        )

    before = runs()
    env.mock_llm(OfficeAgent).then_return(call_tools(tool_call(StampTool, lease_id="L-7")), DONE)
    await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")  # approved at once: it runs
    assert runs() == before + 1
