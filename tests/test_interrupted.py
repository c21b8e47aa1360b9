"""A tool's call cut off mid-run is known to be in doubt, and its ``on_interrupted`` says what
happens (issue 38): before the handler of a tool that must not run twice is called, the call's
intent is committed; a process killed after that and before the result leaves an attempt with
no result, which the instance
that recovers the tree finds — ``FAIL`` fails the step with `ToolInterruptedError` and runs
nothing; ``RERUN`` (the default, which needs no intent) runs the tool again with the same
idempotency key.

Each trial runs the app in a child process (`tests.interrupted_app`) that dies with SIGKILL
inside the tool, then recovers the tree in this one, on both stores."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agboss import (
    AgentFailedError,
    App,
    ExecutionStatus,
    ToolInterruptedError,
    WorkflowFinishTextDto,
)
from tests.interrupted_app import open_app
from tests.stores import STORE_KINDS, store_url

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "runs.jsonl"
    monkeypatch.setenv("AGBOSS_TEST_RUNS", str(path))
    return path


def ran(runs: Path) -> list[dict[str, Any]]:
    if not runs.exists():
        return []
    return [json.loads(line) for line in runs.read_text().splitlines()]


def spawn(url: str, *args: str, **env: str) -> subprocess.Popen[bytes]:
    """The app in a child process (`tests.interrupted_app`), with ``env`` besides ours."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.interrupted_app", url, *args],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


async def in_child(url: str, *args: str, die: bool) -> int:
    """Runs the app in a child process; its exit code (``-SIGKILL`` when it died in the
    tool)."""
    child = spawn(url, *args, AGBOSS_DIE_IN_TOOL="1" if die else "0")
    for _ in range(6000):
        code = child.poll()
        if code is not None:
            if code not in (0, -signal.SIGKILL):
                raise AssertionError(child.stderr.read() if child.stderr else code)
            return code
        await asyncio.sleep(0.01)
    child.kill()
    raise AssertionError("the child process did not finish within 60 s")


async def recovered(url: str) -> tuple[App, str]:
    """A new instance, once the dead holder's lease expired, that recovered the tree."""
    await asyncio.sleep(0.7)  # the child's lease (0.6 s) expires
    app = await open_app(url)
    [root] = await app.store.executions.find_roots("default", "t-1")  # running: cut off
    await app.recover()
    return app, root.execution_id


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_rerun_tool_cut_off_mid_call_runs_again_with_the_same_key(
    kind: str, tmp_path: Path, runs: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        assert await in_child(url, "pay-again-tool", die=True) == -signal.SIGKILL
        app, root = await recovered(url)
        try:
            done = await app.get(root)
            assert done.status is ExecutionStatus.COMPLETED
            assert isinstance(done.output, WorkflowFinishTextDto)
            assert "paid inv-7" in done.output.text
            again = await app.get(root, record=True)
            assert again.record is not None
            assert [s.kind for s in again.record.steps] == ["model-call", "tool-run", "model-call"]
        finally:
            await app.close()
    first, second = ran(runs)  # today's at-least-once, for a tool that deduplicates by key
    assert first["key"] == second["key"]
    assert first["pid"] != second["pid"]


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_fail_tool_cut_off_mid_call_fails_its_step_and_never_runs_again(
    kind: str, tmp_path: Path, runs: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        assert await in_child(url, "pay-tool", die=True) == -signal.SIGKILL
        app, root = await recovered(url)
        try:
            with pytest.raises(ToolInterruptedError) as failed:
                await app.get(root)
            assert failed.value.code == "tool.interrupted"
            assert isinstance(failed.value, AgentFailedError)
            assert (failed.value.tool, failed.value.attempt) == ("pay-tool", 1)
            assert "pay-tool's call may have run" in failed.value.message
            await app.recover()  # a second recovery changes nothing
        finally:
            await app.close()
    assert len(ran(runs)) == 1


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_an_approved_fail_tool_cut_off_after_the_answer_is_not_paid_twice(
    kind: str, tmp_path: Path, runs: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        app = await open_app(url)
        try:
            paused = await app.execute(
                _workflow(app), {"text": "approved-pay-tool"}, owner_id="u-1", thread_id="t-1"
            )
            [pending] = paused.pending
            assert pending.pause_id is not None
        finally:
            await app.close()
        code = await in_child(url, "approved-pay-tool", pending.pause_id, die=True)
        assert code == -signal.SIGKILL
        app, root = await recovered(url)
        try:
            with pytest.raises(ToolInterruptedError):
                await app.get(root)
        finally:
            await app.close()
    assert len(ran(runs)) == 1


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_call_that_was_not_cut_off_is_not_in_doubt(
    kind: str, tmp_path: Path, runs: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        assert await in_child(url, "pay-tool", die=False) == 0
        app = await open_app(url)
        try:
            assert await app.store.executions.find_roots("default", "t-1") == []  # completed
            assert await app.recover() == []
        finally:
            await app.close()
    assert len(ran(runs)) == 1


def _workflow(app: App) -> type[Any]:
    return app.assembly.workflows_by_name["payment-workflow"].cls


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_holder_stalled_mid_call_and_taken_over_records_no_second_run(
    kind: str, tmp_path: Path, runs: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        child = spawn(url, "pay-tool", AGBOSS_STOP_IN_TOOL="1")
        try:
            for _ in range(3000):  # until it stopped itself inside the tool
                if ran(runs):
                    break
                await asyncio.sleep(0.01)
            assert len(ran(runs)) == 1
            app, root = await recovered(url)  # past its lease: taken over
            try:
                with pytest.raises(ToolInterruptedError):
                    await app.get(root)
                os.kill(child.pid, signal.SIGCONT)  # the old holder comes back
                for _ in range(3000):
                    if child.poll() is not None:
                        break
                    await asyncio.sleep(0.01)
                assert child.poll() is not None
                with pytest.raises(ToolInterruptedError):  # its late result was fenced off
                    await app.get(root)
            finally:
                await app.close()
        finally:
            if child.poll() is None:
                os.kill(child.pid, signal.SIGCONT)
                child.kill()
    assert len(ran(runs)) == 1
