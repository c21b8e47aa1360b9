"""A2A (issue 58, point 2): a workflow served as an A2A agent — its agent card from the
workflow's description and input; a pause the task's ``input-required`` state, its payload the
questions by reference; the answering message resuming it; who may answer checked as for any
answer; ``auth-required`` kept apart. Driven by the official client (`a2a.client`) over the
JSON-RPC binding on loopback, on both stores, across a restart."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from a2a.client import Client, ClientConfig, create_client
from a2a.helpers import get_data_parts, new_data_part, new_text_part
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Role,
    SendMessageRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import TaskNotFoundError
from starlette.types import ASGIApp, Receive, Scope, Send

from agboss.protocols.a2a import INPUT_EXTENSION, a2a_app
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


@dataclass
class Later:
    """An ASGI app set once the server's port is known (the card names its own URL)."""

    inner: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert self.inner is not None
        await self.inner(scope, receive, send)


@dataclass
class Agent:
    """The served agent, and the official client as a person signed in with a token."""

    url: str
    opened: list[httpx.AsyncClient] = field(default_factory=list)

    async def client(self, token: str | None) -> Client:
        """The official client, reading the agent's card, as ``token``'s person."""
        http = httpx.AsyncClient(headers=bearer(token), timeout=30)
        self.opened.append(http)
        config = ClientConfig(httpx_client=http, streaming=False)
        return await create_client(self.url, client_config=config)

    async def send(self, token: str | None, *parts: Any, task: Task | None = None) -> Task:
        message = Message(
            role=Role.ROLE_USER,
            message_id=uuid.uuid4().hex,
            parts=list(parts),
            task_id=task.id if task else None,
            context_id=task.context_id if task else None,
        )
        client = await self.client(token)
        [response] = [r async for r in client.send_message(SendMessageRequest(message=message))]
        assert response.HasField("task"), response
        return response.task

    async def cancel(self, token: str, task: Task) -> Task:
        return await (await self.client(token)).cancel_task(CancelTaskRequest(id=task.id))

    async def read(self, token: str, task: Task) -> Task:
        return await (await self.client(token)).get_task(GetTaskRequest(id=task.id))


@asynccontextmanager
async def served_agent(env: TestEnv, **options: Any) -> AsyncIterator[Agent]:
    later = Later()
    server, task, port = await serve(later)
    url = f"http://127.0.0.1:{port}/"
    # The agent reads the application per request: a restarted env's new instance serves.
    later.inner = a2a_app(
        lambda: env.app, OfficeWorkflow, authenticate=signed_in, url=url, **options
    )
    served = Agent(url)
    try:
        yield served
    finally:
        for http in served.opened:
            await http.aclose()
        server.should_exit = True
        await task


@pytest.fixture
async def agent(env: TestEnv) -> AsyncIterator[Agent]:
    async with served_agent(env) as served:
        yield served


def payload(task: Task) -> dict[str, Any]:
    [data] = get_data_parts(task.status.message.parts)
    assert isinstance(data, dict)
    return data


async def test_a_pause_is_input_required_and_the_answer_after_a_restart_completes_the_task(
    env: TestEnv, agent: Agent, recorded: DeskRecorder
) -> None:
    env.mock_llm(OfficeAgent).then_return(ASK, DONE)
    async with httpx.AsyncClient() as http:
        card = (await http.get(agent.url + ".well-known/agent-card.json")).json()
    assert card["name"] == "office-workflow"
    assert card["skills"][0]["id"] == "office-workflow"
    [extension] = card["capabilities"]["extensions"]
    assert extension["uri"] == INPUT_EXTENSION
    assert "text" in extension["params"]["schema"]["properties"]

    asked = await agent.send("tok-ada", new_text_part("Book the taxi"))
    assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    [question] = payload(asked)["questions"]
    [paused] = (await env.app.pending(owner_id="ada")).entries
    assert question["ref"] == paused.pause.pause_ref  # bound to the pause, by its reference
    assert question["tool"] == "book-expense-tool"
    assert paused.pause.pause_id is not None
    assert paused.pause.pause_id not in str(asked)
    assert recorded.runs == []

    await env.restart()  # the answer comes to a new instance, its tasks no longer in memory
    done = await agent.send("tok-ada", new_data_part({"approved": True}), task=asked)
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    [artifact] = done.artifacts
    assert get_data_parts(artifact.parts) == [{"text": "Booked."}]
    assert recorded.runs == ["book-expense taxi 12.5"]
    assert done.id == asked.id
    assert done.context_id == asked.context_id


