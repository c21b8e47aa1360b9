"""Builds side by side (issue 55, point 3): several builds serve one store at once, as in a
rolling deploy. An instance moves only the trees whose version it serves — its own, and the
earlier versions its workflow continues (``@workflow(continues=["1.0.*"])``). An answer is
recorded by whichever instance receives it; the tree is moved by one that serves its version.
A tree whose version no instance serves waits, never failed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agboss import (
    AssemblyError,
    ConfigurationError,
    ExecutionOutput,
    ExecutionStatus,
    PendingPause,
    ToolHandler,
    VersionNotServedError,
    application,
    provide,
    start,
    tool,
    workflow,
)
from agboss.testing import TestClock, TestEnv, test_with
from tests.apps.desk import (
    BookExpenseTool,
    ButtonExpenseApprovalChannel,
    DeskDepositApprovalChannel,
    DeskRecorder,
    ExpenseApprovalChannel,
    LookUpTool,
    OfficeAgent,
    OfficeApplication,
    OfficeWorkflow,
    ReturnDepositTool,
    ShredTool,
    StampTool,
)
from tests.apps.office_parts import ExpenseDto, office_flow
from tests.apps.recorded import recording
from tests.apps.tree_app import (
    ChecksJoin,
    DeskHoldApprovalChannel,
    EachChildWorkflow,
    OrdersDto,
    OrdersStart,
    OrderWorkflow,
    SummaryFinish,
    TreeApplication,
    TreeRecorder,
)
from tests.stores import STORE_KINDS, store_url
from tests.test_builds import ALL_TOOLS, OFFICE, WiderLookUpTool, _office, _office_agent
from tests.test_pauses import BOTH, DONE, REQUEST
from tests.test_trees import ORDERS, item_pauses, pause_of
from tests.waiting import eventually

SECOND = _office(
    _office_agent("office-agent", prompt="Do it.", model="moonshotai/kimi-k2.6", tools=ALL_TOOLS),
    version="2.0.0",
)
"""The next build: a new version, which does not continue 1.0.0."""

DEPOSIT = "return-deposit L-7 as user-1"
EXPENSE = "book-expense taxi 12.5"


@asynccontextmanager
async def _builds(
    url: str, *applications: type[Any], replies: tuple[Any, ...] = (BOTH, DONE)
) -> AsyncIterator[list[tuple[TestEnv, DeskRecorder]]]:
    """Each build open on one store and one clock, with what its tools ran; its model says
    ``replies`` in turn. The clock starts now: a command run beside them reads the system's."""
    clock = TestClock(datetime.now(UTC))
    async with AsyncExitStack() as stack:
        opened = []
        for application in applications:
            recorded = DeskRecorder()
            env = await stack.enter_async_context(
                test_with(application, store=url, clock=clock, dependencies=recording(recorded))
            )
            script = env.mock_llm(OfficeAgent)
            for reply in replies:
                script.then_return(reply)
            opened.append((env, recorded))
        yield opened


async def _paused(env: TestEnv) -> ExecutionOutput:
    workflow_cls = env.app.assembly.workflows_by_name[OFFICE].cls
    output = await env.app.execute(workflow_cls, REQUEST, owner_id="user-1")
    assert output.status is ExecutionStatus.PAUSED
    return output


def _owners(output: ExecutionOutput) -> PendingPause:
    return next(pause for pause in output.pending if pause.pause_id is not None)


async def _answer_channels(env: TestEnv, output: ExecutionOutput) -> ExecutionOutput:
    [asked] = [pause for pause in output.pending if pause.pause_id is None]
    pause_id = await env.app.pause_id_of(asked.pause_ref)
    return await env.app.resume(pause_id, decision={"approved": True}, answered_by="desk")


