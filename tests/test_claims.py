"""Claiming a question (issue 57, point 1): a person who may answer a waiting question claims
it; everyone else sees who handles it; while the claim holds another answerer's answer is
refused — unless the role allows it — and the question keeps waiting; the claim ends when
released, when answered, or after the time its role sets. On both stores, with two instances,
through the public API."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result
from starlette.requests import Request

from agboss import (
    App,
    AssemblyError,
    ChannelOf,
    Claims,
    DtoValidationError,
    ExecutionStatus,
    NotPausedError,
    PauseAnswerer,
    PauseClaimedError,
    PauseStatus,
    UnknownPauseError,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
    agent,
    application,
    channel,
    channel_role,
    tool,
    workflow,
)
from agboss.cli._main import cli
from agboss.testing import TestEnv, call_tools, reply_with, tool_call
from agboss.web import Caller, pause_router
from tests.apps import claims_app
from tests.apps.claims_app import (
    HALF_HOUR,
    ClaimedRefundTool,
    ClaimsAgent,
    ClaimsApplication,
    ClaimsRecorder,
    ClaimsWorkflow,
    OpenVoidTool,
    OrderDto,
    PairedWriteOffTool,
)
from tests.apps.office_parts import DeskDoneDto, office_flow
from tests.test_web import serve

pytestmark = pytest.mark.application.with_args(ClaimsApplication, instances=2)

DONE = reply_with(WorkflowFinishTextDto, text="Done.")


async def _asked(
    env: TestEnv, recorded: ClaimsRecorder, tool: type[Any] = ClaimedRefundTool
) -> str:
    """A tree waiting on one question of ``tool``'s role: its id, as the desk got it."""
    request = WorkflowStartTextDto(text=f"order o-1 by {tool.__name__}")
    env.mock_llm(ClaimsAgent).when(input=request).then_return(
        call_tools(tool_call(tool, order_id="o-1")), DONE
    )
    paused = await env.app.execute(ClaimsWorkflow, request, owner_id="ada")
    assert paused.status is ExecutionStatus.PAUSED
    return recorded.pause_ids[-1]


async def test_a_claimed_question_shows_who_handles_it_and_takes_only_their_answer(
    env: TestEnv, recorded: ClaimsRecorder
) -> None:
    pause_id = await _asked(env, recorded)
    claim = await env.app.claim(pause_id, answered_by="ann")
    assert claim.claimed_by == "ann"
    assert claim.claimed_until == env.clock.now() + HALF_HOUR
    [listed] = (await env.app.pending()).entries  # everyone sees who handles it
    assert (listed.claimed_by, listed.claimed_until) == ("ann", claim.claimed_until)
    described = await env.apps[1].describe_pause(pause_id)
    assert (described.claimed_by, described.claimed_until) == ("ann", claim.claimed_until)
    with pytest.raises(PauseClaimedError) as refused:  # on any instance
        await env.apps[1].answer(pause_id, decision={"approved": True}, answered_by="bob")
    assert refused.value.code == "pause.claimed"
    assert "ann handles this question" in refused.value.message
    with pytest.raises(PauseClaimedError):  # nor does bob's claim take it from her
        await env.app.claim(pause_id, answered_by="bob")
    assert (await env.app.describe_pause(pause_id)).status is PauseStatus.PENDING
    assert recorded.runs == []
    again = await env.app.claim(pause_id, answered_by="ann")  # hers again: renewed
    assert again.claimed_by == "ann"
    done = await env.app.resume(pause_id, decision={"approved": True}, answered_by="ann")
    assert done.status is ExecutionStatus.COMPLETED
    assert recorded.runs == ["claimed-refund-tool o-1"]
    with pytest.raises(NotPausedError):  # answered: nothing left to claim
        await env.app.claim(pause_id, answered_by="bob")


async def test_a_released_claim_lets_anyone_answer(env: TestEnv, recorded: ClaimsRecorder) -> None:
    pause_id = await _asked(env, recorded)
    await env.app.claim(pause_id, answered_by="ann")
    assert not await env.app.release(pause_id, answered_by="bob")  # not his to release
    assert await env.apps[1].release(pause_id, answered_by="ann")
    assert not await env.app.release(pause_id, answered_by="ann")  # released already
    [listed] = (await env.app.pending()).entries
    assert listed.claimed_by is None
    receipt = await env.app.answer(pause_id, decision={"approved": False}, answered_by="bob")
    assert receipt.responder == "bob"