async def test_another_person_cannot_answer_and_a_refused_answer_asks_again(
    env: TestEnv, agent: Agent, recorded: DeskRecorder
) -> None:
    env.mock_llm(OfficeAgent).then_return(ASK, DONE)
    asked = await agent.send("tok-ada", new_text_part("Book the taxi"))
    [question] = payload(asked)["questions"]

    with pytest.raises(TaskNotFoundError):  # bo's answer to ada's task: no such task
        await agent.send("tok-bo", new_data_part({"approved": True}), task=asked)
    with pytest.raises(TaskNotFoundError):
        await agent.read("tok-bo", asked)
    refused = await agent.send("tok-ada", new_data_part({"approved": "yes"}), task=asked)
    assert refused.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert payload(refused)["refused"]["code"] == "dto.invalid"
    assert payload(refused)["questions"] == [question]  # it still waits
    answered = await agent.send(
        "tok-ada",
        new_data_part({"answers": {question["ref"]: {"approved": False, "reason": "bus"}}}),
        task=asked,
    )
    assert answered.status.state == TaskState.TASK_STATE_COMPLETED
    assert recorded.runs == []  # declined


async def test_auth_required_is_kept_apart_from_input_required(
    env: TestEnv, agent: Agent, recorded: DeskRecorder
) -> None:
    env.mock_llm(OfficeAgent).then_return(ASK, DONE)
    anonymous = await agent.send(None, new_text_part("Book the taxi"))
    assert anonymous.status.state == TaskState.TASK_STATE_AUTH_REQUIRED
    assert (await env.app.executions()).entries == []  # nothing ran
    signed = await agent.send("tok-ada", new_text_part("Book the taxi"), task=anonymous)
    assert signed.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert signed.id == anonymous.id
    assert (await agent.read("tok-ada", signed)).status.state == (
        TaskState.TASK_STATE_INPUT_REQUIRED
    )
    assert recorded.runs == []


async def test_a_task_waiting_only_on_others_is_working(
    env: TestEnv, agent: Agent, recorded: DeskRecorder
) -> None:
    env.mock_llm(OfficeAgent).then_return(
        CLERK_AND_OWNER,
        DONE,
    )
    asked = await agent.send("tok-ada", new_text_part("Return L-7 and book the taxi"))
    [question] = payload(asked)["questions"]  # the clerk's is the clerk's channel's
    assert question["tool"] == "book-expense-tool"
    waiting = await agent.send("tok-ada", new_data_part({"approved": True}), task=asked)
    assert waiting.status.state == TaskState.TASK_STATE_WORKING
    assert recorded.sent == ["send L-7 default"]


async def test_cancelling_a_task_withdraws_its_questions(
    env: TestEnv, agent: Agent, recorded: DeskRecorder
) -> None:
    env.mock_llm(OfficeAgent).then_return(ASK, DONE)
    asked = await agent.send("tok-ada", new_text_part("Book the taxi"))
    cancelled = await agent.cancel("tok-ada", asked)
    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    assert (await env.app.pending(owner_id="ada")).entries == []
    assert recorded.runs == []


async def test_a_task_forgotten_by_memory_is_read_again_and_one_waiting_for_a_sign_in_is_gone(
    env: TestEnv, recorded: DeskRecorder
) -> None:
    env.mock_llm(OfficeAgent).then_return(ASK, ASK, DONE)
    async with served_agent(env, keep_tasks=1) as agent:
        first = await agent.send("tok-ada", new_text_part("Book the taxi"))
        second = await agent.send("tok-ada", new_text_part("Book another"))  # first forgotten
        assert second.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        done = await agent.send("tok-ada", new_data_part({"approved": True}), task=first)
        assert done.status.state == TaskState.TASK_STATE_COMPLETED
        assert recorded.runs == ["book-expense taxi 12.5"]
        waiting = await agent.send(None, new_text_part("Book the taxi"))
        await agent.send(None, new_text_part("Book it again"))  # the first forgotten: it ran
        with pytest.raises(TaskNotFoundError):  # nothing, and nobody had signed in for it
            await agent.send("tok-ada", new_text_part("Book the taxi"), task=waiting)
