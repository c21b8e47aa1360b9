"""AG-UI (issue 58, point 1): a workflow served to an AG-UI client over server-sent events —
its run streamed as it happens, a pause ending the run with AG-UI's interrupt outcome (the
question named by its reference, the tool call, the answer's schema), the next run's resume
answering each open interrupt once; only the questions the client may answer shown. Read with
the protocol's own types (`ag_ui.core`), from a real server on loopback, on both stores."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from ag_ui.core import (
    Event,
    EventType,
    RunAgentInput,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    UserMessage,
)
from ag_ui.core import ResumeEntry as Resume
from pydantic import TypeAdapter
from starlette.applications import Starlette

from agboss import ExecutionEvent, ExecutionEventKind
from agboss.protocols.agui import Translation, agui_router
from agboss.testing import TestEnv, call_tools, tool_call
from agboss.web import mount
from tests.apps.desk import (
    BookExpenseTool,
    DeskRecorder,
    OfficeAgent,
    OfficeApplication,
    OfficeWorkflow,
)
from tests.people import CLERK_AND_OWNER, bearer, signed_in
from tests.test_round_trips import ASK, DONE
from tests.test_web import serve

pytestmark = pytest.mark.application.with_args(OfficeApplication)

EVENTS: TypeAdapter[Any] = TypeAdapter(Event)
K = ExecutionEventKind


@dataclass
class Client:
    """An AG-UI client of the served workflow, as a person signed in with ``token``."""

    http: httpx.AsyncClient

    async def post(self, run: RunAgentInput, token: str = "tok-ada") -> httpx.Response:
        return await self.http.post(
            "/agent",
            content=run.model_dump_json(by_alias=True, exclude_none=True),
            headers=bearer(token) | {"Accept": "text/event-stream"},
        )

    async def run(self, run: RunAgentInput, token: str = "tok-ada") -> list[Any]:
        """The run's events, each read as the protocol's own type."""
        response = await self.post(run, token)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("text/event-stream")
        return [
            EVENTS.validate_python(json.loads(line.removeprefix("data: ")))
            for line in response.text.splitlines()
            if line.startswith("data: ")
        ]


def said(text: str, thread: str) -> RunAgentInput:
    return RunAgentInput(
        thread_id=thread,
        run_id=f"run-{uuid.uuid4().hex[:8]}",
        messages=[UserMessage(id="m-1", content=text)],
    )


def answered(thread: str, *answers: tuple[str, Any]) -> RunAgentInput:
    return RunAgentInput(
        thread_id=thread,
        run_id=f"run-{uuid.uuid4().hex[:8]}",
        messages=[],
        resume=[Resume(interrupt_id=ref, status="resolved", payload=p) for ref, p in answers],
    )


@pytest.fixture
async def client(env: TestEnv) -> AsyncIterator[Client]:
    # The router reads the application per request: a restarted env's new instance serves.
    api = Starlette()
    mount(api, "/agent", agui_router(lambda: env.app, OfficeWorkflow, authenticate=signed_in))
    server, task, port = await serve(api)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            yield Client(http)
    finally:
        server.should_exit = True
        await task


def finished(events: list[Any]) -> RunFinishedEvent:
    last = events[-1]
    assert isinstance(last, RunFinishedEvent), last
    return last


async def test_a_pause_ends_the_run_in_an_interrupt_and_a_resume_after_a_restart_runs_it_once(
    env: TestEnv, client: Client, recorded: DeskRecorder
) -> None:
    env.mock_llm(OfficeAgent).then_return(replace(ASK, content="Booking it."), DONE)
    events = await client.run(said("Book the taxi", "th-agui"))
    types = [event.type for event in events]
    assert types[:7] == [
        EventType.RUN_STARTED,
        EventType.TEXT_MESSAGE_START,  # the model's turn, as a message
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TEXT_MESSAGE_END,
        EventType.TOOL_CALL_START,  # the call it made, as it made it
        EventType.TOOL_CALL_END,
        EventType.CUSTOM,  # the question's news
    ]
    assert events[2].delta == "Booking it."
    call = events[4]
    assert call.tool_call_name == "book-expense-tool"
    assert call.parent_message_id == events[1].message_id
    assert events[6].name == "agboss.pause-asked"
    outcome = finished(events).outcome
    assert isinstance(outcome, RunFinishedInterruptOutcome)
    [interrupt] = outcome.interrupts
    [paused] = (await env.app.pending(owner_id="ada")).entries
    assert interrupt.id == paused.pause.pause_ref  # named by its reference
    assert paused.pause.pause_id is not None
    assert interrupt.tool_call_id == paused.pause.ask.call_id == call.tool_call_id
    assert interrupt.metadata is not None
    assert interrupt.metadata["tool"] == "book-expense-tool"
    assert interrupt.response_schema is not None
    assert "approved" in interrupt.response_schema["properties"]
    assert recorded.runs == []

    await env.restart()  # the answer comes to another instance, after a restart
    resumed = await client.run(answered("th-agui", (interrupt.id, {"approved": True})))
    kinds = [event.type for event in resumed]
    assert kinds[0] is EventType.RUN_STARTED
    news = [event.name for event in resumed if event.type is EventType.CUSTOM]
    assert news == ["agboss.pause-answered", "agboss.tool-started", "agboss.tool-done"]
    assert EventType.TOOL_CALL_START not in kinds  # the closing answer is no tool call
    end = finished(resumed)
    assert end.outcome is None or end.outcome.type == "success"
    assert end.result["status"] == "completed"
    assert end.result["output"] == {"text": "Booked."}
    assert recorded.runs == ["book-expense taxi 12.5"]

    again = await client.post(answered("th-agui", (interrupt.id, {"approved": True})))
    assert again.status_code == 409, again.text  # each interrupt is answered once
    assert again.json()["code"] == "run.not-paused"
    assert recorded.runs == ["book-expense taxi 12.5"]
    for text in (_text(events), _text(resumed)):
        assert paused.pause.pause_id not in text  # the id never leaves the server


async def test_a_refused_resume_leaves_the_question_waiting(
    env: TestEnv, client: Client, recorded: DeskRecorder
) -> None:
    env.mock_llm(OfficeAgent).then_return(ASK, DONE)
    events = await client.run(said("Book the taxi", "th-refused"))
    outcome = finished(events).outcome
    assert isinstance(outcome, RunFinishedInterruptOutcome)
    ref = outcome.interrupts[0].id
    yes = {"approved": True}

    not_yours = await client.post(answered("th-refused", (ref, yes)), token="tok-bo")
    other_thread = await client.post(answered("th-other", (ref, yes)))
    twice = await client.post(answered("th-refused", (ref, yes), (ref, yes)))
    invalid = await client.post(answered("th-refused", (ref, {"approved": "yes"})))
    channel_side = await client.post(answered("th-refused", (ref, yes)), token="tok-desk")
    stranger = await client.post(answered("th-refused", (ref, yes)), token="tok-nobody")
    unknown = await client.post(answered("th-refused", ("pr-nothing", yes)))
    not_a_run = await client.http.post(
        "/agent", json={"threadId": "th-refused"}, headers=bearer("tok-ada")
    )

    # "Not yours" and "not there" are one answer.
    assert not_yours.status_code == other_thread.status_code == unknown.status_code == 404
    assert not_yours.json()["code"] == unknown.json()["code"] == "pause.unknown"
    assert twice.status_code == invalid.status_code == not_a_run.status_code == 422
    assert channel_side.status_code == 403
    assert stranger.status_code == 401
    [waiting] = (await env.app.pending(owner_id="ada")).entries
    assert waiting.pause.pause_ref == ref
    assert recorded.runs == []


async def test_a_question_the_client_may_not_answer_is_not_an_interrupt(
    env: TestEnv, client: Client, recorded: DeskRecorder
) -> None:
    env.mock_llm(OfficeAgent).then_return(
        CLERK_AND_OWNER,
        DONE,
    )
    events = await client.run(said("Return L-7 and book the taxi", "th-mixed"))
    end = finished(events)
    assert isinstance(end.outcome, RunFinishedInterruptOutcome)
    # The clerk's question (a channel's) is answered in the clerk's channel, not here.
    [interrupt] = end.outcome.interrupts
    assert interrupt.metadata is not None
    assert interrupt.metadata["tool"] == "book-expense-tool"
    assert recorded.sent == ["send L-7 default"]

    told = await client.run(
        answered("th-mixed", (interrupt.id, {"approved": False, "reason": "bus"}))
    )
    waiting = finished(told)
    assert waiting.outcome is None
    assert waiting.result["status"] == "paused"
    assert waiting.result["waitingOnOthers"] == 1
    assert recorded.runs == []


async def test_a_run_begins_an_execution_in_the_clients_thread(
    env: TestEnv, client: Client
) -> None:
    env.mock_llm(OfficeAgent).then_return(DONE)
    events = await client.run(said("Nothing to do", "th-done"))
    end = finished(events)
    assert end.thread_id == "th-done"
    assert end.result["output"] == {"text": "Booked."}
    listed = await env.app.executions(owner_id="ada")
    assert [entry.thread_id for entry in listed.entries] == ["th-done"]


def _text(events: list[Any]) -> str:
    return "".join(event.model_dump_json() for event in events)


async def test_one_resume_answers_every_open_interrupt_each_once(
    env: TestEnv, client: Client, recorded: DeskRecorder
) -> None:
    env.mock_llm(OfficeAgent).then_return(
        call_tools(
            tool_call(BookExpenseTool, purpose="taxi", amount=12.5),
            tool_call(BookExpenseTool, purpose="hotel", amount=90.0),
        ),
        DONE,
    )
    events = await client.run(said("Book the taxi and the hotel", "th-two"))
    outcome = finished(events).outcome
    assert isinstance(outcome, RunFinishedInterruptOutcome)
    taxi, hotel = outcome.interrupts
    resumed = await client.run(
        answered("th-two", (taxi.id, {"approved": True}), (hotel.id, {"approved": False}))
    )
    end = finished(resumed)
    assert end.result["status"] == "completed"
    assert recorded.runs == ["book-expense taxi 12.5"]  # the hotel was declined
    assert (await env.app.pending(owner_id="ada")).entries == []


def test_streamed_text_is_one_message_whose_pieces_arrive_as_they_stream() -> None:
    view = Translation("th-1", "run-1")
    at = datetime.now(UTC)
    told = [
        event
        for piece in (
            ExecutionEvent(K.TEXT_DELTA, "ex-1", at, agent="a", text="Return"),
            ExecutionEvent(K.TEXT_DELTA, "ex-1", at, agent="a", text="ing it."),
            ExecutionEvent(
                K.MODEL_ANSWERED,
                "ex-1",
                at,
                agent="a",
                text="Returning it.",
                tool_calls=("final_answer",),
                call_ids=("c-1",),
            ),
        )
        for event in view.of(piece)
    ]
    assert [event.type for event in told] == [
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TEXT_MESSAGE_END,  # the whole turn is not sent again, nor its answer
    ]
    assert [event.delta for event in told[1:3]] == ["Return", "ing it."]
    assert len({event.message_id for event in told}) == 1
