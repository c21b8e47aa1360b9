"""Answering from outside: the inbox across executions, and an answer that returns at once."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

from agboss import (
    DtoValidationError,
    ExecutionStatus,
    NotPausedError,
    PauseAnswerer,
    PauseResolution,
    PauseStatus,
    UnknownPauseError,
)
from agboss.store.writes import AcquireLease, write_one
from agboss.testing import TestEnv
from tests.apps import desk
from tests.apps.desk import BookExpenseTool, DeskDepositApprovalChannel, DeskRecorder, OfficeAgent
from tests.apps.desk import OfficeApplication as DeskApplication
from tests.apps.desk import OfficeWorkflow as DeskWorkflow
from tests.test_pauses import BOTH, REQUEST
from tests.waiting import eventually

pytestmark = pytest.mark.application.with_args(DeskApplication)


async def paused(env: TestEnv, owner: str, tenant: str = "acme") -> Any:
    env.mock_llm(OfficeAgent).then_return(BOTH)
    env.mock_of(DeskDepositApprovalChannel)
    return await env.app.execute(DeskWorkflow, REQUEST, tenant_id=tenant, owner_id=owner)


def owner_pause_of(result: Any) -> str:
    """The id of the thread owner's pause (the expense) of a paused desk execution."""
    [owner_pause] = [p for p in result.pending if p.answered_by is PauseAnswerer.THREAD_OWNER]
    assert owner_pause.pause_id is not None
    return owner_pause.pause_id


# ---- the inbox -------------------------------------------------------------------------------


async def test_the_inbox_lists_waiting_pauses_across_executions_oldest_first(
    env: TestEnv,
) -> None:
    first = await paused(env, "ada")
    await env.clock.advance(timedelta(minutes=10))
    second = await paused(env, "bob")
    await paused(env, "eve", tenant="globex")
    page = await env.app.pending(tenant_id="acme")
    assert [e.execution_id for e in page.entries] == [first.execution_id] * 2 + [
        second.execution_id
    ] * 2
    assert page.next is None
    assert await env.app.count_pending(tenant_id="acme") == 4
    assert [e.owner_id for e in page.entries] == ["ada", "ada", "bob", "bob"]
    assert page.entries[0].thread_id == first.thread_id
    # A channel pause is listed without its id, as everywhere outside its channel.
    by_answerer = {e.pause.answered_by: e.pause.pause_id for e in page.entries[:2]}
    assert by_answerer[PauseAnswerer.CHANNEL] is None
    assert by_answerer[PauseAnswerer.THREAD_OWNER] is not None


async def test_the_inbox_filters_by_owner_channel_and_age(env: TestEnv) -> None:
    old = await paused(env, "ada")
    await env.clock.jump(timedelta(hours=5))
    await paused(env, "bob")
    mine = await env.app.pending(tenant_id="acme", owner_id="ada")
    assert {e.execution_id for e in mine.entries} == {old.execution_id}
    expenses = await env.app.pending(tenant_id="acme", channel="expense-approval-channel")
    assert [e.pause.channel for e in expenses.entries] == ["expense-approval-channel"] * 2
    stale = env.clock.now() - timedelta(hours=4)
    assert await env.app.count_pending(tenant_id="acme", asked_before=stale) == 2
    reminders = await env.app.pending(tenant_id="acme", asked_before=stale)
    assert {e.owner_id for e in reminders.entries} == {"ada"}


async def test_the_inbox_pages_by_cursor_and_an_answered_pause_leaves_it(env: TestEnv) -> None:
    for owner in ("a", "b", "c"):
        await paused(env, owner)
    seen: list[str] = []
    page = await env.app.pending(tenant_id="acme", limit=4)
    while True:
        seen += [f"{e.execution_id}/{e.pause.agent}/{e.pause.ask.tool}" for e in page.entries]
        if page.next is None:
            break
        page = await env.app.pending(tenant_id="acme", limit=4, after=page.next)
    assert len(seen) == len(set(seen)) == 6
    entry = next(
        e
        for e in (await env.app.pending(tenant_id="acme", owner_id="a")).entries
        if e.pause.pause_id is not None
    )
    assert entry.pause.pause_id is not None
    await env.app.resume(
        entry.pause.pause_id, decision={"approved": False}, tenant_id="acme", owner_id="a"
    )
    assert await env.app.count_pending(tenant_id="acme") == 5


