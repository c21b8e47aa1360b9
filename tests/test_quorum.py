"""Several approvers on one question (issue 28): a role's ``approvals=`` counts votes on one
pause — each recorded with its own audit entry, the same voter twice a repeat — and resolves
it once the quorum is reached or can no longer be; ``distinct_from_owner`` keeps the person
who asked out. On both stores, through the public API, with two instances voting at once."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from starlette.requests import Request

from agboss import (
    AgentFailedError,
    AlreadyVotedError,
    AssemblyError,
    ChannelOf,
    DtoValidationError,
    ExecutionStatus,
    NotAnAnswererError,
    NotPausedError,
    PauseAnswerer,
    PauseAnswererError,
    PauseResolution,
    Quorum,
    StandingScope,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
    agent,
    application,
    channel,
    channel_role,
    provide,
    workflow,
)
from agboss.cli._main import cli
from agboss.records import DecisionEvent
from agboss.records._outputs import ExecutionOutput
from agboss.testing import TestEnv, call_tools, reply_with, test_with, tool_call
from agboss.web import Caller, pause_router
from tests.apps.office_parts import office_flow
from tests.apps.quorum_app import (
    IBAN,
    DeskChannel,
    PayDto,
    PaymentApprovalChannel,
    PayTool,
    QuorumRecorder,
    RefundTool,
    TreasuryAgent,
    TreasuryApplication,
    TreasuryTool,
    TreasuryWorkflow,
    WireTool,
    WriteOffTool,
    treasury_tool,
)
from tests.apps.recorded import recording
from tests.stores import STORE_KINDS, command_url, store_url
from tests.test_web import serve

DONE = reply_with(WorkflowFinishTextDto, text="Done.")


pytestmark = pytest.mark.application.with_args(TreasuryApplication, instances=2)


async def _call(
    env: TestEnv, tool_class: type[Any], order: str, *, amount: int = 500, owner: str = "ada"
) -> ExecutionOutput:
    """One execution whose agent calls ``tool_class`` once; paused on its question."""
    request = WorkflowStartTextDto(text=f"{tool_class.__name__} {order}")
    env.mock_llm(TreasuryAgent).when(input=request).then_return(
        call_tools(tool_call(tool_class, order_id=order, amount=amount)), DONE
    )
    return await env.app.execute(TreasuryWorkflow, request, owner_id=owner, thread_id=order)


async def _paid(
    env: TestEnv, recorded: QuorumRecorder, order: str = "o-1"
) -> tuple[ExecutionOutput, str]:
    paused = await _call(env, PayTool, order)
    assert paused.status is ExecutionStatus.PAUSED
    return paused, recorded.sent[f"pay-tool {order}"]


async def test_a_question_waits_for_its_quorum_and_resolves_approved_when_it_is_reached(
    env: TestEnv,
    recorded: QuorumRecorder,
) -> None:
    paused, pause_id = await _paid(env, recorded)
    [pending] = paused.pending
    assert pending.votes is not None
    assert (pending.votes.needed, pending.votes.eligible) == (2, ("fin-1", "fin-2", "fin-3"))
    first = await env.app.answer(
        pause_id, decision={"approved": True, "reason": "budgeted"}, answered_by="fin-1"
    )
    assert first.votes is not None
    assert (first.votes.approvals, first.votes.outcome()) == (1, None)
    assert (first.responder, first.decision.approved, first.repeated) == ("fin-1", True, False)
    waiting = await env.app.get(paused.execution_id)
    assert waiting.status is ExecutionStatus.PAUSED
    [still] = waiting.pending
    assert still.votes is not None
    assert [(v.voter, v.approved, v.reason) for v in still.votes.votes] == [
        ("fin-1", True, "budgeted")
    ]
    [listed] = (await env.app.pending(owner_id="ada")).entries
    assert listed.pause.votes == still.votes  # the inbox shows the votes so far
    assert recorded.runs == []
    done = await env.apps[1].resume(
        pause_id, decision={"approved": True}, answered_by="fin-3", record=True
    )
    assert done.status is ExecutionStatus.COMPLETED
    assert recorded.runs == ["pay-tool o-1"]
    assert done.record is not None
    [entry] = done.record.pauses
    assert entry.resolution is PauseResolution.REPLIED
    assert entry.responder == "fin-1, fin-3"
    assert entry.decision is not None
    assert entry.decision.approved
    assert [(v.voter, v.approved) for v in entry.votes] == [("fin-1", True), ("fin-3", True)]
    # The decision log: each vote as it was cast, then the decision they made.
    logged = [(e.entry.event, e.entry.who) for e in (await env.app.decisions()).entries]
    assert logged == [
        (DecisionEvent.VOTE, "fin-1"),
        (DecisionEvent.VOTE, "fin-3"),
        (DecisionEvent.DECISION, "fin-1, fin-3"),
    ]


async def test_a_question_is_rejected_with_the_reasons_once_its_quorum_cannot_be_reached(
    env: TestEnv,
    recorded: QuorumRecorder,
) -> None:
    _, pause_id = await _paid(env, recorded)
    await env.app.resume(
        pause_id, decision={"approved": False, "reason": "over budget"}, answered_by="fin-2"
    )
    await env.app.resume(pause_id, decision={"approved": True}, answered_by="fin-1")
    done = await env.app.resume(
        pause_id, decision={"approved": False}, answered_by="fin-3", record=True
    )
    assert done.status is ExecutionStatus.COMPLETED  # the model read the rejection
    assert recorded.runs == []
    assert done.record is not None
    [entry] = done.record.pauses
    assert entry.decision is not None
    assert not entry.decision.approved
    assert entry.decision.reason is not None
    assert "fin-2 (over budget)" in entry.decision.reason
    assert "2 approvals were needed" in entry.decision.reason
    assert entry.responder == "fin-2, fin-3"
    assert [v.voter for v in entry.votes] == ["fin-2", "fin-1", "fin-3"]


async def test_one_rejection_decides_at_once_under_rejection_decides(
    env: TestEnv, recorded: QuorumRecorder
) -> None:
    paused = await _call(env, WireTool, "w-1")
    pause_id = recorded.sent["wire-tool w-1"]
    [pending] = paused.pending
    assert pending.votes is not None
    assert pending.votes.eligible is None  # anyone the channel authenticates
    await env.app.resume(pause_id, decision={"approved": True}, answered_by="anyone-1")
    done = await env.app.resume(
        pause_id,
        decision={"approved": False, "reason": "sanctioned country"},
        answered_by="anyone-2",
        record=True,
    )
    assert done.status is ExecutionStatus.COMPLETED
    assert recorded.runs == []
    assert done.record is not None
    [entry] = done.record.pauses
    assert entry.decision is not None
    assert entry.decision.reason == "rejected by anyone-2 (sanctioned country)"
    assert entry.responder == "anyone-2"


async def test_the_same_voter_twice_is_a_repeat_not_a_second_vote(
    env: TestEnv, recorded: QuorumRecorder
) -> None:
    paused, pause_id = await _paid(env, recorded)
    vote = {"approved": True, "reason": "ok"}
    await env.app.answer(pause_id, decision=vote, answered_by="fin-1")
    again = await env.app.answer(pause_id, decision=vote, answered_by="fin-1")
    assert again.repeated
    assert again.votes is not None
    assert again.votes.approvals == 1
    with pytest.raises(AlreadyVotedError) as changed:
        await env.app.answer(pause_id, decision={"approved": False}, answered_by="fin-1")
    assert changed.value.code == "pause.already-voted"
    assert "fin-1 already voted on this question (approved it)" in changed.value.message
    with pytest.raises(AlreadyVotedError):  # resume takes no repeat: nothing would move
        await env.app.resume(pause_id, decision=vote, answered_by="fin-1")
    waiting = await env.app.get(paused.execution_id)
    [still] = waiting.pending
    assert still.votes is not None
    assert [v.voter for v in still.votes.votes] == ["fin-1"]
    assert recorded.runs == []


async def test_the_owner_and_anyone_not_named_are_refused_and_the_question_keeps_waiting(
    env: TestEnv,
    recorded: QuorumRecorder,
) -> None:
    paused, pause_id = await _paid(env, recorded)
    with pytest.raises(NotAnAnswererError) as owner:
        await env.app.answer(pause_id, decision={"approved": True}, answered_by="ada")
    assert owner.value.code == "pause.not-an-answerer"
    assert "distinct_from_owner" in owner.value.message
    with pytest.raises(NotAnAnswererError) as stranger:
        await env.app.answer(pause_id, decision={"approved": True}, answered_by="mallory")
    assert "mallory is not among the voters" in stranger.value.message
    with pytest.raises(PauseAnswererError):  # the credential a channel pause takes
        await env.app.answer(pause_id, decision={"approved": True}, owner_id="fin-1")
    with pytest.raises(DtoValidationError) as overridden:
        await env.app.answer(
            pause_id,
            decision={"approved": True, "override_arguments": {"order_id": "o-1", "amount": 1}},
            answered_by="fin-1",
        )
    assert "cannot change its arguments" in overridden.value.message
    waiting = await env.app.get(paused.execution_id)
    [still] = waiting.pending
    assert still.votes is not None
    assert still.votes.votes == ()


async def test_a_role_that_refuses_the_owner_takes_anyone_else_as_its_one_answer(
    env: TestEnv,
    recorded: QuorumRecorder,
) -> None:
    paused = await _call(env, RefundTool, "r-1", owner="ada")
    pause_id = recorded.sent["refund-tool r-1"]
    [pending] = paused.pending
    assert pending.votes is None  # no quorum: the first answer decides
    with pytest.raises(NotAnAnswererError):
        await env.app.resume(pause_id, decision={"approved": True}, answered_by="ada")
    done = await env.app.resume(pause_id, decision={"approved": True}, answered_by="bo")
    assert done.status is ExecutionStatus.COMPLETED
    assert recorded.runs == ["refund-tool r-1"]


async def test_a_thread_owner_role_takes_votes_from_the_named_owners_signed_in(
    env: TestEnv,
    recorded: QuorumRecorder,
) -> None:
    paused = await _call(env, WriteOffTool, "x-1", owner="dan")
    [pending] = paused.pending
    pause_id = pending.pause_id
    assert pause_id is not None  # a thread-owner pause's id is shown
    with pytest.raises(NotAnAnswererError):
        await env.app.resume(pause_id, decision={"approved": True}, owner_id="dan")
    with pytest.raises(PauseAnswererError):
        await env.app.resume(pause_id, decision={"approved": True}, answered_by="bo")
    await env.app.resume(pause_id, decision={"approved": True}, owner_id="bo")
    done = await env.app.resume(pause_id, decision={"approved": True}, owner_id="cy")
    assert done.status is ExecutionStatus.COMPLETED
    assert recorded.runs == ["write-off-tool x-1"]
    with pytest.raises(NotPausedError):  # a late voter finds it decided
        await env.app.resume(pause_id, decision={"approved": True}, owner_id="ada")


async def test_a_named_voter_finds_the_questions_on_other_peoples_threads_in_their_inbox(
    env: TestEnv,
    recorded: QuorumRecorder,
) -> None:
    await _call(env, WriteOffTool, "x-1", owner="dan")  # ada, bo and cy vote
    await env.clock.advance(timedelta(seconds=1))
    await _call(env, PayTool, "o-1", owner="ada")  # the finance desk votes, on its channel
    await env.clock.advance(timedelta(seconds=1))
    await _call(env, WriteOffTool, "x-2", owner="cy")
    app = env.app

    async def threads(**query: Any) -> list[str]:
        page = await app.pending(**query)
        assert await app.count_pending(**query) == len(page.entries)
        return [entry.thread_id for entry in page.entries]

    assert await threads(owner_id="ada") == ["o-1"]  # an owner's threads, as before
    assert await threads(voter="ada") == ["x-1", "x-2"]
    assert await threads(owner_id="ada", voter="ada") == ["x-1", "o-1", "x-2"]
    assert await threads(owner_id="cy", voter="cy") == ["x-1", "x-2"]  # cy's own once
    assert await threads(voter="dan") == []  # the asker is not named
    assert await threads(voter="fin-1") == []  # a channel role's voters answer on its side
    assert await threads(owner_id="ada", voter="ada", channel="partners-approval-channel") == [
        "x-1",
        "x-2",
    ]
    paged, after = [], None
    for _ in range(4):
        page = await app.pending(owner_id="ada", voter="ada", limit=1, after=after)
        paged += [entry.thread_id for entry in page.entries]
        after = page.next
        if after is None:
            break
    assert paged == ["x-1", "o-1", "x-2"]
    [entry] = (await app.pending(voter="bo", limit=1)).entries
    assert (entry.owner_id, entry.pause.votes is not None) == ("dan", True)
    pause_id = entry.pause.pause_id
    assert pause_id is not None  # a thread-owner question's id: the voter answers with it
    await app.resume(pause_id, decision={"approved": True}, owner_id="bo")
    assert await threads(voter="bo") == ["x-1", "x-2"]  # voted: it waits on the others
    await app.resume(pause_id, decision={"approved": True}, owner_id="ada")
    assert await threads(voter="bo") == ["x-2"]  # decided
    assert recorded.runs == ["write-off-tool x-1"]


async def test_a_signed_in_voters_inbox_over_http_lists_what_they_may_vote_on(
    env: TestEnv,
) -> None:
    await _call(env, WriteOffTool, "x-1", owner="dan")
    people = {"tok-bo": Caller(owner_id="bo"), "tok-dan": Caller(owner_id="dan")}

    async def signed_in(request: Request) -> Caller | None:
        return people.get(request.headers.get("authorization", "").removeprefix("Bearer "))

    server, task, port = await serve(pause_router(env.app, authenticate=signed_in, page=False))
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            listed = {
                token: (await http.get("/pauses", headers={"Authorization": f"Bearer {token}"}))
                for token in people
            }
    finally:
        server.should_exit = True
        await task
    for token, response in listed.items():
        assert response.status_code == 200, response.text
        [entry] = response.json()["entries"]  # the voter's and the asker's alike
        assert entry["thread_id"] == "x-1", token
        assert entry["votes"]["eligible"] == ["ada", "bo", "cy"]
        assert entry["answered_by"] == "thread-owner"  # answered on the page


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_questions_waiting_from_before_the_voters_index_are_found_by_their_voters(
    kind: str, tmp_path: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        async with test_with(TreasuryApplication, store=url) as env:
            await _call(env, WriteOffTool, "x-1", owner="dan")
        await _as_before_the_voters_index(kind, url)
        async with test_with(TreasuryApplication, store=url) as env:
            [entry] = (await env.app.pending(voter="bo")).entries
            assert await env.app.count_pending(voter="cy") == 1
            assert await env.app.count_pending(voter="dan") == 0
    assert entry.thread_id == "x-1"


async def _as_before_the_voters_index(kind: str, url: str) -> None:
    """The store as the version before the voters' index (step 17) left it: the steps
    since undone."""
    statements = [
        "DROP TABLE delegations",  # step 28
        "DROP INDEX executions_roots",  # step 27
        "DROP INDEX executions_roots_by_status",
        "ALTER TABLE pauses DROP COLUMN claimed_until",  # step 26
        "ALTER TABLE pauses DROP COLUMN claimed_by",
        "DROP TABLE decision_chains",  # step 25
        "DROP TABLE decision_log",
        "DROP TABLE continuations",  # step 24
        "DROP TABLE instances",  # step 23
        "DROP TABLE definitions",  # step 22
        "ALTER TABLE executions DROP COLUMN fingerprint",
        "ALTER TABLE executions DROP COLUMN resting_paths",  # step 21
        "ALTER TABLE executions DROP COLUMN resting_until",  # step 20
        "DROP INDEX standing_decisions_standing",  # step 19
        "ALTER TABLE standing_decisions DROP COLUMN granted_seq",
        "CREATE INDEX standing_decisions_standing ON standing_decisions "
        "(tenant_id, granted_at) WHERE revoked_at IS NULL",
        "DROP INDEX pauses_by_ref",  # step 18
        "ALTER TABLE pauses DROP COLUMN pause_ref",
        "DROP TABLE pause_voters",
        "UPDATE agboss_schema SET version = 16",
    ]
    if kind == "sqlite":
        path = url.removeprefix("sqlite:///")
        with contextlib.closing(sqlite3.connect(path)) as connection, connection:
            for statement in statements:
                connection.execute(statement)
        return
    from psycopg import AsyncConnection

    base, _, schema = url.partition("?schema=")
    async with await AsyncConnection.connect(base, autocommit=True) as connection:
        await connection.execute(f"SET search_path TO {schema}")
        for statement in statements:
            await connection.execute(statement)


async def test_two_instances_voting_at_once_count_each_other_and_the_call_runs_once(
    env: TestEnv,
    recorded: QuorumRecorder,
) -> None:
    orders = [f"o-{index}" for index in range(6)]
    for order in orders:
        await _paid(env, recorded, order)
    votes = [
        env.apps[index % 2].resume(
            recorded.sent[f"pay-tool {order}"], decision={"approved": True}, answered_by=voter
        )
        for order in orders
        for index, voter in enumerate(("fin-1", "fin-2"))
    ]
    outputs = await asyncio.gather(*votes, return_exceptions=True)
    assert not [o for o in outputs if isinstance(o, BaseException)], outputs
    assert sorted(recorded.runs) == sorted(f"pay-tool {order}" for order in orders)  # each ran once
    assert (await env.app.pending(owner_id="ada")).entries == []
    for output in outputs:
        assert isinstance(output, ExecutionOutput)
        record = (await env.app.get(output.execution_id, record=True)).record
        assert record is not None
        [entry] = record.pauses
        assert sorted(v.voter for v in entry.votes) == ["fin-1", "fin-2"]


async def test_the_same_voter_on_two_instances_at_once_counts_once(
    env: TestEnv, recorded: QuorumRecorder
) -> None:
    paused, pause_id = await _paid(env, recorded)
    vote = {"approved": True}
    receipts = await asyncio.gather(
        *(app.answer(pause_id, decision=vote, answered_by="fin-1") for app in env.apps)
    )
    assert sorted(receipt.repeated for receipt in receipts) == [False, True]
    waiting = await env.app.get(paused.execution_id)
    [still] = waiting.pending
    assert still.votes is not None
    assert [v.voter for v in still.votes.votes] == ["fin-1"]


async def test_votes_are_kept_across_a_restart_and_the_deadline_decides_if_they_do_not(
    env: TestEnv,
    recorded: QuorumRecorder,
) -> None:
    paused, pause_id = await _paid(env, recorded)
    await env.app.answer(pause_id, decision={"approved": True}, answered_by="fin-2")
    await env.restart()
    waiting = await env.app.get(paused.execution_id)
    [still] = waiting.pending
    assert still.votes is not None
    assert [v.voter for v in still.votes.votes] == ["fin-2"]
    await env.clock.jump(timedelta(days=2))  # each timer due runs once, as after a sleep
    done = await env.app.get(paused.execution_id, record=True)
    assert done.status is ExecutionStatus.COMPLETED
    assert recorded.runs == []
    assert done.record is not None
    [entry] = done.record.pauses
    assert entry.resolution is PauseResolution.EXPIRED
    assert [v.voter for v in entry.votes] == ["fin-2"]  # the vote cast stays in the audit
    with pytest.raises(NotPausedError):
        await env.app.answer(pause_id, decision={"approved": True}, answered_by="fin-1")


async def test_a_quorum_that_names_too_few_voters_fails_the_step_when_asked(
    env: TestEnv,
    recorded: QuorumRecorder,
) -> None:
    with pytest.raises(AgentFailedError) as failed:
        await _call(env, PayTool, "big-1", amount=2_000_000)
    assert "needs 2 approvals of pay-tool, but its quorum named 1 voter(s)" in str(failed.value)
    assert recorded.runs == []


async def test_a_standing_decision_does_not_stand_in_for_a_quorum(env: TestEnv) -> None:
    for target in (PayTool, PaymentApprovalChannel):
        with pytest.raises(DtoValidationError) as refused:
            await env.app.allow(target, scope=StandingScope.TENANT, granted_by="admin")
        assert "take several approvals" in refused.value.message
    assert await env.app.standing() == []


async def test_a_votes_words_are_masked_wherever_they_are_shown(
    env: TestEnv, recorded: QuorumRecorder
) -> None:
    paused, pause_id = await _paid(env, recorded)
    receipt = await env.app.answer(
        pause_id,
        decision={"approved": True, "reason": f"paid to {IBAN} before"},
        answered_by="fin-1",
    )
    assert receipt.votes is not None
    shown = [receipt.votes.votes[0].reason]
    [pending] = (await env.app.get(paused.execution_id)).pending
    assert pending.votes is not None
    shown.append(pending.votes.votes[0].reason)
    done = await env.app.resume(
        pause_id, decision={"approved": True}, answered_by="fin-2", record=True
    )
    assert done.record is not None
    shown.append(done.record.pauses[0].votes[0].reason)
    for reason in shown:
        assert reason is not None
        assert IBAN not in reason
        assert reason.startswith("paid to ")


TOKENS = {
    "tok-fin-1": Caller(answered_by="fin-1"),
    "tok-fin-2": Caller(answered_by="fin-2"),
}


async def _bearer(request: Request) -> Caller | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return TOKENS.get(token) if scheme == "Bearer" else None


async def test_votes_over_http_each_get_a_receipt_with_the_votes_so_far(
    env: TestEnv, recorded: QuorumRecorder
) -> None:
    paused, pause_id = await _paid(env, recorded)
    server, task, port = await serve(pause_router(env.app, authenticate=_bearer, page=False))
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:

            async def vote(token: str, approved: bool) -> httpx.Response:
                return await http.post(
                    "/answers",
                    json={"pause_id": pause_id, "decision": {"approved": approved}},
                    headers={"Authorization": f"Bearer {token}"},
                )

            first = await vote("tok-fin-1", True)
            assert first.status_code == 202, first.text
            assert first.json()["votes"]["needed"] == 2
            assert [v["voter"] for v in first.json()["votes"]["votes"]] == ["fin-1"]
            repeat = await vote("tok-fin-1", True)
            assert (repeat.status_code, repeat.json()["repeated"]) == (200, True)
            changed = await vote("tok-fin-1", False)
            assert (changed.status_code, changed.json()["code"]) == (409, "pause.already-voted")
            second = await vote("tok-fin-2", True)
            assert second.status_code == 202, second.text
            assert second.json()["votes"]["votes"][1]["voter"] == "fin-2"
    finally:
        server.should_exit = True
        await task
    await env.app.sweep()  # the second vote's tree moved in the background; here, at the latest
    done = await env.app.get(paused.execution_id)
    assert done.status is ExecutionStatus.COMPLETED
    assert recorded.runs == ["pay-tool o-1"]


def _role(**options: Any) -> type[Any]:
    @channel_role(
        name="bad-approval-channel",
        description="Approves",
        approves=PayDto,
        **{"answered_by": PauseAnswerer.CHANNEL, **options},
    )
    class BadApprovalChannel(ChannelOf[PayDto]): ...

    return BadApprovalChannel


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"approvals": 0}, "Quorum(needed=0) is not a whole number of at least 1"),
        ({"approvals": Quorum(3, of=["a", "b"])}, "names 2 voter(s), fewer than the 3"),
        ({"approvals": Quorum(2, of="ab")}, "is neither a list of answerer ids"),
        (
            {"approvals": 2, "answered_by": PauseAnswerer.THREAD_OWNER},
            "so its quorum names who votes",
        ),
        (
            {"distinct_from_owner": True, "answered_by": PauseAnswerer.THREAD_OWNER},
            "so nobody could answer",
        ),
        ({"approvals": "2"}, "approvals='2' is a str"),
    ],
)
async def test_a_quorum_that_could_never_approve_is_refused_at_assembly(
    options: dict[str, Any], said: str, tmp_path: Path
) -> None:
    role = _role(**options)

    @channel(name="desk-bad-approval-channel", description="Asks", deps=[QuorumRecorder])
    class DeskBadChannel(DeskChannel, role): ...  # type: ignore[valid-type,misc]  # a role made here

    @treasury_tool("bad-tool", role)
    class BadTool(TreasuryTool): ...

    @agent(name="bad-agent", description="Pays", model="gpt-4o", tools=[BadTool], prompt="Pay.")
    class BadAgent: ...

    @workflow(name="bad-workflow", description="Pays", version="1", flow=office_flow(BadAgent))
    class BadWorkflow: ...

    @application(
        name="bad-application",
        workflows=[BadWorkflow],
        channels=[DeskBadChannel],
        dependencies=[provide(QuorumRecorder)],
    )
    class BadApplication: ...

    with pytest.raises(AssemblyError) as refused:
        async with test_with(BadApplication, store=tmp_path / "agboss.db"):
            pass
    assert said in str(refused.value)


@pytest.fixture(params=STORE_KINDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A store URL the commands open themselves (each in its own event loop)."""
    with command_url(request.param, tmp_path) as made:
        yield made