async def test_a_claim_ends_after_the_time_its_role_sets(
    env: TestEnv, recorded: ClaimsRecorder
) -> None:
    pause_id = await _asked(env, recorded)
    await env.app.claim(pause_id, answered_by="ann")
    await env.clock.advance(HALF_HOUR - timedelta(seconds=1))
    with pytest.raises(PauseClaimedError):
        await env.app.answer(pause_id, decision={"approved": True}, answered_by="bob")
    await env.clock.advance(timedelta(seconds=1))
    [listed] = (await env.app.pending()).entries
    assert listed.claimed_by is None  # over: nobody handles it
    taken = await env.app.claim(pause_id, answered_by="bob")
    assert taken.claimed_by == "bob"
    with pytest.raises(PauseClaimedError):  # and now ann waits for bob
        await env.app.answer(pause_id, decision={"approved": True}, answered_by="ann")


async def test_two_instances_claiming_one_question_at_once_give_it_to_one(
    env: TestEnv, recorded: ClaimsRecorder
) -> None:
    pause_id = await _asked(env, recorded)
    results = await asyncio.gather(
        env.app.claim(pause_id, answered_by="ann"),
        env.apps[1].claim(pause_id, answered_by="bob"),
        return_exceptions=True,
    )
    won = [result for result in results if not isinstance(result, BaseException)]
    lost = [result for result in results if isinstance(result, PauseClaimedError)]
    assert len(won) == 1
    assert len(lost) == 1
    assert lost[0].claimed_by == won[0].claimed_by
    described = await env.app.describe_pause(pause_id)
    assert described.claimed_by == won[0].claimed_by


async def test_an_answer_read_before_a_claim_is_refused_by_its_write(
    env: TestEnv, recorded: ClaimsRecorder
) -> None:
    # Bob's answer read the question unclaimed; Ann's claim committed before his answer's
    # write: the write itself refuses it, and the question waits for Ann.
    pause_id = await _asked(env, recorded)
    store = env.apps[1].store  # the instance that did not ask it reads it from the store
    original = store.pauses.find_with_execution

    async def claimed_meanwhile(tenant_id: str, wanted: str) -> Any:
        found = await original(tenant_id, wanted)
        await env.app.claim(pause_id, answered_by="ann")
        return found

    store.pauses.find_with_execution = claimed_meanwhile  # type: ignore[method-assign]
    try:
        with pytest.raises(PauseClaimedError) as refused:
            await env.apps[1].answer(pause_id, decision={"approved": True}, answered_by="bob")
    finally:
        store.pauses.find_with_execution = original  # type: ignore[method-assign]
    assert refused.value.claimed_by == "ann"
    assert (await env.app.describe_pause(pause_id)).status is PauseStatus.PENDING


async def test_a_role_that_lets_others_answer_takes_their_answer_while_claimed(
    env: TestEnv, recorded: ClaimsRecorder
) -> None:
    pause_id = await _asked(env, recorded, OpenVoidTool)
    await env.app.claim(pause_id, answered_by="ann")
    done = await env.app.resume(pause_id, decision={"approved": True}, answered_by="bob")
    assert done.status is ExecutionStatus.COMPLETED
    assert recorded.runs == ["open-void-tool o-1"]


async def test_what_cannot_be_claimed_is_refused_with_what_to_do(
    env: TestEnv, recorded: ClaimsRecorder
) -> None:
    pause_id = await _asked(env, recorded, PairedWriteOffTool)
    with pytest.raises(DtoValidationError) as several:  # each voter answers it
        await env.app.claim(pause_id, answered_by="ann")
    assert "several approvals" in several.value.message
    with pytest.raises(UnknownPauseError):
        await env.app.claim("f" * 32, answered_by="ann")
    with pytest.raises(DtoValidationError):
        await env.app.claim(pause_id, answered_by=" ")


