"""Standing decisions (issue 28): a tool's calls approved ahead of time — in one thread, one
owner's threads or the tenant, for a tool or a role, until revoked or lapsed — decided at once
with the decision named in the audit trail; kept across a restart, on both stores, through the
public API."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from starlette.requests import Request

from agboss import (
    DtoValidationError,
    ExecutionStatus,
    PauseKind,
    PauseResolution,
    StandingScope,
    UnknownStandingDecisionError,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
)
from agboss.cli._main import cli
from agboss.enums import Decider
from agboss.records._outputs import ExecutionOutput
from agboss.testing import TestEnv, call_tools, reply_with, test_with, tool_call
from agboss.web import Caller, pause_router
from tests.apps.desk import (
    BookExpenseTool,
    DeskRecorder,
    OfficeAgent,
    OfficeApplication,
    OfficeWorkflow,
)
from tests.apps.standing_app import (
    OrderDto,
    StandingAgent,
    StandingApplication,
    StandingLookupTool,
    StandingRecorder,
    StandingRefundChannel,
    StandingRefundTool,
    StandingVoidTool,
    StandingWorkflow,
)
from tests.interrupting import cut_off_in_tool
from tests.stores import STORE_KINDS, command_url, env_on
from tests.test_round_trips import ASK
from tests.test_round_trips import DONE as ROUND_DONE
from tests.test_web import serve

DONE = reply_with(WorkflowFinishTextDto, text="Done.")


pytestmark = pytest.mark.application.with_args(StandingApplication)


async def _call(
    env: TestEnv,
    tool_class: type[Any],
    *,
    thread: str,
    owner: str = "ada",
    tenant: str | None = None,
) -> ExecutionOutput:
    """One execution whose agent calls ``tool_class`` once (its own script: a call that
    pauses leaves its closing turn to no other)."""
    request = WorkflowStartTextDto(text=f"o-1 in {thread} of {tenant}, {uuid.uuid4().hex}")
    env.mock_llm(StandingAgent).when(input=request).then_return(
        call_tools(tool_call(tool_class, order_id="o-1")), DONE
    )
    return await env.app.execute(
        StandingWorkflow, request, owner_id=owner, thread_id=thread, tenant_id=tenant
    )


async def test_a_call_a_standing_decision_covers_is_decided_at_once_and_the_audit_names_it(
    env: TestEnv,
    recorded: StandingRecorder,
) -> None:
    decision = await env.app.allow(
        StandingRefundTool,
        scope=StandingScope.THREAD,
        thread_id="t-1",
        granted_by="ada",
        reason="refunds of this order are fine",
    )
    result = await _call(env, StandingRefundTool, thread="t-1")
    assert result.status is ExecutionStatus.COMPLETED
    assert recorded.asked == []
    assert recorded.runs == ["standing-refund-tool o-1"]
    done = await env.app.get(result.execution_id, record=True)
    assert done.record is not None
    [entry] = done.record.pauses
    assert entry.resolution is PauseResolution.DECIDED
    assert entry.responder == f"standing:{decision.decision_id}" == decision.responder
    assert entry.decision is not None
    assert entry.decision.approved
    [logged] = (await env.app.decisions()).entries  # the decision log names it too
    assert (logged.entry.decided_by, logged.entry.who) == (Decider.STANDING, decision.responder)


async def test_decisions_granted_at_one_instant_follow_the_order_they_were_granted_in(
    env: TestEnv,
) -> None:
    granted = [
        await env.app.allow(
            StandingRefundTool,
            scope=StandingScope.THREAD,
            thread_id="t-1",
            granted_by=who,
            reason=f"fine by {who}",
        )
        for who in ("ada", "bo", "cy", "dan", "eve")
    ]  # the test clock stands still: one instant, ids in no order of their own
    assert len({d.granted_at for d in granted}) == 1
    listed = await env.app.standing()
    assert [d.decision_id for d in listed] == [d.decision_id for d in granted]  # oldest first
    result = await _call(env, StandingRefundTool, thread="t-1")
    done = await env.app.get(result.execution_id, record=True)
    assert done.record is not None
    [entry] = done.record.pauses
    assert entry.responder == granted[0].responder  # the first granted decided


async def test_a_decision_holds_only_in_its_scope(env: TestEnv, recorded: StandingRecorder) -> None:
    await env.app.allow(
        StandingRefundTool, scope=StandingScope.THREAD, thread_id="t-1", granted_by="ada"
    )
    await env.app.allow(StandingVoidTool, scope=StandingScope.OWNER, owner_id="bo", granted_by="bo")
    other_thread = await _call(env, StandingRefundTool, thread="t-2")
    other_tool = await _call(env, StandingVoidTool, thread="t-1")
    bos = await _call(env, StandingVoidTool, thread="t-3", owner="bo")
    other_owner = await _call(env, StandingVoidTool, thread="t-4", owner="cy")
    assert [r.status for r in (other_thread, other_tool, bos, other_owner)] == [
        ExecutionStatus.PAUSED,
        ExecutionStatus.PAUSED,
        ExecutionStatus.COMPLETED,
        ExecutionStatus.PAUSED,
    ]
    assert recorded.asked == [
        "standing-refund-tool o-1",
        "standing-void-tool o-1",
        "standing-void-tool o-1",
    ]


async def test_a_tenant_wide_decision_for_a_role_covers_every_tool_that_asks_it_there(
    env: TestEnv,
    recorded: StandingRecorder,
) -> None:
    await env.app.allow(
        StandingRefundChannel, scope=StandingScope.TENANT, tenant_id="acme", granted_by="admin"
    )
    refund = await _call(env, StandingRefundTool, thread="t-1", tenant="acme")
    void = await _call(env, StandingVoidTool, thread="t-2", owner="bo", tenant="acme")
    elsewhere = await _call(env, StandingVoidTool, thread="t-3", tenant="other")
    assert (refund.status, void.status, elsewhere.status) == (
        ExecutionStatus.COMPLETED,
        ExecutionStatus.COMPLETED,
        ExecutionStatus.PAUSED,
    )
    assert recorded.runs == ["standing-refund-tool o-1", "standing-void-tool o-1"]


async def test_a_decision_holds_across_a_restart_until_revoked_and_revoking_twice_is_a_repeat(
    env: TestEnv,
) -> None:
    decision = await env.app.allow(
        StandingRefundTool, scope=StandingScope.OWNER, owner_id="ada", granted_by="ada"
    )
    await env.restart()
    assert (await _call(env, StandingRefundTool, thread="t-1")).status is ExecutionStatus.COMPLETED
    assert [d.decision_id for d in await env.app.standing()] == [decision.decision_id]
    revoked = await env.app.revoke(decision.decision_id, revoked_by="ada")
    assert revoked.revoked_by == "ada"
    assert revoked.revoked_at is not None
    await env.restart()
    assert (await _call(env, StandingRefundTool, thread="t-2")).status is ExecutionStatus.PAUSED
    assert await env.app.standing() == []
    assert [d.decision_id for d in await env.app.standing(revoked=True)] == [decision.decision_id]
    again = await env.app.revoke(decision.decision_id, revoked_by="bo")
    assert again == revoked  # the first revocation stands
    with pytest.raises(UnknownStandingDecisionError) as caught:
        await env.app.revoke("sd-0000000000000000", revoked_by="ada")
    assert caught.value.code == "standing.unknown"


async def test_a_decision_lapses_at_its_until(env: TestEnv) -> None:
    await env.app.allow(
        StandingRefundTool,
        scope=StandingScope.THREAD,
        thread_id="t-1",
        granted_by="ada",
        until=env.clock.now() + timedelta(hours=1),
    )
    assert (await _call(env, StandingRefundTool, thread="t-1")).status is ExecutionStatus.COMPLETED
    await env.clock.advance(timedelta(hours=1))
    assert (await _call(env, StandingRefundTool, thread="t-1")).status is ExecutionStatus.PAUSED


async def test_a_question_already_waiting_is_not_decided_by_a_decision_granted_after_it(
    env: TestEnv,
    recorded: StandingRecorder,
) -> None:
    waiting = await _call(env, StandingRefundTool, thread="t-1")
    await env.app.allow(
        StandingRefundTool, scope=StandingScope.THREAD, thread_id="t-1", granted_by="ada"
    )
    assert (await env.app.get(waiting.execution_id)).status is ExecutionStatus.PAUSED
    await env.app.recover()
    assert (await env.app.get(waiting.execution_id)).status is ExecutionStatus.PAUSED
    assert recorded.runs == []


@pytest.mark.parametrize(
    ("target", "options", "said"),
    [
        (StandingLookupTool, {"scope": StandingScope.TENANT}, "not a tool that asks a channel"),
        (OrderDto, {"scope": StandingScope.TENANT}, "not a tool that asks a channel"),
        (StandingRefundTool, {"scope": "thread", "thread_id": "t"}, "must be a StandingScope"),
        (StandingRefundTool, {"scope": StandingScope.THREAD}, "takes thread_id= and nothing else"),
        (
            StandingRefundTool,
            {"scope": StandingScope.TENANT, "owner_id": "ada"},
            "takes neither thread_id= nor owner_id=",
        ),
        (
            StandingRefundTool,
            {"scope": StandingScope.TENANT, "until": "tomorrow"},
            "must be a timezone-aware datetime in the future",
        ),
    ],
)
async def test_a_decision_that_cannot_hold_is_refused_with_what_to_pass(
    env: TestEnv, target: Any, options: dict[str, Any], said: str
) -> None:
    with pytest.raises(DtoValidationError) as caught:
        await env.app.allow(target, granted_by="ada", **options)
    assert said in caught.value.message
    assert caught.value.hint
    assert await env.app.standing(revoked=True) == []


@pytest.fixture(params=STORE_KINDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A store URL the commands open themselves (each in its own event loop)."""
    with command_url(request.param, tmp_path) as made:
        yield made


