"""A Slack click is never shown as recorded before it is (issue 53, item 3): the instance that
got the click is killed in the window between its acknowledgement and its commit, or between
its commit and the message's update — on both stores, the other instance in this process."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from agboss import App, ExecutionOutput, ExecutionStatus, FunctionProvider, PauseStatus
from agboss.slack import slack_router
from agboss.store.writes import AcquireLease, write_one
from agboss.testing.slack import FakeMessage, FakeSlack
from tests.apps import slack_app
from tests.apps.recorded import recording
from tests.apps.slack_app import FINANCE, RefundWorkflow
from tests.slack_instance import LEASE, SIGNING_SECRET, answerer, model
from tests.stores import STORE_KINDS, store_url
from tests.test_slack import REQUEST, _buttons
from tests.test_web import serve
from tests.waiting import eventually

ROOT = Path(__file__).resolve().parent.parent
RECORDING = "Recording your answer"


@dataclass
class Two:
    """The instance that gets the click (a process, to be killed), and the one that lives."""

    url: str
    slack: FakeSlack
    app: App
    child: subprocess.Popen[bytes]
    child_route: str
    asked: ExecutionOutput
    recorded: slack_app.SlackRecorder
    """What this instance's tools ran (the child's are its own)."""

    def kill(self) -> None:
        self.child.send_signal(signal.SIGKILL)
        self.child.wait(timeout=10)

    def message(self) -> FakeMessage:
        return self.slack.messages(FINANCE)[0]

    async def status(self) -> PauseStatus:
        token = _buttons(self.message())[0]["value"]
        found = await self.app.describe_pause(await self.app.pause_id_of(_ref(token)))
        return found.status


def _ref(value: str) -> str:
    return str(json.loads(value)["r"])


@contextlib.asynccontextmanager
async def two(kind: str, folder: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Two]:
    recorded = slack_app.SlackRecorder()
    with FakeSlack() as slack:
        monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)
        monkeypatch.setenv("SLACK_API_URL", slack.base_url)
        async with store_url(kind, folder) as url:
            app = await App.create(
                slack_app.SlackApplication,
                store=url,
                providers=[FunctionProvider(model)],
                lease_ttl=LEASE,
                dependencies=recording(recorded),
            )
            port_file = folder / "port"
            child = subprocess.Popen(
                [sys.executable, "-m", "tests.slack_instance", url, str(port_file)],
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])},
            )
            try:
                asked = await app.execute(RefundWorkflow, REQUEST, owner_id="ada")
                assert asked.status is ExecutionStatus.PAUSED
                await eventually(port_file.exists, "the other instance serving", seconds=30)
                route = f"http://127.0.0.1:{port_file.read_text()}/slack/interactions"
                yield Two(url, slack, app, child, route, asked, recorded)
            finally:
                if child.poll() is None:
                    child.kill()
                    child.wait(timeout=10)
                await app.close()


@contextlib.contextmanager
def sqlite_held(url: str) -> Iterator[None]:
    """The SQLite store's write lock held by another process's connection: a store slow
    past the route's acknowledgement."""
    connection = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        connection.execute("ROLLBACK")
        connection.close()


@contextlib.asynccontextmanager
async def postgres_held(url: str) -> AsyncIterator[None]:
    """Every pause row locked by another connection: the answer's commit waits for it. When
    it lets go, a session still waiting for those rows is ended first, as the server ends one
    whose client it finds gone: a transaction the killed instance had sent whole would
    otherwise commit after its death (the case of the next test, recorded and then shown by
    another instance)."""
    from psycopg import AsyncConnection

    base, _, schema = url.partition("?schema=")
    async with await AsyncConnection.connect(base) as connection:
        await connection.execute(f"SET search_path TO {schema}")
        await connection.execute("SELECT 1 FROM pauses FOR UPDATE")
        try:
            yield
        finally:
            async with await AsyncConnection.connect(base, autocommit=True) as other:
                await other.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE %s = ANY(pg_blocking_pids(pid))",
                    (connection.info.backend_pid,),
                )
            await connection.rollback()


@contextlib.asynccontextmanager
async def store_held(kind: str, url: str) -> AsyncIterator[None]:
    if kind == "sqlite":
        with sqlite_held(url):
            yield
    else:
        async with postgres_held(url):
            yield


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_click_whose_instance_dies_before_its_commit_tells_the_clicker_to_click_again(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with two(kind, tmp_path, monkeypatch) as pair:
        async with store_held(kind, pair.url):
            began = time.monotonic()
            clicked = await pair.slack.click(
                pair.child_route, pair.message(), "Approve", user="U0MANAGER"
            )
            acknowledged = time.monotonic() - began
            assert clicked.status_code == 200
            assert acknowledged < 3.0  # within Slack's 3 seconds
            # Told before the acknowledgement: the process may stop any moment after it.
            [told] = pair.slack.ephemerals
            assert told["user"] == "U0MANAGER"
            assert told["text"].startswith(RECORDING)
            assert "still shows its buttons" in told["text"]
            pair.kill()  # before the store let its commit through
        assert await pair.status() is PauseStatus.PENDING  # nothing recorded …
        assert pair.message().buttons()[:2] == ["Approve", "Reject"]  # … and it shows so
        assert pair.message().updates == 0
        # The click again, on the instance that lives, answers it.
        routes = slack_router(pair.app, signing_secret=SIGNING_SECRET, answerer=answerer)
        server, task, port = await serve(Starlette(routes=[Mount("/slack", routes)]))
        try:
            url = f"http://127.0.0.1:{port}/slack/interactions"
            await pair.slack.click(url, pair.message(), "Approve", user="U0MANAGER")
            await eventually(lambda: pair.message().updates == 1, "the answer shown")
        finally:
            server.should_exit = True
            await task
        assert "*Approved* by <@U0MANAGER>" in pair.message().text_of_blocks()

        async def done() -> bool:
            found = await pair.app.get(pair.asked.execution_id)
            return found.status is ExecutionStatus.COMPLETED

        await eventually(done, "the tree moved on")
        assert pair.recorded.runs == ["refund o-1 40.0"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_an_answer_whose_instance_dies_after_its_commit_is_moved_and_shown_by_another(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with two(kind, tmp_path, monkeypatch) as pair:
        # The tree busy elsewhere (a holder that will not come back), and Slack hanging on
        # the message's update: the instance records the answer, and dies before it moves
        # the tree or shows the answer.
        held = AcquireLease(pair.asked.execution_id, "gone", timedelta(seconds=2))
        assert await write_one(pair.app.store, held) is not None
        pair.slack.stall("chat.update")
        clicked = await pair.slack.click(
            pair.child_route, pair.message(), "Approve", user="U0MANAGER"
        )
        assert clicked.status_code == 200

        async def recorded() -> bool:
            return await pair.status() is not PauseStatus.PENDING

        await eventually(recorded, "the answer recorded")
        pair.kill()
        pair.slack.release()
        assert pair.message().updates == 0  # the dead instance never showed it

        async def moved() -> bool:
            await pair.app.sweep()  # the living instance's recovery, at once
            found = await pair.app.get(pair.asked.execution_id)
            return found.status is ExecutionStatus.COMPLETED and pair.message().updates == 1

        await eventually(moved, "the tree moved and shown by the other instance", seconds=15)
        assert pair.recorded.runs == ["refund o-1 40.0"]  # once, here: the dead one never ran it
        shown = pair.message().text_of_blocks()
        assert "*Approved* by manager-17" in shown
        assert pair.message().buttons() == []
