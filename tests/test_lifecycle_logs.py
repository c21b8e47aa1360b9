"""Operators follow an execution through `logging`: started, paused, answered, completed,
failed, cancelled at INFO, each step at DEBUG — with ``extra=`` fields, never a pause id or a
value of the execution (issue 37, item 8; docs/executions.md, "Logs")."""

from __future__ import annotations

import logging

import pytest

from agboss import AgentFailedError, WorkflowStartTextDto
from agboss.testing import TestEnv, invalid_answer
from tests.apps.desk import OfficeAgent, OfficeApplication, OfficeWorkflow
from tests.test_round_trips import ASK, DONE

STANDARD_FIELDS = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}
"""What every log record has, whoever logs it."""

REQUEST = WorkflowStartTextDto(text="Book the taxi for Ada Lovelace")


pytestmark = pytest.mark.application.with_args(OfficeApplication)


def events(caplog: pytest.LogCaptureFixture, level: int = logging.DEBUG) -> list[str]:
    return [
        str(getattr(record, "event", ""))
        for record in caplog.records
        if record.name == "agboss" and record.levelno >= level and hasattr(record, "event")
    ]


def of(caplog: pytest.LogCaptureFixture, event: str) -> logging.LogRecord:
    [record] = [r for r in caplog.records if getattr(r, "event", None) == event]
    return record


async def test_a_cycle_logs_its_life_at_info_and_its_steps_at_debug(
    env: TestEnv, caplog: pytest.LogCaptureFixture
) -> None:
    env.mock_llm(OfficeAgent).then_return(ASK, DONE)
    with caplog.at_level(logging.DEBUG, logger="agboss"):
        paused = await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
        [pending] = paused.pending
        assert pending.pause_id is not None
        await env.app.resume(pending.pause_id, decision={"approved": True}, owner_id="user-1")
    life = events(caplog, logging.INFO)
    assert life == ["run.started", "run.paused", "run.answered", "run.completed"]
    assert events(caplog).count("run.step") >= 3  # two model calls and the tool
    started = of(caplog, "run.started")
    assert started.levelno == logging.INFO
    assert started.execution_id == paused.execution_id  # type: ignore[attr-defined]
    assert started.workflow == "office-workflow"  # type: ignore[attr-defined]
    assert started.tenant_id == "default"  # type: ignore[attr-defined]
    paused_line = of(caplog, "run.paused")
    assert paused_line.pending == 1  # type: ignore[attr-defined]
    tool, channel = pending.ask.tool, pending.channel
    assert f"{tool} through {channel}" in paused_line.getMessage()  # what waits, by name
    answered = of(caplog, "run.answered")
    assert answered.answered_by == "user-1"  # type: ignore[attr-defined]
    assert "approved" in answered.getMessage()
    assert tool in answered.getMessage()
    assert channel in answered.getMessage()
    assert of(caplog, "run.completed").getMessage().startswith("run.completed: execution ")
    for record in caplog.records:  # no pause id, no value of the execution
        # Its message and what agboss added: logging's own fields (the times) are numbers
        # that may hold any digits.
        added = {k: v for k, v in record.__dict__.items() if k not in STANDARD_FIELDS}
        text = record.getMessage() + str(added)
        assert pending.pause_id not in text
        assert "Lovelace" not in text
        assert "12.5" not in text


async def test_at_info_no_step_is_logged(env: TestEnv, caplog: pytest.LogCaptureFixture) -> None:
    env.mock_llm(OfficeAgent).then_return(DONE)
    with caplog.at_level(logging.INFO, logger="agboss"):
        await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
    assert events(caplog) == ["run.started", "run.completed"]


async def test_a_failure_is_logged_with_its_code(
    env: TestEnv, caplog: pytest.LogCaptureFixture
) -> None:
    env.mock_llm(OfficeAgent).then_return(*[invalid_answer(nonsense=True)] * 5)
    with caplog.at_level(logging.INFO, logger="agboss"), pytest.raises(AgentFailedError):
        await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
    failed = of(caplog, "run.failed")
    assert failed.code == "agent.failed"  # type: ignore[attr-defined]
    assert "agent.failed" in failed.getMessage()


async def test_a_cancellation_is_logged(env: TestEnv, caplog: pytest.LogCaptureFixture) -> None:
    env.mock_llm(OfficeAgent).then_return(ASK)
    paused = await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
    with caplog.at_level(logging.INFO, logger="agboss"):
        await env.app.cancel(paused.thread_id)
    cancelled = of(caplog, "run.cancelled")
    assert cancelled.thread_id == paused.thread_id  # type: ignore[attr-defined]
    assert cancelled.count == 1  # type: ignore[attr-defined]