@pytest.mark.parametrize(
    "options",
    [{"limit": 0}, {"limit": 501}, {"limit": "10"}, {"after": "not-a-cursor"}, {"after": 7}],
)
async def test_bad_inbox_arguments_are_dto_validation_error(
    env: TestEnv, options: dict[str, Any]
) -> None:
    with pytest.raises(DtoValidationError):
        await env.app.pending(tenant_id="acme", **options)


# ---- one pause by its id -------------------------------------------------------------------


async def test_describe_pause_shows_a_waiting_question_and_who_may_answer_it(
    env: TestEnv,
) -> None:
    result = await paused(env, "ada")
    pause_id = owner_pause_of(result)
    found = await env.app.describe_pause(pause_id, tenant_id="acme")
    [listed] = [p for p in result.pending if p.pause_id == pause_id]
    assert found.pause == listed
    assert (found.status, found.resolution) == (PauseStatus.PENDING, None)
    assert (found.execution_id, found.thread_id, found.owner_id) == (
        result.execution_id,
        result.thread_id,
        "ada",
    )
    assert (found.responder, found.resolved_at, found.decision) == (None, None, None)


async def test_describe_pause_shows_who_answered_when_and_what_was_decided(env: TestEnv) -> None:
    result = await paused(env, "ada")
    pause_id = owner_pause_of(result)
    await env.clock.advance(timedelta(minutes=3))
    await env.app.resume(
        pause_id,
        decision={"approved": True, "override_arguments": {"purpose": "taxi", "amount": 6.25}},
        tenant_id="acme",
        owner_id="ada",
    )
    found = await env.app.describe_pause(pause_id, tenant_id="acme")
    assert found.status is PauseStatus.TAKEN
    assert found.resolution is PauseResolution.REPLIED
    assert found.responder == "ada"
    assert found.resolved_at == env.clock.now()
    assert found.decision is not None
    assert found.decision.override_arguments == {"purpose": "taxi", "amount": 6.25}


async def test_describe_pause_shows_a_channel_pause_without_its_id(env: TestEnv) -> None:
    await paused(env, "ada")
    [asked] = env.mock_of(DeskDepositApprovalChannel).send.call_args_list
    found = await env.app.describe_pause(asked.args[0].pause_id, tenant_id="acme")
    assert found.pause.answered_by is PauseAnswerer.CHANNEL
    assert found.pause.pause_id is None


async def test_describe_pause_of_an_unknown_id_or_another_tenant_is_unknown(env: TestEnv) -> None:
    result = await paused(env, "ada")
    with pytest.raises(UnknownPauseError):
        await env.app.describe_pause("0" * 32, tenant_id="acme")
    with pytest.raises(UnknownPauseError):
        await env.app.describe_pause(owner_pause_of(result), tenant_id="globex")
    with pytest.raises(DtoValidationError):
        await env.app.describe_pause("", tenant_id="acme")


# ---- an answer that returns at once ---------------------------------------------------------


async def test_answer_records_the_decision_and_returns_before_the_tool_runs(
    env: TestEnv,
) -> None:
    result = await paused(env, "ada")
    gate = asyncio.Event()

    async def slow_booking(args: Any) -> Any:
        await gate.wait()
        return desk.DeskDoneDto(status="booked")

    env.mock_of(BookExpenseTool).run.side_effect = slow_booking
    owner_pause_id = owner_pause_of(result)
    # The tool waits for the gate: an answer that waited for the pass would time out here.
    receipt = await asyncio.wait_for(
        env.app.answer(
            owner_pause_id, decision={"approved": True}, tenant_id="acme", owner_id="ada"
        ),
        timeout=5,
    )
    assert receipt.execution_id == result.execution_id
    assert receipt.decision.approved is True
    assert receipt.responder == "ada"
    stored = await env.app.store.pauses.find_by_tenant_id_and_pause_id("acme", owner_pause_id)
    assert stored is not None
    assert stored.status in (PauseStatus.RESOLVED, PauseStatus.TAKEN)  # recorded, durable
    gate.set()

    async def moved() -> bool:  # the tree moves in the background
        now = await env.app.get(result.execution_id, tenant_id="acme")
        return [p.answered_by for p in now.pending] == [PauseAnswerer.CHANNEL]

    await eventually(moved, "the tree's move")
    now = await env.app.get(result.execution_id, tenant_id="acme")
    assert [p.answered_by for p in now.pending] == [PauseAnswerer.CHANNEL]


