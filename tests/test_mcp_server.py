"""MCP as a server (issue 58, point 3): a workflow exposed as an MCP tool; when it pauses, the
call's result is the protocol's input-required result (revision 2026-07-28) — one form per
question the caller may answer, keyed by its reference — and the client's answers, sent with
the call again, resume it. The round's state is sealed by the SDK; an expired, forged or
foreign state is refused. Driven by the official client (`mcp.Client`) over streamable HTTP
on loopback, on both stores, across a restart."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import httpx2
import mcp.server.request_state
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, ElicitResult, InputRequiredResult

from agboss import ConfigurationError
from agboss.protocols.mcp import mcp_server
from agboss.testing import TestEnv
from tests.apps.desk import (
    DeskRecorder,
    OfficeAgent,
    OfficeApplication,
    OfficeWorkflow,
)
from tests.people import CLERK_AND_OWNER, bearer, signed_in
from tests.test_round_trips import ASK, DONE
from tests.test_web import serve

pytestmark = pytest.mark.application.with_args(OfficeApplication)

KEY = "k" * 32
TOOL = "office-workflow"
TAXI = {"text": "Book the taxi"}


@dataclass
class Served:
    """The workflow's MCP server on loopback, and a client for a person's token."""

    port: int

    @asynccontextmanager
    async def client(self, token: str = "tok-ada") -> AsyncIterator[Client]:
        async with httpx2.AsyncClient(headers=bearer(token)) as http:
            url = f"http://127.0.0.1:{self.port}/mcp"
            async with Client(streamable_http_client(url, http_client=http)) as client:
                yield client


@asynccontextmanager
async def served(env: TestEnv, name: str = "agboss") -> AsyncIterator[Served]:
    server = mcp_server(
        lambda: env.app,
        [OfficeWorkflow],
        authenticate=signed_in,
        state_keys=[KEY],
        state_ttl=timedelta(minutes=10),
        name=name,
    )
    uvicorn, task, port = await serve(server.streamable_http_app(), lifespan=True)
    try:
        yield Served(port)
    finally:
        uvicorn.should_exit = True
        await task


async def call(
    client: Client,
    *,
    answers: dict[str, Any] | None = None,
    state: str | None = None,
) -> CallToolResult | InputRequiredResult:
    return await client.session.call_tool(
        TOOL, TAXI, input_responses=answers, request_state=state, allow_input_required=True
    )


def accept(**content: Any) -> ElicitResult:
    return ElicitResult(action="accept", content=content)


async def test_a_paused_call_answers_input_required_and_the_answer_after_a_restart_resumes_it(
    env: TestEnv, recorded: DeskRecorder
) -> None:
    env.mock_llm(OfficeAgent).then_return(ASK, DONE)
    async with served(env) as first, first.client() as client:
        [listed] = (await client.list_tools()).tools
        asked = await call(client)
    assert listed.name == TOOL
    assert listed.input_schema["properties"]["text"]["type"] == "string"
    assert isinstance(asked, InputRequiredResult)
    assert asked.request_state is not None
    [(ref, request)] = (asked.input_requests or {}).items()
    [paused] = (await env.app.pending(owner_id="ada")).entries
    assert ref == paused.pause.pause_ref  # keyed by the question's reference
    assert request.params.requested_schema["properties"]["approved"]["type"] == "boolean"
    assert "book-expense-tool" in request.params.message
    assert paused.pause.pause_id is not None
    assert paused.pause.pause_id not in asked.model_dump_json()
    assert "ada" not in asked.request_state  # sealed: the client cannot read it
    assert recorded.runs == []

    await env.restart()  # another instance, another server process's worth of keys: the same
    async with served(env) as second, second.client() as client:
        done = await call(client, answers={ref: accept(approved=True)}, state=asked.request_state)
        again = await call(client, answers={ref: accept(approved=True)}, state=asked.request_state)
    assert isinstance(done, CallToolResult), done
    assert not done.is_error
    assert done.structured_content == {"text": "Booked."}
    # The same round sent twice answers nothing twice: the tool ran once.
    assert isinstance(again, CallToolResult)
    assert again.structured_content == {"text": "Booked."}
    assert recorded.runs == ["book-expense taxi 12.5"]


async def test_an_expired_forged_or_foreign_state_is_refused_and_the_question_keeps_waiting(
    env: TestEnv, recorded: DeskRecorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    env.mock_llm(OfficeAgent).then_return(ASK, DONE)
    async with served(env) as door:
        async with door.client() as client:
            asked = await call(client)
        assert isinstance(asked, InputRequiredResult)
        state = asked.request_state
        assert state is not None
        [ref] = asked.input_requests or {}
        yes = {ref: accept(approved=True)}
        refusals: list[MCPError] = []

        async def refused(token: str, **sent: Any) -> None:
            async with door.client(token) as client:
                with pytest.raises(MCPError) as caught:
                    await call(client, **sent)
                refusals.append(caught.value)

        await refused("tok-bo", answers=yes, state=state)  # another person's round
        await refused("tok-ada", answers=yes, state=state[:-4] + "AAAA")  # forged
        await refused("tok-ada", answers={ref: accept(approved="yes")}, state=state)  # invalid
        real = time.time
        monkeypatch.setattr(  # ten minutes and a second pass: the state's time is over
            mcp.server.request_state, "time", SimpleNamespace(time=lambda: real() + 601)
        )
        await refused("tok-ada", answers=yes, state=state)
        monkeypatch.undo()
    async with served(env, name="another") as other, other.client() as client:
        with pytest.raises(MCPError) as elsewhere:  # sealed for another server
            await call(client, answers=yes, state=state)
    foreign, forged, invalid, expired = refusals
    # "Not yours", "not ours", forged and expired are one refusal.
    for refusal in (foreign, forged, expired, elsewhere.value):
        assert refusal.message == "Invalid or expired requestState"
    assert invalid.data["code"] == "dto.invalid"
    [waiting] = (await env.app.pending(owner_id="ada")).entries
    assert waiting.pause.pause_ref == ref
    assert recorded.runs == []


async def test_a_dismissed_question_is_asked_again_and_others_questions_are_not_asked(
    env: TestEnv, recorded: DeskRecorder
) -> None:
    env.mock_llm(OfficeAgent).then_return(
        CLERK_AND_OWNER,
        DONE,
    )
    async with served(env) as door, door.client() as client:
        asked = await call(client)
        assert isinstance(asked, InputRequiredResult)
        # The clerk's question is the clerk's channel's: only the expense is asked here.
        [ref] = asked.input_requests or {}
        dismissed = await call(
            client, answers={ref: ElicitResult(action="cancel")}, state=asked.request_state
        )
        assert isinstance(dismissed, InputRequiredResult)
        assert list(dismissed.input_requests or {}) == [ref]
        declined = await call(
            client, answers={ref: ElicitResult(action="decline")}, state=dismissed.request_state
        )
    assert isinstance(declined, CallToolResult)
    assert declined.structured_content is not None
    assert declined.structured_content["status"] == "paused"
    assert declined.structured_content["waitingOnOthers"] == 1
    assert recorded.runs == []
    assert recorded.sent == ["send L-7 default"]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda o: o | {"workflows": []}, "at least one workflow"),
        (lambda o: o | {"state_keys": ["short"]}, "state_keys"),
        (lambda o: o | {"state_ttl": timedelta(0)}, "positive time"),
        (lambda o: o | {"workflows": [OfficeWorkflow, OfficeWorkflow]}, "served twice"),
    ],
)
def test_a_server_is_refused_a_bad_setting(
    change: Callable[[dict[str, Any]], dict[str, Any]], said: str
) -> None:
    options: dict[str, Any] = {
        "workflows": [OfficeWorkflow],
        "authenticate": signed_in,
        "state_keys": [KEY],
    }
    with pytest.raises(ConfigurationError, match=said):
        mcp_server(lambda: None, **change(options))
