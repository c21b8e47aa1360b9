"""PostgreSQL: a connection lost while a transaction commits is an outcome unknown, never
"nothing was written" (issue 37, item 5).

A proxy on loopback between the store and a real server passes a ``COMMIT`` on, lets the
server commit it, and cuts the connection before its answer comes back: the answer was
recorded, and the caller is told so — `AnswerNotMovedError` once the store is read back, not a
`StoreUnavailableError` that a retry would meet with `NotPausedError`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import timedelta
from urllib.parse import urlsplit, urlunsplit

import pytest

from agboss import (
    AnswerNotMovedError,
    ExecutionStatus,
    PauseKind,
    PauseStatus,
    WorkflowStartTextDto,
)
from agboss.testing import TestEnv
from tests.apps.desk import DeskRecorder, OfficeAgent, OfficeApplication, OfficeWorkflow
from tests.stores import POSTGRES_URL, needs_postgres
from tests.test_round_trips import ASK, DONE

pytestmark = [needs_postgres, pytest.mark.application.with_args(OfficeApplication)]


class CommitCutter:
    """A TCP proxy to the server that, once armed, cuts the first connection that sends a
    ``COMMIT`` just after the server received it."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.armed = False
        self.cut = 0
        self._tasks: set[asyncio.Task[None]] = set()

    async def _pipe(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        up: bool,
        peer: asyncio.StreamWriter,
        dropping: asyncio.Event,
    ) -> None:
        """Passes one direction of a connection on; ``dropping``: the connection's answers
        are no longer passed on."""
        try:
            while chunk := await reader.read(65536):
                cutting = up and self.armed and b"COMMIT" in chunk
                if cutting:
                    self.armed = False
                    dropping.set()  # nothing the server says reaches the client again
                if not up and dropping.is_set():
                    continue
                writer.write(chunk)
                await writer.drain()
                if cutting:
                    await asyncio.sleep(0.3)  # the server commits; its answer is not passed on
                    self.cut += 1
                    peer.close()
                    writer.close()
                    return
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_connection(self.host, self.port)
        dropping = asyncio.Event()
        up = asyncio.ensure_future(self._pipe(client_r, server_w, True, client_w, dropping))
        down = asyncio.ensure_future(self._pipe(server_r, client_w, False, server_w, dropping))
        await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
        for task in (up, down):
            task.cancel()
        client_w.close()
        server_w.close()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[int]:
        def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.ensure_future(self._serve(reader, writer))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        try:
            yield server.sockets[0].getsockname()[1]
        finally:
            server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)


@pytest.fixture
def kind() -> str:
    return "postgres"  # a server's connection, cut


@pytest.fixture
def cutter() -> CommitCutter:
    assert POSTGRES_URL is not None
    parts = urlsplit(POSTGRES_URL)
    return CommitCutter(parts.hostname or "127.0.0.1", parts.port or 5432)


@pytest.fixture
async def env_store(schema: str, cutter: CommitCutter) -> AsyncIterator[str]:
    """The test's schema, reached through the cutter."""
    assert POSTGRES_URL is not None
    parts = urlsplit(POSTGRES_URL)
    async with cutter.running() as port:
        netloc = f"{parts.username}:{parts.password}@127.0.0.1:{port}"
        yield urlunsplit(parts._replace(netloc=netloc, query=f"schema={schema}"))


@pytest.fixture(autouse=True)
def scripted(env: TestEnv) -> None:
    env.mock_llm(OfficeAgent).then_return(ASK, DONE)


async def test_an_answer_whose_commit_lost_its_connection_is_said_to_be_recorded(
    env: TestEnv, cutter: CommitCutter, recorded: DeskRecorder
) -> None:
    app = env.app
    result = await app.execute(
        OfficeWorkflow, WorkflowStartTextDto(text="Book the taxi"), owner_id="user-1"
    )
    [pending] = result.pending
    assert pending.pause_id is not None
    cutter.armed = True
    with pytest.raises(AnswerNotMovedError):
        await app.resume(pending.pause_id, decision={"approved": True}, owner_id="user-1")
    assert cutter.cut == 1
    pause = await app.store.pauses.find_by_tenant_id_and_pause_id("default", pending.pause_id)
    assert pause is not None
    assert pause.status is PauseStatus.RESOLVED  # the server had committed it
    await env.clock.advance(timedelta(minutes=2))  # the sweep moves it
    # The call's intent was committed with the answer: the tool may have run for all the
    # sweep can tell (it did not), so the person is asked whether to run it (issue 38).
    rested = await app.get(result.execution_id)
    [question] = rested.pending
    assert question.ask.kind is PauseKind.INTERRUPTED
    assert question.pause_id is not None
    done = await app.resume(question.pause_id, decision={"approved": True}, owner_id="user-1")
    assert done.status is ExecutionStatus.COMPLETED
    assert recorded.runs == ["book-expense taxi 12.5"]