async def test_a_rejected_answer_is_refused_at_once_and_the_pause_keeps_waiting(
    env: TestEnv,
) -> None:
    result = await paused(env, "ada")
    owner_pause_id = owner_pause_of(result)
    with pytest.raises(DtoValidationError):
        await env.app.answer(
            owner_pause_id, decision={"approved": "yes"}, tenant_id="acme", owner_id="ada"
        )
    assert await env.app.count_pending(tenant_id="acme") == 2


async def test_an_answer_while_a_dead_holder_keeps_the_tree_returns_at_once(
    env: TestEnv,
    recorded: DeskRecorder,
) -> None:
    result = await paused(env, "ada")
    owner_pause_id = owner_pause_of(result)
    # Another instance took the tree's lease and died.
    taken = await write_one(
        env.app.store,
        AcquireLease(result.execution_id, "dead-instance", timedelta(seconds=30), env.clock.now()),
    )
    assert taken is not None
    receipt = await env.app.answer(
        owner_pause_id, decision={"approved": True}, tenant_id="acme", owner_id="ada"
    )
    assert receipt.responder == "ada"  # returned without waiting for the lease
    await env.clock.advance(timedelta(seconds=31))
    await env.app.recover()

    # The lease expired: the answer's own background move or the sweep takes the tree.
    async def moved() -> bool:
        if (
            not recorded.runs
        ):  # looked at first: the tool runs after its pass marked the tree running
            return False
        output = await env.app.get(result.execution_id, tenant_id="acme")
        return output.status is ExecutionStatus.PAUSED

    await eventually(moved, "the tree's move once the dead holder's lease expired")
    now = await env.app.get(result.execution_id, tenant_id="acme")
    assert [p.answered_by for p in now.pending] == [PauseAnswerer.CHANNEL]
    assert recorded.runs == ["book-expense taxi 12.5"]


async def test_a_repeated_answer_gets_its_receipt_again_and_another_is_not_paused(
    env: TestEnv,
) -> None:
    result = await paused(env, "ada")
    owner_pause_id = owner_pause_of(result)
    answer = {"pause_id": owner_pause_id, "tenant_id": "acme", "owner_id": "ada"}
    first = await env.app.answer(**answer, decision={"approved": False, "reason": "no"})
    again = await env.app.answer(**answer, decision={"approved": False, "reason": "no"})
    assert (first.repeated, again.repeated) == (False, True)
    assert again.decision == first.decision
    with pytest.raises(NotPausedError):
        await env.app.answer(**answer, decision={"approved": True})
    with pytest.raises(NotPausedError):  # resume keeps the spec's rule: a second answer fails
        await env.app.resume(**answer, decision={"approved": False, "reason": "no"})


async def test_a_pause_says_whether_it_takes_words_and_the_shape_of_its_arguments(
    env: TestEnv,
) -> None:
    result = await paused(env, "ada")
    by_answerer = {p.answered_by: p for p in result.pending}
    expense = by_answerer[PauseAnswerer.THREAD_OWNER]
    assert env.app.accepts_reply(expense) is True  # its role names a reply interpreter
    assert env.app.accepts_reply(by_answerer[PauseAnswerer.CHANNEL]) is False
    schema = env.app.arguments_schema(expense)
    assert set(schema["properties"]) == set(expense.ask.arguments)
    schema["properties"].clear()  # a copy: the next caller gets the whole schema
    assert env.app.arguments_schema(expense)["properties"]
