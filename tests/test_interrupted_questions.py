"""The question whether to run again a call that may have run (``OnInterrupted.ASK``, issue 38)
is answered like any pause: in words through the role's reply interpreter, and through the
router, which lists it with its kind — on both stores, the call cut off in this process (its
caller went away mid-tool) and recovered by the sweep."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from agboss import (
    ExecutionStatus,
    PauseKind,
    PendingPause,
    UninterpretableReplyError,
    WorkflowStartTextDto,
    pause_ref,
)
from agboss.testing import TestEnv
from agboss.web import pause_router
from tests.apps.desk import DeskRecorder, OfficeAgent, OfficeApplication, OfficeWorkflow
from tests.interrupting import cut_off_in_tool
from tests.test_round_trips import ASK, DONE
from tests.test_web import bearer, serve

pytestmark = pytest.mark.application.with_args(OfficeApplication)


@pytest.fixture(autouse=True)
def scripted(env: TestEnv) -> None:
    env.mock_llm(OfficeAgent).then_return(ASK, DONE)


async def asked(env: TestEnv, recorded: DeskRecorder) -> tuple[str, PendingPause]:
    """The expense booking approved, cut off mid-call and recovered: its root and the
    question it rests on."""
    result = await env.app.execute(
        OfficeWorkflow, WorkflowStartTextDto(text="Book the taxi"), owner_id="user-1"
    )
    [approval] = result.pending
    assert approval.pause_id is not None
    question = await cut_off_in_tool(env, approval.pause_id, recorded, owner_id="user-1")
    return result.execution_id, question


async def test_an_answer_in_words_is_read_by_the_roles_interpreter(
    env: TestEnv, recorded: DeskRecorder
) -> None:
    root, question = await asked(env, recorded)
    assert question.pause_id is not None
    assert env.app.accepts_reply(question)
    done = await env.app.resume(question.pause_id, reply='{"approved": false}', owner_id="user-1")
    assert done.status is ExecutionStatus.COMPLETED
    assert recorded.runs == ["book-expense taxi 12.5"]  # not run again
    record = (await env.app.get(root, record=True)).record
    assert record is not None
    entry = record.pauses[-1]
    assert (entry.kind, entry.reply) == (PauseKind.INTERRUPTED, '{"approved": false}')


async def test_words_that_change_the_arguments_are_refused_and_the_question_waits(
    env: TestEnv,
    recorded: DeskRecorder,
) -> None:
    root, question = await asked(env, recorded)
    assert question.pause_id is not None
    reply = '{"approved": true, "override_arguments": {"purpose": "taxi", "amount": 1}}'
    with pytest.raises(UninterpretableReplyError, match="runs again as it was"):
        await env.app.resume(question.pause_id, reply=reply, owner_id="user-1")
    [still] = (await env.app.get(root)).pending
    assert still.pause_id == question.pause_id
    assert recorded.runs == ["book-expense taxi 12.5"]


async def test_the_router_lists_it_with_its_kind_and_runs_it_again_once_approved(
    env: TestEnv,
    recorded: DeskRecorder,
) -> None:
    root, question = await asked(env, recorded)
    api = FastAPI()
    api.mount("/agboss", pause_router(env.app, authenticate=bearer))
    server, task, port = await serve(api)
    headers = {"Authorization": "Bearer tok-owner"}
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            listed = (await http.get("/agboss/pauses", headers=headers)).json()
            [entry] = listed["entries"]
            assert question.pause_id is not None
            assert entry["pause_ref"] == pause_ref(question.pause_id)
            assert entry["ask"]["kind"] == "interrupted"
            assert entry["arguments_schema"] == {}  # nothing to edit
            named = {"pause_ref": entry["pause_ref"]}
            edited = {"approved": True, "override_arguments": {"purpose": "bus", "amount": 1}}
            refused = await http.post(
                "/agboss/answers", json={**named, "decision": edited}, headers=headers
            )
            assert refused.status_code == 422
            assert refused.json()["code"] == "dto.invalid"
            answered = await http.post(
                "/agboss/answers", json={**named, "decision": {"approved": True}}, headers=headers
            )
            assert answered.status_code == 202
    finally:
        server.should_exit = True
        await task
    done = await env.app.get(root)
    assert done.status is ExecutionStatus.COMPLETED
    assert recorded.runs == [
        "book-expense taxi 12.5",
        "book-expense taxi 12.5",
    ]  # once more, as it was