async def _paused_on_wire(url: str) -> str:
    # A question with no deadline: the command line reads the system's clock.
    recorded = QuorumRecorder()
    async with test_with(TreasuryApplication, store=url, dependencies=recording(recorded)) as env:
        await _call(env, WireTool, "w-1")
        return recorded.sent["wire-tool w-1"]


def test_a_vote_from_the_command_line_says_what_it_waits_for(url: str) -> None:
    pause_id = asyncio.run(_paused_on_wire(url))
    runner = CliRunner()
    where = ["--app", "tests.apps.quorum_app:TreasuryApplication", "--store", url]
    voted = runner.invoke(cli, ["resume", pause_id, *where, "--answered-by", "fin-1", "--approve"])
    assert voted.exit_code == 0, voted.output
    assert "a vote, recorded. 1 of the 2 approvals it needs" in " ".join(voted.output.split())
    changed = runner.invoke(cli, ["resume", pause_id, *where, "--answered-by", "fin-1", "--reject"])
    assert changed.exit_code == 1
    assert "pause.already-voted" in changed.output
    listed = runner.invoke(cli, ["pauses", "list", *where, "--json"])
    [shown] = [json.loads(line) for line in listed.output.splitlines()]
    assert [v["voter"] for v in shown["votes"]["votes"]] == ["fin-1"]
    assert shown["votes"]["needed"] == 2


async def _asked_of_partners(url: str) -> None:
    async with test_with(TreasuryApplication, store=url) as env:
        await _call(env, WriteOffTool, "x-1", owner="dan")


def test_the_command_line_lists_the_questions_that_name_a_voter(url: str) -> None:
    asyncio.run(_asked_of_partners(url))
    runner = CliRunner()
    where = ["--app", "tests.apps.quorum_app:TreasuryApplication", "--store", url, "--json"]
    found = runner.invoke(cli, ["pauses", "list", *where, "--voter", "bo"])
    assert found.exit_code == 0, found.output
    [shown] = [json.loads(line) for line in found.output.splitlines()]
    assert (shown["thread_id"], shown["owner_id"]) == ("x-1", "dan")
    not_named = runner.invoke(cli, ["pauses", "list", *where, "--voter", "dan"])
    assert (not_named.exit_code, not_named.output) == (0, "")
