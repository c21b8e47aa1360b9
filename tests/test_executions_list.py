"""Execution trees listed by status (issue 57, point 4): `app.executions(status=…, owner_id=…,
workflow=…, since=…, limit=…, after=…)` newest change first by keyset, each with what it waits
on, masked like the inbox; ``agboss executions list``; ``GET /executions`` for a signed-in
owner. On both stores, through the public API."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta

import httpx
import pytest
from click.testing import CliRunner
from starlette.requests import Request

from agboss import DtoValidationError, ExecutionStatus, PauseAnswerer
from agboss.cli._main import cli
from agboss.testing import TestEnv
from agboss.web import Caller, pause_router
from tests.apps.desk import OfficeAgent, OfficeApplication, OfficeWorkflow
from tests.test_builds_side_by_side import _answer_channels, _owners
from tests.test_pauses import BOTH, DONE, REQUEST
from tests.test_web import serve

pytestmark = pytest.mark.application.with_args(OfficeApplication)


_SECOND = timedelta(seconds=1)


async def _trees(env: TestEnv) -> tuple[str, str, str]:
    """Three trees: one completed (user-1's), then one paused on its two questions
    (user-1's), then one paused of user-2's — in the order they last changed."""
    env.mock_llm(OfficeAgent).then_return(BOTH, DONE, BOTH, BOTH)
    done = await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
    owners = _owners(done).pause_id
    assert owners is not None
    await env.app.resume(owners, decision={"approved": True}, owner_id="user-1")
    finished = await _answer_channels(env, await env.app.get(done.execution_id))
    assert finished.status is ExecutionStatus.COMPLETED
    await env.clock.advance(_SECOND)
    paused = await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
    await env.clock.advance(_SECOND)
    other = await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-2")
    return done.execution_id, paused.execution_id, other.execution_id


async def test_trees_are_listed_by_status_newest_change_first_with_what_they_wait_on(
    env: TestEnv,
) -> None:
    done, paused, other = await _trees(env)
    every = (await env.app.executions()).entries
    assert [entry.execution_id for entry in every] == [other, paused, done]
    waiting = (await env.app.executions(status=ExecutionStatus.PAUSED, owner_id="user-1")).entries
    [entry] = waiting
    assert entry.execution_id == paused
    assert entry.request == {"text": REQUEST.text}
    tools = {(p.ask.tool, p.answered_by) for p in entry.waiting_on}
    assert tools == {
        ("book-expense-tool", PauseAnswerer.THREAD_OWNER),
        ("return-deposit-tool", PauseAnswerer.CHANNEL),
    }
    # A channel's question is listed without its id, as everywhere it leaves its channel.
    assert [p.pause_id for p in entry.waiting_on if p.answered_by is PauseAnswerer.CHANNEL] == [
        None
    ]
    [completed] = (await env.app.executions(status="completed")).entries
    assert (completed.execution_id, completed.waiting_on) == (done, [])
    assert (await env.app.executions(workflow="no-such-workflow")).entries == []
    since = (await env.app.executions(since=env.clock.now())).entries
    assert [entry.execution_id for entry in since] == [other]


async def test_a_page_ends_where_the_next_begins(env: TestEnv) -> None:
    done, paused, other = await _trees(env)
    first = await env.app.executions(limit=2)
    assert [entry.execution_id for entry in first.entries] == [other, paused]
    assert first.next is not None
    rest = await env.app.executions(limit=2, after=first.next)
    assert [entry.execution_id for entry in rest.entries] == [done]
    assert rest.next is None


async def test_a_bad_filter_is_refused_with_what_to_pass(env: TestEnv) -> None:
    for arguments in ({"status": "sleeping"}, {"limit": 0}, {"after": "nonsense"}):
        with pytest.raises(DtoValidationError):
            await env.app.executions(**arguments)  # type: ignore[arg-type]
    with pytest.raises(DtoValidationError) as naive:
        await env.app.executions(since=datetime(2026, 1, 1))
    assert "timezone-aware" in naive.value.message


async def test_the_command_line_and_the_router_list_a_signed_in_owners_trees(
    env: TestEnv, env_store: str
) -> None:
    _, paused, _ = await _trees(env)
    command = [
        "executions",
        "list",
        "--status",
        "paused",
        "--owner",
        "user-1",
        "--json",
        "--app",
        "tests.apps.desk:OfficeApplication",
        "--store",
        env_store,
    ]
    listed = await asyncio.to_thread(CliRunner().invoke, cli, command)
    assert listed.exit_code == 0, listed.output
    [line] = listed.output.splitlines()
    shown = json.loads(line)
    assert (shown["execution_id"], shown["status"]) == (paused, "paused")
    assert len(shown["waiting_on"]) == 2

    async def signed_in(request: Request) -> Caller | None:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        return Caller(owner_id="user-1") if token == "tok-1" else None

    server, task, port = await serve(pause_router(env.app, authenticate=signed_in, page=False))
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            headers = {"Authorization": "Bearer tok-1"}
            response = await http.get("/executions?status=paused", headers=headers)
            bad = await http.get("/executions?status=sleeping", headers=headers)
    finally:
        server.should_exit = True
        await task
    assert response.status_code == 200, response.text
    [entry] = response.json()["entries"]  # user-2's tree is not theirs to see
    assert entry["execution_id"] == paused
    assert {question["tool"] for question in entry["waiting_on"]} == {
        "book-expense-tool",
        "return-deposit-tool",
    }
    assert "pause_id" not in response.text  # questions are named by their reference
    assert bad.status_code == 422
