"""Reassigning a question (issue 57, point 2): a waiting question handed to another role or a
person is withdrawn from its channel and asked again under a new id — the old id then refused
— the audit trail and the decision log say who handed it to whom and why, and its deadline
and ladder carry over. On both stores, with two instances, through the public API, HTTP and
the command line."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result
from starlette.requests import Request

from agboss import (
    DtoValidationError,
    ExecutionStatus,
    NotPausedError,
    PauseClaimedError,
    PauseResolution,
    PauseStatus,
    ReassignTargetError,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
)
from agboss.cli._main import cli
from agboss.enums import Outcome
from agboss.testing import TestEnv, call_tools, reply_with, tool_call
from agboss.web import Caller, pause_router
from tests.apps.claims_app import (
    DAY,
    HOUR,
    ClaimedRefundTool,
    ClaimsAgent,
    ClaimsApplication,
    ClaimsRecorder,
    ClaimsWorkflow,
    LegalDeskChannel,
    PairedWriteOffTool,
    RemindedCreditTool,
)
from tests.test_web import serve

pytestmark = pytest.mark.application.with_args(ClaimsApplication, instances=2)

DONE = reply_with(WorkflowFinishTextDto, text="Done.")


async def _asked(
    env: TestEnv, recorded: ClaimsRecorder, tool: type[Any] = ClaimedRefundTool
) -> tuple[str, str]:
    """A tree waiting on one question of ``tool``'s role: the tree, and the question's id as
    its desk got it."""
    request = WorkflowStartTextDto(text=f"order o-1 by {tool.__name__}")
    env.mock_llm(ClaimsAgent).when(input=request).then_return(
        call_tools(tool_call(tool, order_id="o-1")), DONE
    )
    paused = await env.app.execute(ClaimsWorkflow, request, owner_id="ada")
    assert paused.status is ExecutionStatus.PAUSED
    return paused.execution_id, recorded.pause_ids[-1]


async def test_a_question_handed_to_another_role_is_asked_there_and_its_old_id_answers_nothing(
    env: TestEnv, recorded: ClaimsRecorder
) -> None:
    execution_id, old_id = await _asked(env, recorded)
    made = await env.app.reassign(
        old_id, role=LegalDeskChannel, reason="a chargeback: legal decides", answered_by="ann"
    )
    assert (made.role, made.to, made.reassigned_by) == ("legal-desk-channel", None, "ann")
    assert made.status is ExecutionStatus.PAUSED
    # Taken back from the refunds desk, then asked of the legal desk under a new id.
    assert recorded.told == ["refunds send", "refunds withdraw reassigned", "legal send"]
    new_id = recorded.pause_ids[-1]
    assert new_id != old_id
    assert made.pause_ref != made.previous_ref
    for app in env.apps:  # the old id answers nothing, on any instance
        with pytest.raises(NotPausedError) as refused:
            await app.answer(old_id, decision={"approved": True}, answered_by="ann")
        assert refused.value.status == "reassigned"
    [waiting] = (await env.apps[1].pending()).entries
    assert waiting.pause.channel == "legal-desk-channel"
    done = await env.apps[1].resume(new_id, decision={"approved": True}, answered_by="lee")
    assert done.status is ExecutionStatus.COMPLETED
    assert recorded.runs == ["claimed-refund-tool o-1"]
    record = (await env.app.get(execution_id, record=True)).record
    assert record is not None
    handed, answered = record.pauses
    assert (handed.resolution, handed.responder, handed.role) == (
        PauseResolution.REASSIGNED,
        "ann",
        "refund-desk-channel",
    )
    assert handed.reassigned is not None
    assert (handed.reassigned.role, handed.reassigned.to, handed.reassigned.reason) == (
        "legal-desk-channel",
        None,
        "a chargeback: legal decides",
    )
    assert handed.reassigned.pause_ref == answered.pause_ref == made.pause_ref
    assert (answered.role, answered.responder, answered.escalation) == (
        "legal-desk-channel",
        "lee",
        1,
    )
    logged = [line.entry for line in (await env.app.decisions()).entries]
    assert [(entry.outcome, entry.who) for entry in logged] == [
        (Outcome.REASSIGNED, "ann"),
        (Outcome.APPROVED, "lee"),
    ]
    assert logged[0].reassigned == handed.reassigned
    assert (await env.app.verify_decisions()).broken is None


async def test_a_question_handed_to_a_person_is_asked_claimed_for_them(
    env: TestEnv, recorded: ClaimsRecorder
) -> None:
    _, old_id = await _asked(env, recorded)
    made = await env.app.reassign(old_id, to="bo", reason="bo knows them", answered_by="ann")
    assert (made.role, made.to) == ("refund-desk-channel", "bo")
    assert made.claimed_until is not None
    # The same desk, asked again: as bo's, from the start.
    assert recorded.told == [
        "refunds send",
        "refunds withdraw reassigned",
        "refunds send claimed by bo",
    ]
    new_id = recorded.pause_ids[-1]
    [waiting] = (await env.app.pending()).entries
    assert (waiting.claimed_by, waiting.claimed_until) == ("bo", made.claimed_until)
    with pytest.raises(PauseClaimedError):  # bo handles it now: not ann, not cy
        await env.apps[1].answer(new_id, decision={"approved": True}, answered_by="ann")
    done = await env.apps[1].resume(new_id, decision={"approved": False}, answered_by="bo")
    assert done.status is ExecutionStatus.COMPLETED
    assert recorded.runs == []


async def test_where_a_question_cannot_go_it_is_refused_and_keeps_waiting(
    env: TestEnv, recorded: ClaimsRecorder
) -> None:
    _, pause_id = await _asked(env, recorded)
    refusals: list[tuple[Any, type[Exception]]] = [
        ({"role": "no-such-role"}, ReassignTargetError),
        ({"role": "refund-desk-channel"}, ReassignTargetError),  # asked of it already
        ({}, DtoValidationError),  # nowhere named
        ({"role": LegalDeskChannel, "reason": "  "}, DtoValidationError),
        ({"role": 42}, DtoValidationError),
    ]
    for given, error in refusals:
        asked = {"reason": "because", **given}
        with pytest.raises(error):
            await env.app.reassign(pause_id, answered_by="ann", **asked)
    await env.app.claim(pause_id, answered_by="cy")
    with pytest.raises(PauseClaimedError):  # cy handles it: not ann's to hand on
        await env.apps[1].reassign(pause_id, role=LegalDeskChannel, reason="x", answered_by="ann")
    assert (await env.app.describe_pause(pause_id)).status is PauseStatus.PENDING
    assert recorded.told == ["refunds send"]
    _, voted_id = await _asked(env, recorded, PairedWriteOffTool)
    with pytest.raises(ReassignTargetError, match="several approvals"):
        await env.app.reassign(voted_id, to="bo", reason="bo alone", answered_by="ann")


async def test_the_deadline_and_the_ladder_carry_over_to_the_role_it_was_handed_to(
    env: TestEnv, recorded: ClaimsRecorder
) -> None:
    _, pause_id = await _asked(env, recorded, RemindedCreditTool)
    await env.clock.jump(HOUR / 2)
    await env.app.reassign(pause_id, role=LegalDeskChannel, reason="legal", answered_by="ann")
    await env.clock.jump(HOUR / 2)  # an hour after it was first asked: the legal desk reminded
    assert recorded.told[-2:] == ["legal send", "legal remind #1"]
    [waiting] = (await env.app.pending()).entries
    assert waiting.pause.channel == "legal-desk-channel"
    await env.clock.jump(DAY - HOUR)  # a day after it was first asked: the deadline said no
    assert recorded.told[-1] == "legal withdraw expired"
    assert (await env.app.pending()).entries == []
    assert recorded.runs == []


async def test_two_instances_handing_one_question_on_at_once_hand_it_on_once(
    env: TestEnv, recorded: ClaimsRecorder
) -> None:
    _, pause_id = await _asked(env, recorded)
    outcomes = await asyncio.gather(
        env.apps[0].reassign(pause_id, role=LegalDeskChannel, reason="legal", answered_by="ann"),
        env.apps[1].reassign(pause_id, to="bo", reason="bo", answered_by="cy"),
        return_exceptions=True,
    )
    made = [outcome for outcome in outcomes if not isinstance(outcome, BaseException)]
    refused = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
    assert len(made) == 1, outcomes
    [error] = refused
    assert isinstance(error, NotPausedError), error
    assert error.status == "reassigned"
    [waiting] = (await env.app.pending()).entries
    assert waiting.pause.channel == made[0].role
    assert recorded.told.count("refunds withdraw reassigned") == 1


async def test_a_reassignment_over_http_names_the_new_question_by_its_reference_alone(
    env: TestEnv, recorded: ClaimsRecorder
) -> None:
    _, pause_id = await _asked(env, recorded)

    async def signed_in(request: Request) -> Caller | None:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        return Caller(answered_by="ann") if token == "tok-ann" else None

    headers = {"Authorization": "Bearer tok-ann"}
    server, task, port = await serve(pause_router(env.app, authenticate=signed_in, page=False))
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            nowhere = await http.post(
                "/reassignments",
                json={"pause_id": pause_id, "role": "no-such-role", "reason": "x"},
                headers=headers,
            )
            unsaid = await http.post(
                "/reassignments", json={"pause_id": pause_id, "to": "bo"}, headers=headers
            )
            made = await http.post(
                "/reassignments",
                json={"pause_id": pause_id, "role": "legal-desk-channel", "reason": "legal"},
                headers=headers,
            )
            again = await http.post(
                "/reassignments",
                json={"pause_id": pause_id, "to": "bo", "reason": "again"},
                headers=headers,
            )
    finally:
        server.should_exit = True
        await task
    assert nowhere.status_code == 422, nowhere.text
    assert nowhere.json()["code"] == "pause.reassign-target"
    assert unsaid.status_code == 422, unsaid.text
    assert made.status_code == 200, made.text
    body = made.json()
    assert (body["role"], body["reassigned_by"], body["status"]) == (
        "legal-desk-channel",
        "ann",
        "paused",
    )
    new_id = recorded.pause_ids[-1]
    assert pause_id not in made.text  # references alone
    assert new_id not in made.text
    assert again.status_code == 409, again.text
    assert again.json()["code"] == "run.not-paused"


async def test_a_reassignment_from_the_command_line_says_where_it_went(
    env: TestEnv, recorded: ClaimsRecorder, env_store: str
) -> None:
    _, pause_id = await _asked(env, recorded)
    runner = CliRunner()

    async def run(*args: str) -> Result:
        command = [*args, "--app", "tests.apps.claims_app:ClaimsApplication", "--store", env_store]
        return await asyncio.to_thread(runner.invoke, cli, command)  # a loop of its own

    refused = await run("pauses", "reassign", pause_id, "--answered-by", "ann", "--reason", "x")
    assert refused.exit_code == 1
    assert "role=, to=, or both" in refused.output
    made = await run(
        "pauses",
        "reassign",
        pause_id,
        "--to",
        "bo",
        "--reason",
        "bo knows them",
        "--answered-by",
        "ann",
        "--json",
    )
    assert made.exit_code == 0, made.output
    said = json.loads(made.output)
    assert (said["to"], said["role"], said["reassigned_by"]) == ("bo", "refund-desk-channel", "ann")
    assert pause_id not in made.output
    [waiting] = (await env.app.pending()).entries
    assert waiting.claimed_by == "bo"
