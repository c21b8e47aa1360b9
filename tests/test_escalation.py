"""A question escalated by its role's ladder (issue 27): asked of another role — its own
implementation and answerers — under a new id, once, on any instance, after a restart too; the
first channel told, the old id answering nothing — on both stores, through the public API."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from agboss import (
    App,
    AssemblyError,
    ChannelOf,
    Escalate,
    ExecutionStatus,
    NotPausedError,
    PauseAnswerer,
    PauseResolution,
    Remind,
    agent,
    application,
    channel,
    channel_role,
    workflow,
)
from agboss.enums import Decider, Outcome
from agboss.testing import TestEnv
from tests.apps import deadline_app
from tests.apps.deadline_app import (
    DAYS_2,
    ESCALATION,
    HOUR,
    DeadlineApplication,
    DeadlineRecorder,
    EscalatingRefundTool,
    LeadRefundChannel,
    OrderDto,
    RefundAgent,
)
from tests.apps.office_parts import office_flow
from tests.test_deadlines import answered_by, asked
from tests.test_ladder import _role

DESK = ["send o-1", "remind o-1 #1 desk/o-1"]
"""What the desk was told before the question was escalated."""

ESCALATED = [*DESK, "lead send o-1", "withdraw o-1 escalated desk/o-1"]
"""And then: the lead asked, the desk told its question was taken back."""


pytestmark = pytest.mark.application.with_args(DeadlineApplication)


async def test_a_question_nobody_answered_is_asked_of_the_next_role_under_a_new_id(
    env: TestEnv,
    recorded: DeadlineRecorder,
) -> None:
    result = await asked(env, EscalatingRefundTool)
    [desk_id] = recorded.pause_ids
    await env.clock.jump(HOUR)
    await env.clock.jump(ESCALATION - HOUR)
    assert recorded.told == ESCALATED
    paused = await env.app.get(result.execution_id)
    assert paused.status is ExecutionStatus.PAUSED
    [waiting] = paused.pending  # the lead's: a thread-owner question, its id shown
    assert waiting.channel == "lead-refund-channel"
    assert waiting.answered_by is PauseAnswerer.THREAD_OWNER
    assert waiting.pause_id is not None
    assert waiting.pause_id not in (desk_id, None)
    assert [desk_id, waiting.pause_id] == recorded.pause_ids
    with pytest.raises(NotPausedError) as late:  # the desk's id answers nothing now
        await env.app.answer(desk_id, decision={"approved": True}, answered_by="manager-17")
    assert late.value.status == "escalated"
    done = await env.app.resume(waiting.pause_id, decision={"approved": True}, owner_id="ada")
    assert done.status is ExecutionStatus.COMPLETED
    assert recorded.runs == ["EscalatingRefundTool o-1"]
    record = (await env.app.get(result.execution_id, record=True)).record
    assert record is not None
    trail = [(e.role, e.resolution, e.responder, e.escalation) for e in record.pauses]
    assert trail == [
        ("escalating-refund-channel", PauseResolution.ESCALATED, None, 0),
        ("lead-refund-channel", PauseResolution.REPLIED, "ada", 1),
    ]


async def test_the_ladder_goes_on_after_the_escalation_and_the_deadline_still_decides(
    env: TestEnv,
    recorded: DeadlineRecorder,
) -> None:
    result = await asked(env, EscalatingRefundTool)
    await env.clock.jump(HOUR)
    await env.clock.jump(ESCALATION - HOUR)
    await env.clock.jump(timedelta(hours=12))  # 36 h: the lead is reminded
    assert [*ESCALATED, "lead remind o-1 #2 lead/o-1"] == recorded.told
    await env.clock.jump(timedelta(hours=12))  # 48 h: the question's deadline
    await answered_by(env, result)
    assert recorded.told[-1] == "lead withdraw o-1 expired lead/o-1"
    read = env.mock_llm(RefundAgent).requests[-1].messages[-1].content  # type: ignore[union-attr]
    assert "rejected by lead-refund-channel: no answer within 2 days" in read
    assert recorded.runs == []
    # The decision log: the ladder escalated it, then the deadline decided — no person.
    logged = [shown.entry for shown in (await env.app.decisions()).entries]
    assert [(e.role, e.outcome, e.decided_by) for e in logged] == [
        ("escalating-refund-channel", Outcome.ESCALATED, Decider.DEADLINE),
        ("lead-refund-channel", Outcome.EXPIRED, Decider.DEADLINE),
    ]
    assert logged[1].decision is not None
    assert not logged[1].decision.approved


async def test_an_answer_before_the_escalation_keeps_the_question_where_it_was(
    env: TestEnv,
    recorded: DeadlineRecorder,
) -> None:
    await asked(env, EscalatingRefundTool)
    await env.clock.jump(HOUR)  # reminded
    await env.clock.jump(ESCALATION - HOUR - timedelta(seconds=1))
    done = await env.app.resume(
        recorded.pause_ids[0], decision={"approved": True}, answered_by="manager-17"
    )
    assert done.status is ExecutionStatus.COMPLETED
    await env.clock.jump(DAYS_2)
    assert recorded.told == DESK
    assert recorded.runs == ["EscalatingRefundTool o-1"]


async def test_an_escalation_due_across_a_restart_is_made_by_the_new_instances_sweep(
    env: TestEnv,
    recorded: DeadlineRecorder,
) -> None:
    result = await asked(env, EscalatingRefundTool)
    await env.restart()  # the instance that armed the timer is gone
    await env.clock.jump(HOUR)  # the new instance's sweep at 1 h reminds
    await env.clock.jump(ESCALATION - HOUR)  # and its sweep at 24 h escalates
    assert recorded.told == ESCALATED
    [waiting] = (await env.app.get(result.execution_id)).pending
    assert waiting.channel == "lead-refund-channel"


@pytest.mark.application.with_args(DeadlineApplication, instances=2)
async def test_with_two_instances_sweeping_a_question_is_escalated_once(
    env: TestEnv,
    recorded: DeadlineRecorder,
) -> None:
    result = await asked(env, EscalatingRefundTool)
    await env.clock.jump(ESCALATION)  # both steps due at once: escalated, not reminded
    await env.apps[0].sweep()
    await env.apps[1].sweep()
    await env.apps[0].sweep()
    assert recorded.told == ["send o-1", "lead send o-1", "withdraw o-1 escalated desk/o-1"]
    record = (await env.app.get(result.execution_id, record=True)).record
    assert record is not None
    assert [e.resolution for e in record.pauses] == [PauseResolution.ESCALATED]


async def test_the_inbox_says_the_next_step_is_an_escalation(env: TestEnv) -> None:
    began = env.clock.now()
    await asked(env, EscalatingRefundTool)
    await env.clock.jump(HOUR)
    [entry] = (await env.app.pending()).entries
    assert entry.next_step == Escalate(after=ESCALATION, to=LeadRefundChannel)
    assert entry.next_step_at == began + ESCALATION
    await env.clock.jump(ESCALATION - HOUR)
    [entry] = (await env.app.pending()).entries
    assert entry.pause.channel == "lead-refund-channel"
    assert entry.next_step == Remind(after=timedelta(hours=36))


# ---- assembly ------------------------------------------------------------------------------


class OtherDto(OrderDto):
    note: str = ""


async def test_escalation_wiring_errors_are_reported_together(tmp_path: Path) -> None:
    @channel_role(
        name="unheard-lead-channel",
        description="Implemented by nobody",
        approves=OrderDto,
        answered_by=PauseAnswerer.THREAD_OWNER,
    )
    class UnheardLeadChannel(ChannelOf[OrderDto]): ...

    @channel_role(
        name="other-lead-channel",
        description="Approves something else",
        approves=OtherDto,
        answered_by=PauseAnswerer.THREAD_OWNER,
    )
    class OtherLeadChannel(ChannelOf[OtherDto]): ...

    @channel(name="other-lead-desk-channel", description="Asks about other things")
    class OtherLeadDeskChannel(deadline_app._Lead, OtherLeadChannel): ...

    made = []
    for name, to in (
        ("unheard-channel", UnheardLeadChannel),
        ("other-channel", OtherLeadChannel),
        ("nowhere-channel", OrderDto),
    ):
        made.append(_escalating(name, to))
    looping = _escalating("looping-channel", None)

    @agent(
        name="escalating-agent",
        description="Has the badly escalating tools",
        prompt="p",
        model="test/model",
        tools=[tool_cls for _, tool_cls in [*made, looping]],
    )
    class EscalatingAgent: ...

    @workflow(name="escalating-workflow", version="1", flow=office_flow(EscalatingAgent))
    class EscalatingWorkflow: ...

    @application(
        name="escalating-application",
        workflows=[EscalatingWorkflow],
        channels=[OtherLeadDeskChannel, *(desk for desk, _ in [*made, looping])],
    )
    class EscalatingApplication: ...

    with pytest.raises(AssemblyError) as caught:
        await App.create(EscalatingApplication, store=tmp_path / "agboss.db")
    found = {(violation.rule, violation.component) for violation in caught.value.violations}
    assert {
        ("channel.escalate-unimplemented", "unheard-channel"),
        ("channel.escalate-approves-mismatch", "other-channel"),
        ("channel.escalate-not-a-role", "nowhere-channel"),
        ("channel.escalate-to-self", "looping-channel"),
    } <= found


def _escalating(name: str, to: type[Any] | None) -> tuple[type[Any], type[Any]]:
    """A role (with its desk and tool) whose ladder escalates to ``to`` (``None``: itself)."""
    return _role(name, lambda role: [Escalate(after=HOUR, to=role if to is None else to)])
