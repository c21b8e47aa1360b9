"""Stranded trees (issue 55, point 3): a waiting tree whose version no running instance
serves waits, never failed, and is listed — `app.stranded()`, ``agboss executions
stranded`` — until a build that serves it runs. A running instance says so in the store when
it opens and with each sweep; one that closed serves nothing, and one that stopped without
closing is taken for gone once its word lapses."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from agboss import DtoValidationError, ExecutionStatus
from agboss.cli._main import cli
from agboss.engine.instance import SERVING_LASTS
from agboss.store.protocol import Served
from agboss.store.writes import KeepInstance
from tests.apps.desk import OfficeApplication
from tests.stores import STORE_KINDS, store_url
from tests.test_builds import OFFICE
from tests.test_builds_side_by_side import SECOND, _builds, _paused
from tests.test_pauses import BOTH


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_tree_no_running_instance_serves_is_listed_until_one_that_serves_it_runs(
    kind: str, tmp_path: Path
) -> None:
    async with store_url(kind, tmp_path) as url, _builds(url, SECOND) as [(new, _)]:
        async with _builds(url, OfficeApplication) as [(old, _)]:
            first = await _paused(old)
            await _paused(new)
            assert (await new.app.stranded()).entries == []  # each served by its build
        # The old build closed: its tree waits for a build that serves 1.0.0.
        [stranded] = (await new.app.stranded()).entries
        assert (stranded.execution_id, stranded.workflow, stranded.workflow_version) == (
            first.execution_id,
            OFFICE,
            "1.0.0",
        )
        assert stranded.status is ExecutionStatus.PAUSED
        assert stranded.workflow_fingerprint == first.workflow_fingerprint
        assert (await new.app.get(first.execution_id)).status is ExecutionStatus.PAUSED
        listed = await asyncio.to_thread(
            CliRunner().invoke,
            cli,
            ["executions", "stranded", "--app", APP, "--store", url, "--json"],
        )
        assert listed.exit_code == 0, listed.output
        [row] = [json.loads(line) for line in listed.output.splitlines()]
        assert (row["execution_id"], row["workflow_version"], row["status"]) == (
            first.execution_id,
            "1.0.0",
            "paused",
        )
        table = await asyncio.to_thread(
            CliRunner().invoke, cli, ["executions", "stranded", "--app", APP, "--store", url]
        )
        assert "1 stranded execution(s)" in table.output
        async with _builds(url, OfficeApplication):
            assert (await new.app.stranded()).entries == []  # served again


APP = "tests.apps.desk:OfficeApplication"


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_an_instance_that_stopped_without_closing_is_taken_for_gone_once_its_word_lapses(
    kind: str, tmp_path: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        async with _builds(url, OfficeApplication) as [(old, _)]:
            first = await _paused(old)
        async with _builds(url, SECOND) as [(new, _)]:
            second = await _paused(new)
            now = new.clock.now()
            # As an instance of the old build says it, before it is killed.
            served = (Served(OFFICE, ("1.0.0",)),)
            said = KeepInstance("killed", "office-application", served, now, now + SERVING_LASTS)
            await new.app.store.write([said])
            assert (await new.app.stranded()).entries == []
            await new.clock.advance(SERVING_LASTS - timedelta(seconds=1))  # its sweeps run
            assert (await new.app.stranded()).entries == []
            await new.clock.advance(timedelta(seconds=2))
            [stranded] = (await new.app.stranded()).entries
            assert stranded.execution_id == first.execution_id
            # The live instance's sweeps said it again before its own word lapsed.
            await new.clock.advance(3 * SERVING_LASTS)
            listed = [entry.execution_id for entry in (await new.app.stranded()).entries]
            assert listed == [first.execution_id]
            assert second.execution_id not in listed


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_stranded_trees_are_paged_oldest_first(kind: str, tmp_path: Path) -> None:
    async with store_url(kind, tmp_path) as url:
        async with _builds(url, OfficeApplication, replies=(BOTH,) * 3) as [(old, _)]:
            made = []
            for _ in range(3):
                made.append(await _paused(old))
                await old.clock.advance(timedelta(seconds=1))  # each began later
        async with _builds(url, SECOND) as [(new, _)]:
            first = await new.app.stranded(limit=2)
            assert first.next is not None
            rest = await new.app.stranded(limit=2, after=first.next)
            assert rest.next is None
            listed = [e.execution_id for e in (*first.entries, *rest.entries)]
            assert listed == [output.execution_id for output in made]
            with pytest.raises(DtoValidationError):
                await new.app.stranded(limit=0)
            with pytest.raises(DtoValidationError):
                await new.app.stranded(after="not-a-cursor")
            assert (await new.app.stranded(tenant_id="another")).entries == []
