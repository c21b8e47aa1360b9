"""An execution knows the build it runs under (issue 55, point 1): when a tree begins, each of
its executions records its workflow's version and a fingerprint of what its journal depends
on — the flow's graph, the agents, their tools and the tools' input and output schemas, the
roles — and `app.get` and the record show them. A later build on the same store shows each
tree as it began, whatever that build defines.

A changed definition must say so (point 2): a build whose workflow changed while its version
did not is refused by `App.create` while executions of that version wait, naming what changed."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from agboss import (
    App,
    AssemblyError,
    ExecutionOutput,
    ExecutionStatus,
    ToolHandler,
    agent,
    application,
    provide,
    tool,
    workflow,
)
from agboss.testing import TestEnv, test_with
from tests.apps.desk import (
    BookExpenseTool,
    ButtonExpenseApprovalChannel,
    DeskDepositApprovalChannel,
    DeskDoneDto,
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
from tests.apps.tree_app import EachChildWorkflow, TreeApplication
from tests.stores import STORE_KINDS, store_url
from tests.test_pauses import BOTH, DONE, REQUEST
from tests.test_trees import ORDERS, item_pauses

pytestmark = pytest.mark.application.with_args(TreeApplication)  # the `env` tests'

OFFICE = "office-workflow"


def _office_agent(name: str, *, prompt: str, model: str, tools: list[type]) -> type:
    @agent(name=name, description="The office", prompt=prompt, model=model, tools=tools)
    class Agent: ...

    return Agent


def _office(agent_cls: type, version: str = "1.0.0") -> type:
    """A build of the office application around ``agent_cls``."""

    @workflow(name=OFFICE, version=version, flow=office_flow(agent_cls))
    class Workflow: ...

    @application(
        name="office-application",
        workflows=[Workflow],
        channels=[DeskDepositApprovalChannel, ButtonExpenseApprovalChannel],
        dependencies=[provide(DeskRecorder)],
    )
    class Application: ...

    return Application


ALL_TOOLS = [ReturnDepositTool, BookExpenseTool, StampTool, ShredTool, LookUpTool]

REWORDED = _office(
    _office_agent(
        "office-agent",
        prompt="Be brief; do what is asked.",  # a prompt and a model the journal never reads
        model="another/model",
        tools=ALL_TOOLS,
    )
)

SAME_VERSION_WITHOUT_EXPENSES = _office(
    _office_agent(
        "office-agent",
        prompt="Do what is asked.",
        model="moonshotai/kimi-k2.6",
        tools=[ReturnDepositTool, StampTool, ShredTool, LookUpTool],
    )
)

WITHOUT_EXPENSES = _office(
    _office_agent(
        "office-agent",
        prompt="Do what is asked.",
        model="moonshotai/kimi-k2.6",
        tools=[ReturnDepositTool, StampTool, ShredTool, LookUpTool],
    ),
    version="1.1.0",
)


class WiderLookUpDto(BaseModel):
    lease_id: str
    note: str = ""


@tool(
    name="look-up-tool",
    description="Looks a lease up, with a note",
    input=WiderLookUpDto,
    output=DeskDoneDto,
)
class WiderLookUpTool(ToolHandler[WiderLookUpDto, DeskDoneDto]):
    async def run(self, args: WiderLookUpDto) -> DeskDoneDto:
        return DeskDoneDto(status=args.lease_id)


WIDER_LOOK_UP = _office(
    _office_agent(
        "office-agent",
        prompt="Do what is asked.",
        model="moonshotai/kimi-k2.6",
        tools=[ReturnDepositTool, BookExpenseTool, StampTool, ShredTool, WiderLookUpTool],
    )
)


async def _parts(application: type) -> dict[str, str]:
    async with test_with(application) as env:
        return dict(env.app.assembly.workflows_by_name[OFFICE].parts)


def _changed(before: dict[str, str], after: dict[str, str]) -> set[str]:
    return {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}


def _fingerprint(app: App, workflow: str = OFFICE) -> str:
    return app.assembly.workflows_by_name[workflow].fingerprint


async def _paused(url: str) -> tuple[ExecutionOutput, str]:
    """A tree of the first build, paused on its two questions; that build's fingerprint."""
    async with test_with(OfficeApplication, store=url) as first:
        first.mock_llm(OfficeAgent).then_return(BOTH)
        result = await first.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
        assert result.status is ExecutionStatus.PAUSED
        return result, _fingerprint(first.app)


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_an_execution_shows_the_version_and_fingerprint_of_the_build_it_began_under(
    kind: str, tmp_path: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        result, began = await _paused(url)
        assert (result.workflow_version, result.workflow_fingerprint) == ("1.0.0", began)
        async with test_with(OfficeApplication, store=url) as first:
            found = await first.app.get(result.execution_id, record=True)
            assert (found.workflow_version, found.workflow_fingerprint) == ("1.0.0", began)
            assert found.record is not None
            assert found.record.workflow_fingerprint == began
        async with test_with(WITHOUT_EXPENSES, store=url) as later:
            assert _fingerprint(later.app) != began
            found = await later.app.get(result.execution_id, record=True)
            assert (found.workflow_version, found.workflow_fingerprint) == ("1.0.0", began)
            assert found.record is not None
            assert found.record.workflow_fingerprint == began


async def test_a_change_the_journal_does_not_read_keeps_the_fingerprint() -> None:
    assert await _parts(REWORDED) == await _parts(OfficeApplication)


async def test_a_tool_removed_changes_the_fingerprint_and_the_parts_say_which() -> None:
    before, after = await _parts(OfficeApplication), await _parts(WITHOUT_EXPENSES)
    changed = {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}
    assert changed == {
        "agent:office-agent",
        "tool:book-expense-tool",
        "role:expense-approval-channel",
    }


async def test_a_tools_input_schema_changed_changes_its_part_alone() -> None:
    before, after = await _parts(OfficeApplication), await _parts(WIDER_LOOK_UP)
    assert _changed(before, after) == {"tool:look-up-tool"}


async def test_a_child_execution_shows_its_own_workflows_build(env: TestEnv) -> None:
    for order in ("o0", "o1", "o2"):
        item_pauses(env, order)
    result = await env.app.execute(EachChildWorkflow, ORDERS, owner_id="u")
    assert result.status is ExecutionStatus.PAUSED
    root = _fingerprint(env.app, "each-child-workflow")
    assert result.workflow_fingerprint == root
    found = await env.app.get(result.execution_id, record=True)
    assert found.record is not None
    [child_workflow] = {child.workflow for child in found.record.children}
    child = _fingerprint(env.app, child_workflow)
    assert child != root
    assert {c.workflow_fingerprint for c in found.children} == {child}
    assert {c.workflow_fingerprint for c in found.record.children} == {child}


_PRINTED = """
from agboss.testing import test_with
from tests.apps.desk import OfficeApplication
import asyncio

async def main():
    async with test_with(OfficeApplication) as env:
        print(env.app.assembly.workflows_by_name["office-workflow"].fingerprint)

asyncio.run(main())
"""


def _printed() -> subprocess.CompletedProcess[str]:
    root = Path(__file__).resolve().parent.parent
    return subprocess.run(
        [sys.executable, "-c", _PRINTED], cwd=root, capture_output=True, text=True, timeout=60
    )


async def test_a_build_has_the_same_fingerprint_in_every_process() -> None:
    printed = [await asyncio.to_thread(_printed) for _ in range(2)]
    assert [done.returncode for done in printed] == [0, 0], printed[0].stderr
    async with test_with(OfficeApplication) as env:
        here = _fingerprint(env.app)
    assert [done.stdout.strip() for done in printed] == [here, here]


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_build_that_changed_a_waiting_versions_definition_is_refused_naming_what(
    kind: str, tmp_path: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        result, _ = await _paused(url)
        with pytest.raises(AssemblyError) as refused:
            async with test_with(SAME_VERSION_WITHOUT_EXPENSES, store=url):
                pass
        [violation] = refused.value.violations
        assert (violation.rule, violation.component) == (
            "workflow.changed-without-version",
            OFFICE,
        )
        assert "its version stayed 1.0.0" in violation.message
        assert "1 execution(s)" in violation.message
        assert "agent:office-agent changed" in violation.message
        assert "tool:book-expense-tool removed" in violation.message
        assert "role:expense-approval-channel removed" in violation.message
        # A new version, or a change the journal does not read, opens beside the waiting tree.
        for later in (WITHOUT_EXPENSES, REWORDED):
            async with test_with(later, store=url) as opened:
                found = await opened.app.get(result.execution_id)
                assert found.status is ExecutionStatus.PAUSED
        # Once the tree ended on the build that began it, the changed definition opens.
        async with test_with(OfficeApplication, store=url) as first:
            first.mock_llm(OfficeAgent).then_return(DONE)
            for pause in result.pending:
                if pause.pause_id is not None:  # the thread owner's
                    done = await first.app.resume(
                        pause.pause_id, decision={"approved": True}, owner_id="user-1"
                    )
                else:  # a channel's, by the id its channel was given
                    pause_id = await first.app.pause_id_of(pause.pause_ref)
                    done = await first.app.resume(
                        pause_id, decision={"approved": True}, answered_by="desk"
                    )
            assert done.status is ExecutionStatus.COMPLETED
        async with test_with(SAME_VERSION_WITHOUT_EXPENSES, store=url) as opened:
            assert _fingerprint(opened.app) != result.workflow_fingerprint