async def _granted(url: str) -> str:
    async with test_with(StandingApplication, store=url) as env:
        decision = await env.app.allow(
            StandingRefundChannel,
            scope=StandingScope.OWNER,
            owner_id="ada",
            granted_by="ada",
            reason="ada's refunds [bold]are fine[/bold]",
        )
        return decision.decision_id


def test_standing_decisions_are_listed_and_revoked_from_the_command_line(url: str) -> None:
    decision_id = asyncio.run(_granted(url))
    runner = CliRunner()
    where = ["--app", "tests.test_standing:StandingApplication", "--store", url]
    listed = runner.invoke(cli, ["standing", "list", *where, "--json"])
    assert listed.exit_code == 0, listed.output
    [shown] = [json.loads(line) for line in listed.output.splitlines()]
    assert shown["decision_id"] == decision_id
    assert (shown["role"], shown["scope"], shown["owner_id"]) == (
        "standing-refund-channel",
        "owner",
        "ada",
    )
    table = runner.invoke(cli, ["standing", "list", *where])
    assert decision_id in table.output
    assert "owner ada" in table.output
    revoked = runner.invoke(cli, ["standing", "revoke", decision_id, *where, "--by", "ops"])
    assert revoked.exit_code == 0, revoked.output
    assert f"revoked {decision_id} (by ops)" in revoked.output
    assert runner.invoke(cli, ["standing", "list", *where, "--json"]).output == ""
    every = runner.invoke(cli, ["standing", "list", *where, "--revoked", "--json"])
    assert json.loads(every.output)["revoked_by"] == "ops"
    unknown = runner.invoke(cli, ["standing", "revoke", "sd-nothing", *where, "--by", "ops"])
    assert unknown.exit_code == 1
    assert "standing.unknown" in unknown.output