async def test_a_claim_that_would_hold_for_no_time_is_refused_when_assembled(
    tmp_path: Path,
) -> None:
    @channel_role(
        name="instant-desk-channel",
        description="Claims that end as they begin",
        approves=OrderDto,
        answered_by=PauseAnswerer.CHANNEL,
        claims=Claims(lasts=timedelta(0)),
    )
    class InstantDeskChannel(ChannelOf[OrderDto]): ...

    @channel(name="instant-desk-desk-channel", description="The desk", deps=[ClaimsRecorder])
    class InstantDesk(claims_app._Desk, InstantDeskChannel): ...

    @tool(
        name="instant-refund-tool",
        description="Refunds",
        input=OrderDto,
        output=DeskDoneDto,
        channel=InstantDeskChannel,
        deps=[ClaimsRecorder],
    )
    class InstantRefundTool(ClaimedRefundTool): ...

    @agent(name="instant-agent", description="d", prompt="p", model="m", tools=[InstantRefundTool])
    class InstantAgent: ...

    @workflow(name="instant-workflow", version="1", flow=office_flow(InstantAgent))
    class InstantWorkflow: ...

    @application(name="instant-application", workflows=[InstantWorkflow], channels=[InstantDesk])
    class InstantApplication: ...

    with pytest.raises(AssemblyError) as caught:
        await App.create(InstantApplication, store=tmp_path / "agboss.db")
    found = {(v.rule, v.component) for v in caught.value.violations}
    assert ("channel.claims", "instant-desk-channel") in found


async def test_a_claim_over_http_names_the_question_in_the_body_and_shows_in_the_inbox(
    env: TestEnv, recorded: ClaimsRecorder
) -> None:
    pause_id = await _asked(env, recorded)
    people = {
        "tok-ann": Caller(answered_by="ann"),  # the desk's clerks, as the channel's side
        "tok-bob": Caller(answered_by="bob"),
        "tok-ada": Caller(owner_id="ada"),  # the thread's owner, signed in
    }

    async def signed_in(request: Request) -> Caller | None:
        return people.get(request.headers.get("authorization", "").removeprefix("Bearer "))

    def bearer(token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    server, task, port = await serve(pause_router(env.app, authenticate=signed_in, page=False))
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            claimed = await http.post(
                "/claims", json={"pause_id": pause_id}, headers=bearer("tok-ann")
            )
            inbox = await http.get("/pauses", headers=bearer("tok-ada"))
            refused = await http.post(
                "/answers",
                json={"pause_id": pause_id, "decision": {"approved": True}},
                headers=bearer("tok-bob"),
            )
            taken = await http.post(
                "/claims", json={"pause_id": pause_id}, headers=bearer("tok-bob")
            )
            released = await http.post(
                "/claims/release", json={"pause_id": pause_id}, headers=bearer("tok-ann")
            )
            unnamed = await http.post("/claims", json={}, headers=bearer("tok-ann"))
    finally:
        server.should_exit = True
        await task
    assert claimed.status_code == 200, claimed.text
    assert claimed.json()["claimed_by"] == "ann"
    assert pause_id not in claimed.text  # the id never leaves the server: its reference does
    [entry] = inbox.json()["entries"]
    assert entry["claimed_by"] == "ann"
    assert entry["claimed_until"] is not None
    for response in (refused, taken):
        assert response.status_code == 409, response.text
        assert response.json()["code"] == "pause.claimed"
    assert released.status_code == 200, released.text
    assert released.json()["released"] is True
    assert unnamed.status_code == 422
    assert (await env.app.describe_pause(pause_id)).claimed_by is None


async def test_a_claim_from_the_command_line_is_listed_and_released(
    env: TestEnv, recorded: ClaimsRecorder, env_store: str
) -> None:
    pause_id = await _asked(env, recorded)
    url = env_store
    runner = CliRunner()

    async def run(*args: str) -> Result:
        command = [*args, "--app", "tests.apps.claims_app:ClaimsApplication", "--store", url]
        return await asyncio.to_thread(runner.invoke, cli, command)  # a loop of its own

    claimed = await run("pauses", "claim", pause_id, "--answered-by", "ann")
    assert claimed.exit_code == 0, claimed.output
    assert "ann handles it until" in claimed.output
    listed = await run("pauses", "list", "--json")
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.output)["claimed_by"] == "ann"
    refused = await run("pauses", "claim", pause_id, "--answered-by", "bob")
    assert refused.exit_code == 1
    assert "pause.claimed" in refused.output
    released = await run("pauses", "release", pause_id, "--answered-by", "ann")
    assert released.exit_code == 0, released.output
    assert "released" in released.output
    assert (await env.app.describe_pause(pause_id)).claimed_by is None
