"""A first hour in five minutes (issue 57, point 5): the quickstart's one file runs with one
command, its question's id is shown by the development channel, and it is answered from curl,
the command line and Python — each in a process of its own, as a newcomer does it; the
development channel is refused where the instance runs in production."""

from __future__ import annotations

import asyncio
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from agboss import App, ConfigurationError, DevelopmentChannel, FunctionProvider
from examples.quickstart import Quickstart, RefundApprovers, scripted
from tests.test_examples import example_env

AGBOSS = Path(sys.executable).parent / "agboss"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def _quickstart(folder: Path, port: int) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """The quickstart running in ``folder``, and the id its development channel showed."""
    running = subprocess.Popen(
        [sys.executable, "-m", "examples.quickstart", "--port", str(port)],
        cwd=folder,
        env=example_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert running.stderr is not None
        shown = ""
        for line in running.stderr:  # the channel's lines, as they come
            shown += line
            found = re.search(r"pause id: ([0-9a-f]{32})", shown)
            if found:
                yield running, found.group(1)
                break
        else:
            pytest.fail(f"the quickstart showed no question: {shown}")
    finally:
        if running.poll() is None:
            running.kill()
        running.wait(timeout=10)


def _finished(running: subprocess.Popen[str]) -> str:
    out, _ = running.communicate(timeout=60)
    assert running.returncode == 0, out
    return out


async def _answered_over_http(port: int, pause_id: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
        for _ in range(100):  # the server starts just after the question is shown
            try:
                return await http.post(
                    "/agboss/answers",
                    json={"pause_id": pause_id, "decision": {"approved": True}},
                )
            except httpx.ConnectError:
                await asyncio.sleep(0.05)
    pytest.fail("the quickstart's server never answered")


async def test_the_quickstart_is_answered_with_curl(tmp_path: Path) -> None:
    port = _free_port()
    with _quickstart(tmp_path, port) as (running, pause_id):
        answered = await _answered_over_http(port, pause_id)
        assert answered.status_code == 202, answered.text
        assert answered.json()["responder"] == "developer"
        out = await asyncio.to_thread(_finished, running)
    assert "completed:" in out
    assert "refunded 120.50 EUR on order 1042" in out


def test_the_quickstart_is_answered_from_the_command_line_and_from_python(
    tmp_path: Path,
) -> None:
    for how, folder in (("cli", tmp_path / "cli"), ("python", tmp_path / "python")):
        folder.mkdir()
        with _quickstart(folder, _free_port()) as (running, pause_id):
            if how == "cli":
                command = [str(AGBOSS), "resume", pause_id, "--app", "examples.quickstart:create"]
                command += ["--answered-by", "me", "--approve"]
            else:  # what docs/quickstart.md shows
                code = (
                    "import asyncio\n"
                    "from examples.quickstart import create\n"
                    "async def answer():\n"
                    "    async with await create() as app:\n"
                    f"        await app.answer({pause_id!r}, decision={{'approved': True}},"
                    " answered_by='me', move=False)\n"
                    "asyncio.run(answer())\n"
                )
                command = [sys.executable, "-c", code]
            said = subprocess.run(
                command, cwd=folder, env=example_env(), capture_output=True, text=True, timeout=60
            )
            assert said.returncode == 0, said.stdout + said.stderr
            out = _finished(running)  # its loop moves what another process recorded
        assert "refunded 120.50 EUR on order 1042" in out, how


async def test_the_development_channel_is_refused_in_production(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    given = {
        "store": tmp_path / "quickstart.db",
        "providers": [FunctionProvider(scripted)],
        "channels": {RefundApprovers: DevelopmentChannel},
    }
    with pytest.raises(ConfigurationError, match="runs in production") as refused:
        await App.create(Quickstart, environment="production", **given)
    assert "refund-approval-channel" in refused.value.message
    monkeypatch.setenv("AGBOSS_ENVIRONMENT", "production")
    with pytest.raises(ConfigurationError, match="runs in production"):
        await App.create(Quickstart, **given)  # said by the environment variable
    async with await App.create(Quickstart, environment="staging", **given) as app:  # it wins
        assert app.assembly.spec.name == "quickstart-application"