TOKENS = {
    "tok-ada": Caller(owner_id="ada"),
    "tok-bo": Caller(owner_id="bo"),
    "tok-desk": Caller(answered_by="desk-7"),
}


async def _bearer(request: Request) -> Caller | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return TOKENS.get(token) if scheme == "Bearer" else None


async def test_a_signed_in_owner_lists_and_revokes_their_own_standing_decisions_over_http(
    env: TestEnv,
) -> None:
    await _call(env, StandingRefundTool, thread="t-1")  # ada's thread
    app = env.app
    hers = await app.allow(
        StandingRefundTool, scope=StandingScope.THREAD, thread_id="t-1", granted_by="admin"
    )
    his = await app.allow(
        StandingVoidTool, scope=StandingScope.OWNER, owner_id="bo", granted_by="x"
    )
    await app.allow(StandingRefundChannel, scope=StandingScope.TENANT, granted_by="admin")
    server, task, port = await serve(pause_router(app, authenticate=_bearer, page=False))
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:

            async def call(method: str, path: str, token: str, **query: str) -> httpx.Response:
                headers = {"Authorization": f"Bearer {token}"}
                return await http.request(method, path, params=query, headers=headers)

            listed = await call("GET", "/standing", "tok-ada")
            assert listed.status_code == 200, listed.text
            [shown] = listed.json()["decisions"]
            assert (shown["decision_id"], shown["scope"], shown["thread_id"]) == (
                hers.decision_id,
                "thread",
                "t-1",
            )
            assert "tenant_id" not in shown
            others = await call("DELETE", f"/standing/{his.decision_id}", "tok-ada")
            assert (others.status_code, others.json()["code"]) == (404, "standing.unknown")
            revoked = await call("DELETE", f"/standing/{his.decision_id}", "tok-bo")
            assert revoked.status_code == 200, revoked.text
            assert revoked.json()["revoked_by"] == "bo"
            assert (await call("GET", "/standing", "tok-bo")).json()["decisions"] == []
            every = await call("GET", "/standing", "tok-bo", revoked="true")
            assert [d["decision_id"] for d in every.json()["decisions"]] == [his.decision_id]
            desk = await call("GET", "/standing", "tok-desk")
            assert desk.status_code == 403
            assert (
                await call("DELETE", f"/standing/{hers.decision_id}", "nobody")
            ).status_code == (401)
    finally:
        server.should_exit = True
        await task
    assert [d.decision_id for d in await app.standing(owner_id="ada")] == [hers.decision_id]


@pytest.fixture(params=STORE_KINDS)
async def office(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TestEnv]:
    async with env_on(request.param, tmp_path, OfficeApplication) as made:
        made.mock_llm(OfficeAgent).then_return(ASK, ROUND_DONE)
        yield made


async def test_a_standing_decision_does_not_decide_whether_a_call_cut_off_runs_again(
    office: TestEnv,
) -> None:
    result = await office.app.execute(
        OfficeWorkflow, WorkflowStartTextDto(text="Book the taxi"), owner_id="user-1"
    )
    [approval] = result.pending
    assert approval.pause_id is not None
    # Granted while the first question waits: it decides neither that one (a person was
    # asked) nor whether the call, cut off mid-run, runs again (it may have run).
    await office.app.allow(BookExpenseTool, scope=StandingScope.TENANT, granted_by="admin")
    question = await cut_off_in_tool(office, approval.pause_id, DeskRecorder(), owner_id="user-1")
    assert question.ask.kind is PauseKind.INTERRUPTED
    assert question.pause_id is not None
    waiting = await office.app.get(result.execution_id)
    assert waiting.status is ExecutionStatus.PAUSED
    assert [p.ask.kind for p in waiting.pending] == [PauseKind.INTERRUPTED]
