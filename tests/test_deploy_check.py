"""A deploy check before traffic moves (issue 55, point 5): every waiting tree the next build
could not continue — its version neither run nor continued, its own version defined
otherwise, a version it continues whose trees wait on what it lacks — listed with why, by
`check_deploy` and ``agboss deploy-check`` (exit 1 if any). The build checked moves nothing
and says nothing in the store."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from agboss import (
    App,
    DeployCheck,
    ExecutionOutput,
    ExecutionStatus,
    FunctionProvider,
    check_deploy,
)
from agboss.cli._main import cli
from agboss.models import ChatRequest, ChatResponse
from agboss.records import NOT_SERVED
from tests.apps.desk import OfficeApplication
from tests.stores import STORE_KINDS, store_url
from tests.test_builds import REWORDED, SAME_VERSION_WITHOUT_EXPENSES
from tests.test_builds_side_by_side import (
    CHANGED_THE_EXPENSE_TOOL,
    CHANGED_WHAT_NOTHING_WAITS_ON,
    LACKS_THE_EXPENSE_TOOL,
    SECOND,
    _builds,
    _paused,
)
from tests.test_definition_changed import RenamedWorkflowApplication


async def _waiting(url: str) -> ExecutionOutput:
    async with _builds(url, OfficeApplication) as [(old, _)]:
        return await _paused(old)


def _said(checked: DeployCheck) -> list[tuple[str, str, str]]:
    return [(each.workflow, each.version, each.rule) for each in checked.versions]


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_the_check_names_each_kind_of_change_that_would_strand_a_tree(
    kind: str, tmp_path: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        first = await _waiting(url)
        for build in (OfficeApplication, REWORDED, CHANGED_WHAT_NOTHING_WAITS_ON):
            checked = await check_deploy(build, store=url)
            assert checked.passed, checked
            assert (checked.versions, checked.trees, checked.complete) == ([], [], True)
        expected = {
            SECOND: ("office-workflow", "1.0.0", NOT_SERVED, "runs version 2.0.0, not 1.0.0"),
            RenamedWorkflowApplication: (
                "office-workflow",
                "1.0.0",
                NOT_SERVED,
                "has no workflow office-workflow",
            ),
            SAME_VERSION_WITHOUT_EXPENSES: (
                "office-workflow",
                "1.0.0",
                "workflow.changed-without-version",
                "tool:book-expense-tool removed",
            ),
            LACKS_THE_EXPENSE_TOOL: (
                "office-workflow",
                "1.0.0",
                "workflow.cannot-continue",
                "the tool book-expense-tool of the agent office-agent missing (1 tree)",
            ),
            CHANGED_THE_EXPENSE_TOOL: (
                "office-workflow",
                "1.0.0",
                "workflow.cannot-continue",
                "tool:book-expense-tool changed (1 tree)",
            ),
        }
        for build, (workflow, version, rule, words) in expected.items():
            checked = await check_deploy(build, store=url)
            assert not checked.passed
            assert _said(checked) == [(workflow, version, rule)], build
            assert words in checked.versions[0].message
            [tree] = checked.trees
            assert (tree.execution_id, tree.tenant_id, tree.workflow_version) == (
                first.execution_id,
                "default",
                "1.0.0",
            )
            assert tree.status is ExecutionStatus.PAUSED
        # Looking moved nothing, and no build checked says it serves anything.
        async with _builds(url, OfficeApplication) as [(old, ran)]:
            assert (await old.app.get(first.execution_id)).status is ExecutionStatus.PAUSED
            assert ran.runs == []
            served = await old.app.store.builds.serving(old.clock.now())
            assert [(s.workflow, s.versions) for s in served] == [("office-workflow", ("1.0.0",))]


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_agboss_deploy_check_exits_1_listing_what_would_be_stranded(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with store_url(kind, tmp_path) as url:
        first = await _waiting(url)

        def check(target: str, *more: str) -> tuple[int, str]:
            done = CliRunner().invoke(cli, ["deploy-check", "--app", target, "--store", url, *more])
            return done.exit_code, done.output

        code, said = await asyncio.to_thread(
            check, "tests.test_builds_side_by_side:SECOND", "--json"
        )
        assert code == 1, said
        shown = json.loads(said)
        assert (shown["passed"], shown["complete"]) == (False, True)
        assert [v["rule"] for v in shown["versions"]] == [NOT_SERVED]
        assert [t["execution_id"] for t in shown["trees"]] == [first.execution_id]
        code, said = await asyncio.to_thread(check, "tests.test_builds_side_by_side:SECOND")
        assert code == 1
        assert "1 waiting tree(s) this build cannot continue" in said
        assert first.execution_id in said
        code, said = await asyncio.to_thread(check, "tests.apps.desk:OfficeApplication")
        assert (code, "continues every waiting tree" in said) == (0, True), said
        # A function that makes the App: its App.create opens the build to be looked at.
        monkeypatch.setenv("AGBOSS_TEST_DEPLOY_STORE", url)
        code, said = await asyncio.to_thread(check, "tests.test_deploy_check:make_second", "--json")
        assert code == 1, said
        assert [t["execution_id"] for t in json.loads(said)["trees"]] == [first.execution_id]
        code, said = await asyncio.to_thread(
            check, "tests.apps.desk:OfficeApplication", "--limit", "0"
        )
        assert code == 1
        assert "limit=0 must be a whole number from 1 to 10000" in said


def _never_called(request: ChatRequest) -> ChatResponse:
    raise AssertionError("a deploy check calls no model")


async def make_second() -> App:
    """The next build, made as a deployment's code makes it."""
    return await App.create(
        SECOND,
        store=os.environ["AGBOSS_TEST_DEPLOY_STORE"],
        providers=[FunctionProvider(_never_called)],
    )