async def _status(env: TestEnv, execution_id: str) -> ExecutionStatus:
    return (await env.app.get(execution_id)).status


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_two_builds_answer_each_others_questions_and_each_tree_moves_on_its_own_build(
    kind: str, tmp_path: Path
) -> None:
    async with (
        store_url(kind, tmp_path) as url,
        _builds(url, OfficeApplication, SECOND) as [
            (old, old_ran),
            (new, new_ran),
        ],
    ):
        first, second = await _paused(old), await _paused(new)
        assert (first.workflow_version, second.workflow_version) == ("1.0.0", "2.0.0")
        # The new build records the old tree's answer, and leaves the tree to the old build.
        left = await new.app.resume(
            _owners(first).pause_id or "", decision={"approved": True}, owner_id="user-1"
        )
        # Read as it is: the old build, told of the answer, may be moving it already.
        assert left.status in (ExecutionStatus.PAUSED, ExecutionStatus.RUNNING)
        answered = _owners(first).pause_ref
        assert answered not in [pause.pause_ref for pause in left.pending]  # no longer waits
        await eventually(lambda: EXPENSE in old_ran.runs, "the old build moving its own tree")
        # And the other way round.
        await old.app.resume(
            _owners(second).pause_id or "", decision={"approved": True}, owner_id="user-1"
        )
        await eventually(lambda: EXPENSE in new_ran.runs, "the new build moving its own tree")
        await _answer_channels(new, first)
        await _answer_channels(old, second)

        async def both_completed() -> bool:
            return {
                await _status(old, first.execution_id),
                await _status(new, second.execution_id),
            } == {ExecutionStatus.COMPLETED}

        await eventually(both_completed, "each build completing its own tree")
        # Every tool ran once, on the build that began its tree.
        assert sorted(old_ran.runs) == sorted(new_ran.runs) == sorted([DEPOSIT, EXPENSE])


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_tree_whose_version_no_instance_serves_waits_never_failed(
    kind: str, tmp_path: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        async with _builds(url, OfficeApplication) as [(old, _)]:
            first = await _paused(old)
        async with _builds(url, SECOND) as [(new, new_ran)]:
            await new.app.resume(
                _owners(first).pause_id or "", decision={"approved": True}, owner_id="user-1"
            )
            assert await new.app.recover() == []  # its sweep leaves it
            await new.app.sweep()
            assert await _status(new, first.execution_id) is ExecutionStatus.PAUSED
            assert new_ran.runs == []
        async with _builds(url, OfficeApplication) as [(old, old_ran)]:
            [moved] = await old.app.recover()  # the answer waited for a build that serves it
            assert moved.execution_id == first.execution_id
            assert old_ran.runs == [EXPENSE]


@workflow(name=OFFICE, version="1.1.0", flow=office_flow(OfficeAgent), continues=["1.0.*"])
class ContinuingWorkflow: ...


@application(
    name="office-application",
    workflows=[ContinuingWorkflow],
    channels=[DeskDepositApprovalChannel, ButtonExpenseApprovalChannel],
    dependencies=[provide(DeskRecorder)],
)
class ContinuingApplication:
    """The next build, which moves the trees of 1.0.* too."""


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_build_moves_the_trees_of_the_versions_its_workflow_continues(
    kind: str, tmp_path: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        async with _builds(url, OfficeApplication) as [(old, _)]:
            first = await _paused(old)
        async with _builds(url, ContinuingApplication, replies=(DONE,)) as [(new, new_ran)]:
            assert new.app.assembly.serves(OFFICE, "1.0.0")
            assert not new.app.assembly.serves(OFFICE, "1.00")
            moved = await new.app.resume(
                _owners(first).pause_id or "", decision={"approved": True}, owner_id="user-1"
            )
            assert moved.status is ExecutionStatus.PAUSED  # on its other question
            assert new_ran.runs == [EXPENSE]
            done = await _answer_channels(new, first)
            assert done.status is ExecutionStatus.COMPLETED
            assert done.workflow_version == "1.0.0"  # it finished as what it began as


async def test_continues_takes_exact_versions_and_prefixes_ending_in_a_star() -> None:
    with pytest.raises(ConfigurationError, match=r"continues=\['1.0.\*'\]"):
        workflow(name=OFFICE, version="2", flow=office_flow(OfficeAgent), continues="1.0.*")

    @workflow(name=OFFICE, version="2", flow=office_flow(OfficeAgent), continues=["1.*.0", " "])
    class Starred: ...

    @application(name="starred-application", workflows=[Starred])
    class StarredApplication: ...

    with pytest.raises(AssemblyError) as refused:
        async with test_with(StarredApplication):
            pass
    said = [(v.rule, v.component) for v in refused.value.violations]
    assert said.count(("workflow.continues", OFFICE)) == 2
    assert "may only end an entry" in str(refused.value)


async def test_a_build_serves_its_own_version_and_no_other_by_default() -> None:
    async with test_with(OfficeApplication) as env:
        assert env.app.assembly.serves(OFFICE, "1.0.0")
        assert not env.app.assembly.serves(OFFICE, "1.0.1")
        assert not env.app.assembly.serves("another-workflow", "1.0.0")
    assert OfficeWorkflow is env.app.assembly.workflows_by_name[OFFICE].cls


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_failed_tree_of_a_version_not_served_is_not_retried_and_nothing_is_written(
    kind: str, tmp_path: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        async with _builds(url, OfficeApplication, replies=()) as [(old, _)]:
            workflow_cls = old.app.assembly.workflows_by_name[OFFICE].cls
            with pytest.raises(Exception):  # noqa: B017, PT011 - the script ran out: any failure
                await old.app.execute(workflow_cls, REQUEST, owner_id="user-1")
            [failed] = (await old.app.failed()).entries
        async with _builds(url, SECOND) as [(new, _)]:
            with pytest.raises(VersionNotServedError) as refused:
                await new.app.retry(failed.execution_id)
            assert refused.value.code == "definition.version-not-served"
            assert "version 1.0.0 of office-workflow" in refused.value.message
            assert [each.execution_id for each in (await new.app.failed()).entries] == [
                failed.execution_id
            ]


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_any_build_cancels_a_tree_it_does_not_serve(kind: str, tmp_path: Path) -> None:
    async with store_url(kind, tmp_path) as url:
        async with _builds(url, OfficeApplication) as [(old, _)]:
            first = await _paused(old)
        async with _builds(url, SECOND) as [(new, _)]:
            cancelled = await new.app.cancel(first.thread_id)
            assert cancelled is not None
            assert await _status(new, first.execution_id) is ExecutionStatus.CANCELLED


class BookedDto(BaseModel):
    status: str
    reference: str = ""


@tool(
    name="book-expense-tool",
    description="Books an expense, with the booking's reference",
    input=ExpenseDto,
    output=BookedDto,
    channel=ExpenseApprovalChannel,
)
class ReferencedBookExpenseTool(ToolHandler[ExpenseDto, BookedDto]):
    async def run(self, args: ExpenseDto) -> BookedDto:
        return BookedDto(status=f"booked {args.purpose}", reference="B-1")


def _continuing(tools: list[type], channels: list[type]) -> type:
    """A build of 1.1.0 that continues 1.0.*, its agent with ``tools``."""
    office_agent = _office_agent("office-agent", prompt="Do it.", model="m", tools=tools)

    @workflow(name=OFFICE, version="1.1.0", flow=office_flow(office_agent), continues=["1.0.*"])
    class Workflow: ...

    @application(
        name="office-application",
        workflows=[Workflow],
        channels=channels,
        dependencies=[provide(DeskRecorder)],
    )
    class Application: ...

    return Application


BOTH_CHANNELS = [DeskDepositApprovalChannel, ButtonExpenseApprovalChannel]
LACKS_THE_EXPENSE_TOOL = _continuing(
    [ReturnDepositTool, StampTool, ShredTool, LookUpTool], [DeskDepositApprovalChannel]
)
CHANGED_THE_EXPENSE_TOOL = _continuing(
    [ReturnDepositTool, ReferencedBookExpenseTool, StampTool, ShredTool, LookUpTool],
    BOTH_CHANNELS,
)
WITHOUT_A_TOOL_NOTHING_WAITS_ON = _continuing(
    [ReturnDepositTool, BookExpenseTool, StampTool, LookUpTool], BOTH_CHANNELS
)
"""A call made before the tree waited replays through its tool's name: none may go."""
CHANGED_WHAT_NOTHING_WAITS_ON = _continuing(
    [ReturnDepositTool, BookExpenseTool, StampTool, ShredTool, WiderLookUpTool], BOTH_CHANNELS
)


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_build_that_continues_a_version_whose_waiting_calls_it_lacks_is_refused(
    kind: str, tmp_path: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        async with _builds(url, OfficeApplication) as [(old, _)]:
            first = await _paused(old)
        refusals = []
        for build in (
            LACKS_THE_EXPENSE_TOOL,
            CHANGED_THE_EXPENSE_TOOL,
            WITHOUT_A_TOOL_NOTHING_WAITS_ON,
        ):
            with pytest.raises(AssemblyError) as refused:
                async with test_with(build, store=url):
                    pass
            [violation] = refused.value.violations
            assert (violation.rule, violation.component) == ("workflow.cannot-continue", OFFICE)
            assert "it continues version 1.0.0" in violation.message
            refusals.append(violation.message)
        assert (
            "the tool book-expense-tool of the agent office-agent missing (1 tree)" in (refusals[0])
        )
        assert "role:expense-approval-channel" not in refusals[0]  # its tool says it all
        assert "tool:book-expense-tool changed (1 tree)" in refusals[1]
        assert "tool:shred-tool removed (1 tree)" in refusals[2]
        assert "tool:book-expense-tool" not in refusals[0]  # said once, as its call's
        # A change to what no waiting call needs continues the tree.
        async with _builds(url, CHANGED_WHAT_NOTHING_WAITS_ON, replies=(DONE,)) as [(new, ran)]:
            await new.app.resume(
                _owners(first).pause_id or "", decision={"approved": True}, owner_id="user-1"
            )
            assert ran.runs == [EXPENSE]


@workflow(
    name="each-child-workflow",
    version="2",
    flow=[
        start(OrdersStart)
        .returns(OrdersDto)
        .to_each_workflow(OrderWorkflow, over="orders")
        .join(ChecksJoin)
        .to_finish(SummaryFinish)
    ],
)
class NextEachChildWorkflow: ...


@application(
    name="tree-application",
    workflows=[NextEachChildWorkflow],
    channels=[DeskHoldApprovalChannel],
    dependencies=[provide(TreeRecorder)],
)
class NextTreeApplication:
    """The next build of the tree application: its root workflow at version 2."""


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_an_answer_in_a_child_is_left_to_a_build_that_serves_its_roots_version(
    kind: str, tmp_path: Path
) -> None:
    clock = TestClock(datetime.now(UTC))
    old_ran, new_ran = TreeRecorder(), TreeRecorder()
    async with (
        store_url(kind, tmp_path) as url,
        test_with(TreeApplication, store=url, clock=clock, dependencies=recording(old_ran)) as old,
        test_with(
            NextTreeApplication, store=url, clock=clock, dependencies=recording(new_ran)
        ) as new,
    ):
        for order in ("o0", "o1", "o2"):
            item_pauses(old, order)
        began = await old.app.execute(EachChildWorkflow, ORDERS, owner_id="u")
        assert began.status is ExecutionStatus.PAUSED
        # The child's pause is answered on the next build, whose model is not scripted: had it
        # moved the tree, the item's agent would have failed it.
        left = await new.app.answer(
            pause_of(began, "o0"), decision={"approved": True}, owner_id="u"
        )
        assert left.execution_id == began.execution_id

        async def moved() -> bool:
            # The tool runs before its pass commits, and a read during the pass may see the
            # tree as it was: it is read until it waits again on the two other orders.
            found = await old.app.get(began.execution_id)
            waiting = {pause.ask.arguments["order_id"] for pause in found.pending}
            return (
                "ship o0" in old_ran.runs
                and found.status is ExecutionStatus.PAUSED
                and waiting == {"o1", "o2"}
            )

        await eventually(moved, "the old build moving its tree")
        assert (old_ran.runs, new_ran.runs) == (["ship o0"], [])
