"""A PostgreSQL server restarted while a resume's tool runs (issue 38): the tool's result cannot
be journaled — every connection died with the server — so the call may have run, and what
happens next is its tool's ``on_interrupted``: ``ASK`` asks, ``FAIL`` fails, ``RERUN`` runs it
again with the same key. No tool that must not run twice runs twice.

The server is really restarted (``pg_ctlcluster … restart``, from inside the tool), so these
tests need the local cluster `.ci/postgres.sh` starts, and the rights to restart it; elsewhere
they are skipped.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from agboss import (
    AgbossError,
    App,
    ExecutionStatus,
    PauseKind,
    ToolInterruptedError,
    WorkflowFinishTextDto,
)
from tests.interrupted_app import open_app
from tests.stores import needs_postgres, store_url

pytestmark = needs_postgres


def _cluster() -> tuple[str, str] | None:
    """The local cluster's version and name, if this process may restart it."""
    if shutil.which("pg_lsclusters") is None or shutil.which("pg_ctlcluster") is None:
        return None
    if os.geteuid() != 0:
        return None
    listed = subprocess.run(["pg_lsclusters", "-h"], capture_output=True, text=True, check=False)
    fields = listed.stdout.split()
    return (fields[0], fields[1]) if len(fields) >= 2 else None


CLUSTER = _cluster()


@pytest.fixture
async def url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[str]:
    if CLUSTER is None:
        pytest.skip("the local PostgreSQL cluster cannot be restarted from here")
    monkeypatch.setenv("AGBOSS_TEST_RUNS", str(tmp_path / "runs.jsonl"))
    monkeypatch.setenv("AGBOSS_RESTART_POSTGRES", " ".join(CLUSTER))
    async with store_url("postgres", tmp_path) as made:
        yield made


def ran(tmp_path: Path) -> list[dict[str, Any]]:
    runs = tmp_path / "runs.jsonl"
    return [json.loads(line) for line in runs.read_text().splitlines()] if runs.exists() else []


async def restarted_mid_tool(url: str, tool_name: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Executes the payment workflow with ``tool_name``, approves its call, and restarts the
    server inside the tool; the root, once the tree's lease expired."""
    app = await open_app(url, lease_ttl=timedelta(milliseconds=600))
    try:
        workflow = app.assembly.workflows_by_name["payment-workflow"].cls
        monkeypatch.setenv("AGBOSS_RESTART_IN_TOOL", "0")
        started = await app.execute(workflow, {"text": tool_name}, owner_id="u-1", thread_id="t-1")
        monkeypatch.setenv("AGBOSS_RESTART_IN_TOOL", "1")
        [approval] = started.pending
        assert approval.pause_id is not None
        with pytest.raises(AgbossError):  # the tool's journal row could not be written
            await app.resume(approval.pause_id, decision={"approved": True}, owner_id="u-1")
        monkeypatch.setenv("AGBOSS_RESTART_IN_TOOL", "0")
    finally:
        await app.close()
    await asyncio.sleep(0.7)  # the lease the cut-off pass held expires
    return started.execution_id


async def recovered(url: str) -> App:
    app = await open_app(url)
    await app.recover()
    return app


async def test_an_asked_tool_whose_server_restarted_mid_call_is_asked_about_not_run_twice(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = await restarted_mid_tool(url, "asked-pay-tool", monkeypatch)
    app = await recovered(url)
    try:
        [question] = (await app.get(root)).pending
        assert question.ask.kind is PauseKind.INTERRUPTED
        assert question.pause_id is not None
        done = await app.resume(
            question.pause_id, decision={"approved": False, "reason": "it paid"}, owner_id="u-1"
        )
        assert done.status is ExecutionStatus.COMPLETED
        assert isinstance(done.output, WorkflowFinishTextDto)
        assert "was not run again" in done.output.text
    finally:
        await app.close()
    assert len(ran(tmp_path)) == 1


async def test_a_fail_tool_whose_server_restarted_mid_call_fails_and_is_not_run_again(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = await restarted_mid_tool(url, "approved-pay-tool", monkeypatch)
    app = await recovered(url)
    try:
        with pytest.raises(ToolInterruptedError):
            await app.get(root)
    finally:
        await app.close()
    assert len(ran(tmp_path)) == 1


async def test_a_rerun_tool_whose_server_restarted_mid_call_runs_again_with_the_same_key(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = await open_app(url, lease_ttl=timedelta(milliseconds=600))
    try:
        workflow = app.assembly.workflows_by_name["payment-workflow"].cls
        monkeypatch.setenv("AGBOSS_RESTART_IN_TOOL", "1")
        with pytest.raises(AgbossError):
            await app.execute(workflow, {"text": "pay-again-tool"}, owner_id="u-1", thread_id="t-1")
        monkeypatch.setenv("AGBOSS_RESTART_IN_TOOL", "0")
    finally:
        await app.close()
    await asyncio.sleep(0.7)
    app = await open_app(url)
    try:
        [root] = await app.store.executions.find_roots("default", "t-1")  # running: cut off
        await app.recover()
        assert (await app.get(root.execution_id)).status is ExecutionStatus.COMPLETED
    finally:
        await app.close()
    runs = ran(tmp_path)
    # Once more at most, by the first instance: its listener, connecting again after the
    # restart, sweeps, and may take the tree once its 600 ms lease expired, before it closes.
    assert len(runs) in (2, 3), runs
    assert {run["key"] for run in runs} == {runs[0]["key"]}  # each run with the same key
