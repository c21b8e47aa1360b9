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
from urllib.parse import urlsplit

import pytest

from agboss import (
    AgbossError,
    App,
    ExecutionStatus,
    PauseKind,
    ToolInterruptedError,
    WorkflowFinishTextDto,
)
from tests.apps.interrupted_app import open_app
from tests.stores import POSTGRES_URL, needs_postgres, store_url

pytestmark = [needs_postgres, pytest.mark.alone]


_LOCAL = {"", "localhost", "127.0.0.1", "::1"}


def cluster_of(url: str | None, listed: str) -> tuple[str, str] | None:
    """The version and name of the cluster ``url`` names, among ``pg_lsclusters -h``'s lines:
    a local one on the URL's port; ``None`` when the URL names a server elsewhere, or one no
    listed cluster serves — never another cluster than the tests use."""
    if url is None:
        return None
    where = urlsplit(url)
    if (where.hostname or "") not in _LOCAL:
        return None
    port = str(where.port or 5432)
    for line in listed.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[2] == port:
            return fields[0], fields[1]
    return None


def _cluster() -> tuple[str, str] | None:
    """The cluster the test URL names, if this process may restart it."""
    if shutil.which("pg_lsclusters") is None or shutil.which("pg_ctlcluster") is None:
        return None
    if os.geteuid() != 0:
        return None
    listed = subprocess.run(["pg_lsclusters", "-h"], capture_output=True, text=True, check=False)
    return cluster_of(POSTGRES_URL, listed.stdout)


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


def test_only_the_cluster_the_test_url_names_is_restarted() -> None:
    listed = (
        "14 main 5432 online postgres /var/lib/postgresql/14/main /var/log/a.log\n"
        "15 main 5433 online postgres /var/lib/postgresql/15/main /var/log/b.log\n"
    )
    assert cluster_of("postgresql://u:p@127.0.0.1:5433/db", listed) == ("15", "main")
    assert cluster_of("postgresql://u:p@localhost/db", listed) == ("14", "main")
    assert cluster_of("postgresql://u:p@127.0.0.1:6543/db", listed) is None  # none serves it
    assert cluster_of("postgresql://u:p@db.example:5432/db", listed) is None  # another host
    assert cluster_of(None, listed) is None


async def test_a_live_instance_answers_at_once_after_its_server_restarted(
    url: str, tmp_path: Path
) -> None:
    app = await open_app(url, lease_ttl=timedelta(milliseconds=600))
    try:
        # Several pooled connections, idle when the server restarts under them.
        await asyncio.gather(*(app.pending(owner_id=f"u-{n}") for n in range(4)))
        assert CLUSTER is not None
        version, name = CLUSTER
        await asyncio.to_thread(
            subprocess.run, ["pg_ctlcluster", version, name, "restart"], check=True
        )
        # The server answers again: no request may fail on a connection it ended.
        for _ in range(6):
            await asyncio.gather(*(app.pending(owner_id=f"u-{n}") for n in range(4)))
        await app.sweep()
        workflow = app.assembly.workflows_by_name["payment-workflow"].cls
        started = await app.execute(workflow, {"text": "asked-pay-tool"}, owner_id="u-1")
        assert started.status is ExecutionStatus.PAUSED
    finally:
        await app.close()
