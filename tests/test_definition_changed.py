"""Code changed under a waiting question: an error with a code, never a crash (issue 53, item
8). A tree paused on one build of the application, then a later build opened on the same store
that lacks what the tree waits on — a tool removed from its agent, the workflow renamed: an
answer is refused with `DefinitionChangedError` naming what is missing, the pause keeps
waiting, the tree is not failed, and the sweep leaves it alone: with one warning per tree when
the build serves the tree's version but lacks a tool, without reading it when the build does not
serve it (issue 55)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agboss import (
    DefinitionChangedError,
    ExecutionOutput,
    ExecutionStatus,
    PauseAnswerer,
    PauseStatus,
    agent,
    application,
    provide,
    workflow,
)
from agboss.testing import test_with
from tests.apps import desk
from tests.apps.desk import (
    DeskDepositApprovalChannel,
    DeskRecorder,
    LookUpTool,
    OfficeAgent,
    OfficeApplication,
    OfficeWorkflow,
    ReturnDepositTool,
    ShredTool,
    StampTool,
)
from tests.apps.office_parts import office_flow
from tests.apps.recorded import recording
from tests.stores import STORE_KINDS, store_url
from tests.test_pauses import BOTH, REQUEST


@agent(
    name="office-agent",
    description="Returns deposits (expenses went elsewhere)",
    prompt="Do what is asked.",
    model="moonshotai/kimi-k2.6",
    tools=[ReturnDepositTool, StampTool, ShredTool, LookUpTool],  # no book-expense-tool
)
class LaterOfficeAgent: ...


@workflow(name="office-workflow", version="1.1.0", flow=office_flow(LaterOfficeAgent))
class LaterOfficeWorkflow: ...


@application(
    name="office-application",
    workflows=[LaterOfficeWorkflow],
    channels=[DeskDepositApprovalChannel],
    dependencies=[provide(DeskRecorder)],
)
class WithoutTheToolApplication: ...


@workflow(
    name="office-workflow",
    version="1.1.0",
    flow=office_flow(LaterOfficeAgent),
    continues=["1.0.*"],  # it moves the trees of 1.0.0: its sweep tries them
)
class ContinuingOfficeWorkflow: ...


@application(
    name="office-application",
    workflows=[ContinuingOfficeWorkflow],
    channels=[DeskDepositApprovalChannel],
    dependencies=[provide(DeskRecorder)],
)
class ContinuingWithoutTheToolApplication:
    """Opened before a tree of 1.0.0 waits on the tool it lacks (`App.create` refuses it
    after), as in a rolling deploy: an old instance still begins trees."""


@workflow(name="front-office-workflow", version="2.0.0", flow=office_flow(OfficeAgent))
class RenamedWorkflow: ...


@application(
    name="office-application",
    workflows=[RenamedWorkflow],
    channels=[DeskDepositApprovalChannel, desk.ButtonExpenseApprovalChannel],
    dependencies=[provide(DeskRecorder)],
)
class RenamedWorkflowApplication: ...


@pytest.fixture(params=STORE_KINDS)
async def url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    async with store_url(request.param, tmp_path) as made:
        yield made


async def _paused(url: str) -> tuple[ExecutionOutput, str, str]:
    """The first build's tree, paused on the expense (its owner's) and the deposit (a channel
    pause); the expense's answer recorded there, left for an instance to move."""
    async with test_with(OfficeApplication, store=url) as env:
        env.mock_llm(OfficeAgent).then_return(BOTH)
        channel = env.mock_of(DeskDepositApprovalChannel)
        result = await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
        owners = next(p.pause_id for p in result.pending if p.pause_id is not None)
        deposit = str(channel.send.call_args.args[0].pause_id)
        return result, owners, deposit


async def _status(app: object, pause_id: str) -> PauseStatus:
    from agboss import App

    assert isinstance(app, App)
    return (await app.describe_pause(pause_id)).status


async def test_a_removed_tool_refuses_the_answer_with_what_is_missing_and_the_pause_waits(
    url: str,
) -> None:
    result, owners, _ = await _paused(url)
    async with test_with(WithoutTheToolApplication, store=url) as later:
        with pytest.raises(DefinitionChangedError) as caught:
            await later.app.resume(owners, decision={"approved": True}, owner_id="user-1")
        assert caught.value.code == "definition.changed"
        assert "'book-expense-tool'" in caught.value.message
        assert "'office-agent'" in caught.value.message
        assert caught.value.hint
        assert await _status(later.app, owners) is PauseStatus.PENDING
        assert (await later.app.get(result.execution_id)).status is ExecutionStatus.PAUSED


async def test_an_answer_the_sweep_cannot_take_leaves_the_tree_waiting_with_one_warning(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with test_with(ContinuingWithoutTheToolApplication, store=url) as later:
        result, owners, _ = await _paused(url)  # begun by an old instance, after it opened
        async with test_with(OfficeApplication, store=url) as first:  # answered there
            await first.app.answer(
                owners, decision={"approved": True}, owner_id="user-1", move=False
            )
        caplog.set_level(logging.WARNING)
        for _ in range(3):
            await later.app.sweep()
        found = await later.app.get(result.execution_id)
        assert found.status is ExecutionStatus.PAUSED  # not failed, not left running
        assert await _status(later.app, owners) is PauseStatus.RESOLVED  # kept for a build
    said = [r for r in caplog.records if getattr(r, "event", "") == "run.definition-changed"]
    assert len(said) == 1  # once per tree, not once per sweep
    assert "book-expense-tool" in said[0].getMessage()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    # The build that has the tool takes the answer as if nothing happened.
    recorded = DeskRecorder()
    async with test_with(OfficeApplication, store=url, dependencies=recording(recorded)) as first:
        first.mock_llm(OfficeAgent).then_return()  # nothing more asked of the model yet
        await first.app.sweep()
        moved = await first.app.get(result.execution_id)
    assert moved.status is ExecutionStatus.PAUSED  # the deposit still waits
    assert recorded.runs[0].startswith("book-expense")


async def test_a_renamed_workflow_refuses_answers_and_the_tree_is_not_failed(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    result, owners, deposit = await _paused(url)
    async with test_with(OfficeApplication, store=url) as first:
        await first.app.answer(owners, decision={"approved": True}, owner_id="user-1", move=False)
    caplog.set_level(logging.WARNING)
    async with test_with(RenamedWorkflowApplication, store=url) as later:
        with pytest.raises(DefinitionChangedError) as caught:
            await later.app.resume(deposit, decision={"approved": True}, answered_by="m-17")
        assert "'office-workflow'" in caught.value.message
        for _ in range(2):
            await later.app.sweep()
        found = await later.app.get(result.execution_id)
        assert found.status is ExecutionStatus.PAUSED
        assert [p.answered_by for p in found.pending] == [PauseAnswerer.CHANNEL]
        assert await _status(later.app, deposit) is PauseStatus.PENDING
    # Its sweep does not serve the tree (no workflow of that name): it never reads it.
    said = [r for r in caplog.records if getattr(r, "event", "") == "run.definition-changed"]
    assert said == []
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
