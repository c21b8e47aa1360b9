"""Delegating questions (issue 57, point 3): a standing delegation — "ada's questions go to bo
until Friday", scoped by tenant, role or tool — lets the delegate answer as "bo for ada" in the
audit trail and the decision log; it ends on its date or when revoked; a delegate never
answers what they could not have answered had it been theirs, and a quorum counts a person
once. On both stores, through the public API, HTTP and the command line."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result
from starlette.requests import Request

from agboss import (
    AlreadyVotedError,
    DtoValidationError,
    ExecutionStatus,
    NotAnAnswererError,
    PauseClaimedError,
    ThreadOwnerError,
    UnknownDelegationError,
    UnknownPauseError,
    WorkflowStartTextDto,
)
from agboss.cli._main import cli
from agboss.records import DecisionEvent
from agboss.testing import TestEnv, call_tools, tool_call
from agboss.web import Caller, pause_router
from tests.apps.claims_app import ClaimsApplication, ClaimsRecorder, LegalDeskChannel
from tests.apps.desk import BookExpenseTool, OfficeAgent, OfficeApplication, OfficeWorkflow
from tests.apps.quorum_app import QuorumRecorder, TreasuryApplication, WriteOffTool
from tests.test_pauses import DONE
from tests.test_quorum import _call
from tests.test_reassign import _asked
from tests.test_web import serve

pytestmark = pytest.mark.application.with_args(OfficeApplication, instances=2)

WEEK = timedelta(days=7)


async def _expense(env: TestEnv, owner: str = "ada") -> tuple[str, str]:
    """A tree of ``owner``'s waiting on their own question: the tree, and the question's id."""
    request = WorkflowStartTextDto(text=f"book {owner}'s taxi")
    env.mock_llm(OfficeAgent).when(input=request).then_return(
        call_tools(tool_call(BookExpenseTool, purpose="taxi", amount=12.5)), DONE
    )
    paused = await env.app.execute(OfficeWorkflow, request, owner_id=owner)
    [question] = paused.pending
    assert question.pause_id is not None  # an owner's question: its id is theirs
    return paused.execution_id, question.pause_id


async def test_a_delegate_answers_the_owners_question_as_bo_for_ada(env: TestEnv) -> None:
    execution_id, pause_id = await _expense(env)
    with pytest.raises(ThreadOwnerError):  # not bo's, before the delegation
        await env.app.answer(pause_id, decision={"approved": True}, owner_id="bo")
    until = env.clock.now() + WEEK
    made = await env.app.delegate(
        "ada", to="bo", granted_by="ada", until=until, reason="on leave until Friday"
    )
    assert made.delegation_id.startswith("dl-")
    [listed] = (await env.apps[1].pending(owner_id="bo", voter="bo")).entries  # bo's inbox
    assert (listed.owner_id, listed.pause.pause_id) == ("ada", pause_id)
    assert await env.apps[1].count_pending(owner_id="bo", voter="bo") == 1
    ref = listed.pause.pause_ref
    assert await env.app.pause_id_of(ref, owner_id="bo") == pause_id
    with pytest.raises(UnknownPauseError):  # not cy's: no delegation to cy
        await env.app.pause_id_of(ref, owner_id="cy")
    done = await env.apps[1].resume(pause_id, decision={"approved": True}, owner_id="bo")
    assert done.status is ExecutionStatus.COMPLETED
    record = (await env.app.get(execution_id, record=True)).record
    assert record is not None
    [entry] = record.pauses
    assert (entry.responder, entry.on_behalf_of) == ("bo", "ada")
    [logged] = [line.entry for line in (await env.app.decisions()).entries]
    assert (logged.who, logged.on_behalf_of) == ("bo", "ada")


async def test_a_delegation_ends_on_its_date_or_when_revoked(env: TestEnv) -> None:
    _, first = await _expense(env)
    made = await env.app.delegate("ada", to="bo", granted_by="ada", until=env.clock.now() + WEEK)
    with pytest.raises(UnknownDelegationError):  # not cy's to revoke, nor to see
        await env.app.revoke_delegation(made.delegation_id, revoked_by="cy", person="cy")
    assert await env.app.delegations(person="cy") == []
    revoked = await env.apps[1].revoke_delegation(
        made.delegation_id, revoked_by="ada", person="ada"
    )
    assert (revoked.revoked_by, revoked.revoked_at) == ("ada", env.clock.now())
    again = await env.app.revoke_delegation(made.delegation_id, revoked_by="someone")
    assert again == revoked  # a repeat returns the first revocation
    with pytest.raises(ThreadOwnerError):  # revoked: ada's again, on any instance
        await env.apps[1].answer(first, decision={"approved": True}, owner_id="bo")
    assert await env.app.delegations() == []
    assert await env.app.delegations(revoked=True) == [revoked]
    await env.app.delegate("ada", to="bo", granted_by="ada", until=env.clock.now() + WEEK)
    await env.clock.jump(WEEK)  # its date came
    with pytest.raises(ThreadOwnerError):
        await env.app.answer(first, decision={"approved": True}, owner_id="bo")
    assert (await env.app.pending(voter="bo")).entries == []


async def test_a_delegation_scoped_to_a_role_a_tool_or_a_tenant_hands_on_only_those(
    env: TestEnv,
) -> None:
    _, pause_id = await _expense(env)
    await env.app.delegate("ada", to="bo", granted_by="ada", tool="return-deposit-tool")
    await env.app.delegate("ada", to="cy", granted_by="ada", role="deposit-approval-channel")
    for other in ("bo", "cy"):  # neither scope takes an expense
        with pytest.raises(ThreadOwnerError):
            await env.app.answer(pause_id, decision={"approved": True}, owner_id=other)
        assert (await env.app.pending(voter=other)).entries == []
    await env.app.delegate("ada", to="eve", granted_by="ada", tenant_id="globex")
    with pytest.raises(ThreadOwnerError):  # another tenant's delegation hands on nothing here
        await env.app.answer(pause_id, decision={"approved": True}, owner_id="eve")
    await env.app.delegate("ada", to="dee", granted_by="ada", tool=BookExpenseTool)
    receipt = await env.app.answer(pause_id, decision={"approved": True}, owner_id="dee")
    assert receipt.responder == "dee"


async def test_what_a_delegation_names_is_checked_when_it_is_granted(env: TestEnv) -> None:
    refused: list[dict[str, Any]] = [
        {"to": "ada"},  # to themselves
        {"to": "bo", "role": "no-such-role"},
        {"to": "bo", "tool": "no-such-tool"},
        {"to": "bo", "until": env.clock.now() - timedelta(seconds=1)},
        {"to": ""},
    ]
    for given in refused:
        with pytest.raises(DtoValidationError):
            await env.app.delegate("ada", granted_by="ada", **given)
    assert await env.app.delegations(revoked=True) == []


@pytest.mark.application.with_args(TreasuryApplication, instances=2)
async def test_a_quorum_counts_a_person_once_their_own_vote_or_one_for_another(
    env: TestEnv, recorded: QuorumRecorder
) -> None:
    paused = await _call(env, WriteOffTool, "x-1", owner="dan")  # ada, bo and cy vote
    [question] = paused.pending
    pause_id = question.pause_id
    assert pause_id is not None
    with pytest.raises(NotAnAnswererError):  # dee has no seat
        await env.app.resume(pause_id, decision={"approved": True}, owner_id="dee")
    await env.app.delegate("ada", to="dee", granted_by="ada")
    await env.app.delegate("cy", to="dee", granted_by="cy")
    await env.app.delegate("ada", to="bo", granted_by="ada")  # bo has a seat of his own
    [listed] = (await env.app.pending(voter="dee")).entries  # ada's seat, through her
    assert listed.pause.pause_id == pause_id
    voted = await env.apps[1].resume(pause_id, decision={"approved": True}, owner_id="dee")
    assert voted.status is ExecutionStatus.PAUSED
    with pytest.raises(AlreadyVotedError, match="counts once"):  # not cy's seat as well
        await env.app.resume(pause_id, decision={"approved": True}, owner_id="dee")
    done = await env.app.resume(pause_id, decision={"approved": True}, owner_id="bo")
    assert done.status is ExecutionStatus.COMPLETED  # ada's (by dee) and bo's: two of three
    assert recorded.runs == ["write-off-tool x-1"]
    record = (await env.app.get(paused.execution_id, record=True)).record
    assert record is not None
    [entry] = record.pauses
    assert [(vote.voter, vote.cast_by) for vote in entry.votes] == [("ada", "dee"), ("bo", None)]
    assert entry.responder == "dee for ada, bo"
    logged = [line.entry for line in (await env.app.decisions()).entries]
    votes = [(e.who, e.on_behalf_of) for e in logged if e.event is DecisionEvent.VOTE]
    assert votes == [("dee", "ada"), ("bo", None)]


@pytest.mark.application.with_args(ClaimsApplication, instances=2)
async def test_a_delegate_answers_what_their_principal_claimed_and_nothing_else(
    env: TestEnv, recorded: ClaimsRecorder
) -> None:
    _, pause_id = await _asked(env, recorded)
    await env.app.claim(pause_id, answered_by="ann")
    with pytest.raises(PauseClaimedError):
        await env.app.answer(pause_id, decision={"approved": True}, answered_by="bo")
    await env.app.delegate("ann", to="bo", granted_by="ann", role=LegalDeskChannel)
    with pytest.raises(PauseClaimedError):  # a legal question's delegate only
        await env.app.answer(pause_id, decision={"approved": True}, answered_by="bo")
    await env.app.delegate("ann", to="bo", granted_by="ann", role="refund-desk-channel")
    done = await env.apps[1].resume(pause_id, decision={"approved": True}, answered_by="bo")
    assert done.status is ExecutionStatus.COMPLETED  # taken as bo's for ann, her claim's
    assert recorded.runs == ["claimed-refund-tool o-1"]


async def test_delegations_over_http_are_the_signed_in_persons_own(env: TestEnv) -> None:
    _, pause_id = await _expense(env)
    people = {"tok-ada": Caller(owner_id="ada"), "tok-bo": Caller(owner_id="bo")}

    async def signed_in(request: Request) -> Caller | None:
        return people.get(request.headers.get("authorization", "").removeprefix("Bearer "))

    def bearer(token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    until = (env.clock.now() + WEEK).isoformat()
    server, task, port = await serve(pause_router(env.app, authenticate=signed_in, page=False))
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            made = await http.post(
                "/delegations",
                json={"to": "bo", "until": until, "reason": "leave"},
                headers=bearer("tok-ada"),
            )
            to_self = await http.post("/delegations", json={"to": "ada"}, headers=bearer("tok-ada"))
            inbox = await http.get("/pauses", headers=bearer("tok-bo"))
            ref = inbox.json()["entries"][0]["pause_ref"]
            answered = await http.post(
                "/answers",
                json={"pause_ref": ref, "decision": {"approved": True}},
                headers=bearer("tok-bo"),
            )
            listed = await http.get("/delegations", headers=bearer("tok-bo"))
            delegation_id = made.json()["delegation_id"]
            revoked = await http.delete(f"/delegations/{delegation_id}", headers=bearer("tok-ada"))
    finally:
        server.should_exit = True
        await task
    assert made.status_code == 201, made.text
    assert (made.json()["principal"], made.json()["delegate"]) == ("ada", "bo")
    assert to_self.status_code == 422, to_self.text
    assert answered.status_code == 202, answered.text
    assert answered.json()["responder"] == "bo"
    assert pause_id not in answered.text
    assert [d["delegation_id"] for d in listed.json()["delegations"]] == [delegation_id]
    assert revoked.status_code == 200, revoked.text
    assert revoked.json()["revoked_by"] == "ada"


async def test_delegations_from_the_command_line(env: TestEnv, env_store: str) -> None:
    runner = CliRunner()

    async def run(*args: str) -> Result:
        command = [*args, "--app", "tests.apps.desk:OfficeApplication", "--store", env_store]
        return await asyncio.to_thread(runner.invoke, cli, command)  # a loop of its own

    made = await run(
        "delegations", "grant", "ada", "--to", "bo", "--by", "ada", "--for", "5d", "--json"
    )
    assert made.exit_code == 0, made.output
    granted = json.loads(made.output)
    assert (granted["principal"], granted["delegate"]) == ("ada", "bo")
    listed = await run("delegations", "list", "--person", "bo")
    assert listed.exit_code == 0, listed.output
    assert granted["delegation_id"] in listed.output
    refused = await run("delegations", "grant", "ada", "--to", "ada", "--by", "ada")
    assert refused.exit_code == 1
    assert "themselves" in refused.output
    revoked = await run("delegations", "revoke", granted["delegation_id"], "--by", "ada")
    assert revoked.exit_code == 0, revoked.output
    assert (await env.app.delegations()) == []
