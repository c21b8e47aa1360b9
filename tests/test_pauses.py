"""Pauses of one execution, through the public API: pauses.md, sentence by sentence."""

from __future__ import annotations

import asyncio
import logging
import re
from datetime import timedelta

import pytest

from agboss import (
    AgentFailedError,
    ChannelOutcome,
    ConfigurationError,
    DtoValidationError,
    ExecutionOutput,
    ExecutionPauseEvent,
    ExecutionResumeEvent,
    ExecutionStatus,
    NotPausedError,
    PauseAnswerer,
    PauseAnswererError,
    PauseResolution,
    PauseStatus,
    ReplyInterpreterMissingError,
    ThreadOwnerError,
    ToolCallApprovalDecisionDto,
    UnknownPauseError,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
)
from agboss.models import MessageRole
from agboss.store.writes import AcquireLease, write_one
from agboss.testing import TestEnv, call_tools, reply_with, tool_call
from tests.apps import desk
from tests.apps.desk import (
    BookExpenseTool,
    ButtonExpenseApprovalChannel,
    DepositApprovalChannel,
    DeskDepositApprovalChannel,
    DeskRecorder,
    LookUpTool,
    OfficeAgent,
    OfficeApplication,
    OfficeWorkflow,
    ReturnDepositTool,
    ShredTool,
    StampTool,
)

REQUEST = WorkflowStartTextDto(text="Return L-7's deposit and book the taxi")
DONE = reply_with(WorkflowFinishTextDto, text="Both done.")
BOTH = call_tools(
    tool_call(ReturnDepositTool, lease_id="L-7"),
    tool_call(BookExpenseTool, purpose="taxi", amount=12.5),
)


pytestmark = pytest.mark.application.with_args(OfficeApplication)


async def both_paused(env: TestEnv) -> tuple[ExecutionOutput, str, str]:
    """Executes until both calls wait: the result, the desk's (channel) id, the owner's id."""
    env.mock_llm(OfficeAgent).then_return(BOTH, DONE)
    desk_channel = env.mock_of(DeskDepositApprovalChannel)
    result = await env.app.execute(OfficeWorkflow, REQUEST, tenant_id="acme", owner_id="user-1")
    deposit_pause_id = desk_channel.send.call_args.args[0].pause_id
    [owner_pause] = [p for p in result.pending if p.answered_by is PauseAnswerer.THREAD_OWNER]
    assert owner_pause.pause_id is not None
    return result, deposit_pause_id, owner_pause.pause_id


async def _until_resolved(env: TestEnv, pause_id: str) -> None:
    for _ in range(2000):
        pause = await env.app.store.pauses.find_by_tenant_id_and_pause_id("acme", pause_id)
        if pause is not None and pause.status is PauseStatus.RESOLVED:
            return
        await asyncio.sleep(0.001)
    raise AssertionError("the answer was never recorded")


def approve(**fields: object) -> ToolCallApprovalDecisionDto:
    return ToolCallApprovalDecisionDto.model_validate({"approved": True, **fields})


# ---- pausing ---------------------------------------------------------------------------


async def test_a_model_turn_that_calls_two_tools_with_channels_pauses_on_both_at_once(
    env: TestEnv,
    recorded: DeskRecorder,
) -> None:
    result, _, _ = await both_paused(env)
    assert result.status is ExecutionStatus.PAUSED
    assert {p.channel for p in result.pending} == {
        "deposit-approval-channel",
        "expense-approval-channel",
    }
    assert recorded.runs == []
    assert result.output is None


async def test_a_channel_is_told_whether_its_question_takes_the_answerers_own_words(
    env: TestEnv,
) -> None:
    expense_channel = env.mock_of(ButtonExpenseApprovalChannel)
    await both_paused(env)
    deposit = env.mock_of(DeskDepositApprovalChannel).send.call_args.args[0]
    expense = expense_channel.send.call_args.args[0]
    assert deposit.accepts_reply is False  # its role names no reply interpreter
    assert expense.accepts_reply is True


async def test_a_paused_call_does_not_stop_its_siblings_in_the_same_turn(
    env: TestEnv, recorded: DeskRecorder
) -> None:
    env.mock_llm(OfficeAgent).then_return(
        call_tools(
            tool_call(ReturnDepositTool, lease_id="L-7"), tool_call(LookUpTool, lease_id="L-7")
        ),
        DONE,
    )
    result = await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
    assert result.status is ExecutionStatus.PAUSED
    assert recorded.runs == ["look-up L-7"]


async def test_each_pause_is_answered_on_its_own_and_the_last_answer_lets_it_finish(
    env: TestEnv,
    recorded: DeskRecorder,
) -> None:
    _, deposit_id, owner_id = await both_paused(env)
    first = await env.app.resume(
        deposit_id, decision=approve(), tenant_id="acme", answered_by="clerk-3"
    )
    assert first.status is ExecutionStatus.PAUSED
    assert [p.channel for p in first.pending] == ["expense-approval-channel"]
    assert recorded.runs == ["return-deposit L-7 as user-1"]
    last = await env.app.resume(
        owner_id, decision={"approved": True}, tenant_id="acme", owner_id="user-1"
    )
    assert last.status is ExecutionStatus.COMPLETED
    assert last.pending == []
    assert last.output == WorkflowFinishTextDto(text="Both done.")
    assert recorded.runs == ["return-deposit L-7 as user-1", "book-expense taxi 12.5"]
    assert (last.thread_id, last.execution_id) == (first.thread_id, first.execution_id)


async def test_pauses_are_answered_in_any_order(env: TestEnv, recorded: DeskRecorder) -> None:
    _, deposit_id, owner_id = await both_paused(env)
    await env.app.resume(owner_id, decision=approve(), tenant_id="acme", owner_id="user-1")
    assert recorded.runs == ["book-expense taxi 12.5"]
    last = await env.app.resume(
        deposit_id, decision=approve(), tenant_id="acme", answered_by="clerk-3"
    )
    assert last.status is ExecutionStatus.COMPLETED


async def test_approved_the_tool_runs_once_with_the_override_arguments(
    env: TestEnv, recorded: DeskRecorder
) -> None:
    _, deposit_id, owner_id = await both_paused(env)
    await env.app.resume(
        owner_id,
        decision=approve(override_arguments={"purpose": "taxi", "amount": 6.25}),
        tenant_id="acme",
        owner_id="user-1",
    )
    await env.app.resume(deposit_id, decision=approve(), tenant_id="acme", answered_by="clerk-3")
    assert recorded.runs.count("book-expense taxi 6.25") == 1
    assert "book-expense taxi 12.5" not in recorded.runs


async def test_rejected_the_model_reads_who_rejected_it_and_why(
    env: TestEnv, recorded: DeskRecorder
) -> None:
    _, deposit_id, owner_id = await both_paused(env)
    await env.app.resume(
        deposit_id,
        decision=ToolCallApprovalDecisionDto(approved=False, reason="the flat is damaged"),
        tenant_id="acme",
        answered_by="clerk-3",
    )
    await env.app.resume(
        owner_id, decision={"approved": False}, tenant_id="acme", owner_id="user-1"
    )
    script = env.mock_llm(OfficeAgent)
    tools = [m.content for m in script.requests[-1].messages if m.role is MessageRole.TOOL]
    assert tools == [
        "Tool error: the call was rejected by clerk-3: the flat is damaged",
        "Tool error: the call was rejected by user-1",
    ]
    assert recorded.runs == []


async def test_the_resumed_pass_runs_as_the_threads_owner_whoever_answered(
    env: TestEnv, recorded: DeskRecorder
) -> None:
    _, deposit_id, _ = await both_paused(env)
    await env.app.resume(deposit_id, decision=approve(), tenant_id="acme", answered_by="clerk-3")
    assert recorded.runs == ["return-deposit L-7 as user-1"]


# ---- the pause id ----------------------------------------------------------------------


async def test_the_pause_id_is_128_random_bits_and_only_listed_for_a_thread_owner_pause(
    env: TestEnv,
    recorded: DeskRecorder,
) -> None:
    result, deposit_id, owner_id = await both_paused(env)
    assert re.fullmatch(r"[0-9a-f]{32}", deposit_id)
    assert re.fullmatch(r"[0-9a-f]{32}", owner_id)
    [channel_pause] = [p for p in result.pending if p.answered_by is PauseAnswerer.CHANNEL]
    assert channel_pause.pause_id is None
    [pause_event] = [e for e in recorded.events if isinstance(e, ExecutionPauseEvent)]
    assert deposit_id not in repr(pause_event)


async def test_a_re_entered_step_finds_the_same_pause_id(env: TestEnv) -> None:
    _, deposit_id, owner_id = await both_paused(env)
    after = await env.app.resume(owner_id, decision=approve(), tenant_id="acme", owner_id="user-1")
    assert after.status is ExecutionStatus.PAUSED
    desk_channel = env.mock_of(DeskDepositApprovalChannel)
    assert desk_channel.send.call_count == 1  # the re-entered step did not ask again
    again = await env.app.resume(
        deposit_id, decision=approve(), tenant_id="acme", answered_by="clerk-3"
    )
    assert again.status is ExecutionStatus.COMPLETED


async def test_the_channel_is_sent_the_question_once_in_the_pauses_execution_frame(
    env: TestEnv,
    recorded: DeskRecorder,
) -> None:
    await both_paused(env)
    assert recorded.sent == ["send L-7 acme"]


# ---- app.resume: shape, lookup, validation -----------------------------------------------


async def test_an_unknown_id_and_another_tenants_id_are_the_same_unknown_pause_error(
    env: TestEnv,
) -> None:
    _, _, owner_id = await both_paused(env)
    with pytest.raises(UnknownPauseError) as unknown:
        await env.app.resume("0" * 32, decision=approve(), tenant_id="acme", owner_id="user-1")
    with pytest.raises(UnknownPauseError) as foreign:
        await env.app.resume(owner_id, decision=approve(), tenant_id="other", owner_id="user-1")
    assert str(unknown.value) == str(foreign.value)
    assert unknown.value.code == "pause.unknown"


async def test_exactly_one_of_decision_and_reply_is_checked_before_the_pause_is_looked_up(
    env: TestEnv,
) -> None:
    with pytest.raises(DtoValidationError, match="exactly one of decision= or reply="):
        await env.app.resume("no-such-id", owner_id="u")  # type: ignore[call-overload]
    with pytest.raises(DtoValidationError, match="exactly one"):
        await env.app.resume(  # type: ignore[call-overload]
            "no-such-id", decision=approve(), reply="yes", owner_id="u"
        )
    with pytest.raises(DtoValidationError, match="the reply is empty"):
        await env.app.resume("no-such-id", reply="  ", owner_id="u")


async def test_an_invalid_decision_is_a_dto_validation_error_and_the_pause_keeps_waiting(
    env: TestEnv,
    recorded: DeskRecorder,
) -> None:
    _, _, owner_id = await both_paused(env)
    with pytest.raises(DtoValidationError, match="not a valid ToolCallApprovalDecisionDto"):
        await env.app.resume(
            owner_id, decision={"approved": "maybe"}, tenant_id="acme", owner_id="user-1"
        )
    result = await env.app.resume(owner_id, decision=approve(), tenant_id="acme", owner_id="user-1")
    assert recorded.runs == ["book-expense taxi 12.5"]
    assert result.status is ExecutionStatus.PAUSED


async def test_override_arguments_come_only_with_approved_and_as_a_valid_tool_input(
    env: TestEnv,
    recorded: DeskRecorder,
) -> None:
    _, _, owner_id = await both_paused(env)
    with pytest.raises(DtoValidationError, match="only allowed with approved=True"):
        await env.app.resume(
            owner_id,
            decision={"approved": False, "override_arguments": {"purpose": "x", "amount": 1}},
            tenant_id="acme",
            owner_id="user-1",
        )
    with pytest.raises(DtoValidationError, match="not a valid input of book-expense-tool"):
        await env.app.resume(
            owner_id,
            decision=approve(override_arguments={"purpose": "taxi"}),
            tenant_id="acme",
            owner_id="user-1",
        )
    assert recorded.runs == []


async def test_a_second_answer_gets_not_paused_and_moves_nothing(
    env: TestEnv, recorded: DeskRecorder
) -> None:
    _, _, owner_id = await both_paused(env)
    await env.app.resume(owner_id, decision=approve(), tenant_id="acme", owner_id="user-1")
    with pytest.raises(NotPausedError) as caught:
        await env.app.resume(
            owner_id, decision={"approved": False}, tenant_id="acme", owner_id="user-1"
        )
    assert caught.value.code == "run.not-paused"
    assert recorded.runs == ["book-expense taxi 12.5"]


# ---- who may answer ------------------------------------------------------------------


async def test_a_thread_owner_pause_answered_with_answered_by_is_pause_answerer_error(
    env: TestEnv,
) -> None:
    _, _, owner_id = await both_paused(env)
    with pytest.raises(PauseAnswererError) as caught:
        await env.app.resume(owner_id, decision=approve(), tenant_id="acme", answered_by="x")
    assert caught.value.code == "pause.wrong-answerer"
    await env.app.resume(owner_id, decision=approve(), tenant_id="acme", owner_id="user-1")


async def test_a_channel_pause_with_owner_id_or_without_answered_by_is_pause_answerer_error(
    env: TestEnv,
    recorded: DeskRecorder,
) -> None:
    _, deposit_id, _ = await both_paused(env)
    with pytest.raises(PauseAnswererError) as wrong:
        await env.app.resume(deposit_id, decision=approve(), tenant_id="acme", owner_id="user-1")
    assert "not owner_id=" in str(wrong.value.hint)
    with pytest.raises(PauseAnswererError) as missing:
        await env.app.resume(deposit_id, decision=approve(), tenant_id="acme")
    assert "answered_by=" in str(missing.value.hint)
    assert "owner_id" not in str(missing.value.hint)  # it names the argument that is missing
    for blank in ("", "   "):
        with pytest.raises(DtoValidationError, match="answered_by is blank"):
            await env.app.resume(
                deposit_id, decision=approve(), tenant_id="acme", answered_by=blank
            )
    assert recorded.runs == []


async def test_a_thread_owner_pause_without_owner_id_names_the_argument_it_needs(
    env: TestEnv,
    recorded: DeskRecorder,
) -> None:
    _, _, owner_pause = await both_paused(env)
    with pytest.raises(PauseAnswererError) as missing:
        await env.app.resume(owner_pause, decision=approve(), tenant_id="acme")
    assert missing.value.hint == "pass owner_id=<the thread's owner>"
    with pytest.raises(PauseAnswererError) as wrong:
        await env.app.resume(owner_pause, decision=approve(), tenant_id="acme", answered_by="x")
    assert "not answered_by=" in str(wrong.value.hint)
    assert recorded.runs == []


async def test_a_thread_owner_pause_answered_by_another_owner_is_thread_owner_error(
    env: TestEnv,
    recorded: DeskRecorder,
) -> None:
    _, _, owner_id = await both_paused(env)
    with pytest.raises(ThreadOwnerError):
        await env.app.resume(owner_id, decision=approve(), tenant_id="acme", owner_id="mallory")
    assert recorded.runs == []


async def test_who_answered_is_recorded_on_the_pause_and_in_on_execution_resume(
    env: TestEnv,
    recorded: DeskRecorder,
) -> None:
    result, deposit_id, _ = await both_paused(env)
    await env.app.resume(deposit_id, decision=approve(), tenant_id="acme", answered_by="clerk-3")
    pause = await env.app.store.pauses.find_by_tenant_id_and_pause_id("acme", deposit_id)
    assert pause is not None
    assert pause.answer is not None
    assert pause.answer.responder == "clerk-3"
    [resumed] = [e for e in recorded.events if isinstance(e, ExecutionResumeEvent)]
    assert resumed.answered_by == "clerk-3"
    assert resumed.pause_id is None  # a channel pause's id never leaves its channel
    assert resumed.execution_id == result.execution_id


async def test_on_execution_pause_fires_each_time_the_execution_rests(
    env: TestEnv, recorded: DeskRecorder
) -> None:
    _, deposit_id, owner_id = await both_paused(env)
    await env.app.resume(deposit_id, decision=approve(), tenant_id="acme", answered_by="clerk-3")
    await env.app.resume(owner_id, decision=approve(), tenant_id="acme", owner_id="user-1")
    kinds = [type(e).__name__ for e in recorded.events]
    assert kinds == [
        "ExecutionPauseEvent",
        "ExecutionResumeEvent",
        "ExecutionPauseEvent",
        "ExecutionResumeEvent",
    ]
    assert len(recorded.events[0].pending) == 2
    assert len(recorded.events[2].pending) == 1


# ---- decided at once -------------------------------------------------------------------


async def test_auto_approve_channel_decides_at_once_and_the_call_never_pauses(
    env: TestEnv, recorded: DeskRecorder
) -> None:
    env.mock_llm(OfficeAgent).then_return(call_tools(tool_call(StampTool, lease_id="L-7")), DONE)
    result = await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1", record=True)
    assert result.status is ExecutionStatus.COMPLETED
    assert recorded.runs == ["stamp L-7"]
    assert result.record is not None
    [entry] = result.record.pauses
    assert entry.resolution is PauseResolution.DECIDED
    assert entry.responder is None
    assert entry.role == "auto-approve-channel"


async def test_auto_reject_channel_decides_at_once_and_the_model_reads_the_rejection(
    env: TestEnv,
    recorded: DeskRecorder,
) -> None:
    script = env.mock_llm(OfficeAgent).then_return(
        call_tools(tool_call(ShredTool, lease_id="L-7")), DONE
    )
    await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
    [error] = [m.content for m in script.requests[1].messages if m.role is MessageRole.TOOL]
    assert error == (
        "Tool error: the call was rejected by auto-reject-channel: "
        "calls of this tool are not allowed"
    )
    assert recorded.runs == []


async def test_a_roles_implementation_is_scripted_with_mock_of_send(
    env: TestEnv, recorded: DeskRecorder
) -> None:
    env.mock_llm(OfficeAgent).then_return(
        call_tools(tool_call(ReturnDepositTool, lease_id="L-7")), DONE
    )
    env.mock_of(DepositApprovalChannel).send.return_value = ChannelOutcome.decided(
        {"approved": True}
    )
    result = await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
    assert result.status is ExecutionStatus.COMPLETED
    assert recorded.runs == ["return-deposit L-7 as user-1"]
    assert recorded.sent == []  # the scripted mock did not run the real send


async def test_an_invalid_decided_outcome_fails_the_step(
    env: TestEnv, recorded: DeskRecorder
) -> None:
    env.mock_llm(OfficeAgent).then_return(
        call_tools(tool_call(ReturnDepositTool, lease_id="L-7")), DONE
    )
    env.mock_of(DepositApprovalChannel).send.return_value = ChannelOutcome.decided(
        {"approved": False, "override_arguments": {"lease_id": "L-8"}}
    )
    with pytest.raises(AgentFailedError, match="decided an invalid answer") as caught:
        await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
    assert isinstance(caught.value.__cause__, DtoValidationError)
    assert recorded.runs == []


async def test_a_channel_whose_send_throws_fails_the_step_never_a_tool_error(env: TestEnv) -> None:
    env.mock_llm(OfficeAgent).then_return(
        call_tools(tool_call(ReturnDepositTool, lease_id="L-7")), DONE
    )
    env.mock_of(DepositApprovalChannel).send.side_effect = ConnectionError("slack is down")
    with pytest.raises(AgentFailedError, match="slack is down") as caught:
        await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
    assert isinstance(caught.value.__cause__, ConnectionError)
    assert len(env.mock_llm(OfficeAgent).requests) == 1  # the model never read it


async def test_a_reference_that_is_not_text_fails_the_step_as_its_channels_error(
    env: TestEnv,
) -> None:
    env.mock_llm(OfficeAgent).then_return(
        call_tools(tool_call(ReturnDepositTool, lease_id="L-7")), DONE
    )

    async def posted(ask: object) -> ChannelOutcome:
        return ChannelOutcome.await_reply(reference="x" * 1001)

    env.mock_of(DepositApprovalChannel).send.side_effect = posted
    with pytest.raises(AgentFailedError, match="reference must be text") as caught:
        await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
    assert isinstance(caught.value.__cause__, ConfigurationError)


# ---- a pause's life ----------------------------------------------------------------------


async def test_a_pause_goes_pending_sent_then_resolved_then_taken_on_the_clock(
    env: TestEnv,
) -> None:
    _, deposit_id, _ = await both_paused(env)
    pauses = env.app.store.pauses
    asked = await pauses.find_by_tenant_id_and_pause_id("acme", deposit_id)
    assert asked is not None
    assert (asked.status, asked.is_sent, asked.resolution) == (PauseStatus.PENDING, True, None)
    assert asked.asked_at == env.clock.now()
    await env.clock.advance(timedelta(minutes=5))
    await env.app.resume(deposit_id, decision=approve(), tenant_id="acme", answered_by="clerk-3")
    taken = await pauses.find_by_tenant_id_and_pause_id("acme", deposit_id)
    assert taken is not None
    assert taken.status is PauseStatus.TAKEN
    assert taken.resolution is PauseResolution.REPLIED
    assert taken.resolved_at == asked.asked_at + timedelta(minutes=5)
    assert taken.answer is not None
    assert taken.answer.decision == approve().model_copy(update={"digest": asked.ask.digest})


async def test_a_reply_that_lands_while_send_is_still_returning_is_taken_at_once(
    env: TestEnv,
    recorded: DeskRecorder,
) -> None:
    env.mock_llm(OfficeAgent).then_return(
        call_tools(tool_call(ReturnDepositTool, lease_id="L-7")), DONE
    )
    webhook: list[asyncio.Future[ExecutionOutput]] = []

    async def fast_webhook(ask: object) -> ChannelOutcome:
        pause_id = ask.pause_id  # type: ignore[attr-defined]
        webhook.append(
            asyncio.ensure_future(
                env.app.resume(pause_id, decision=approve(), answered_by="clerk-3")
            )
        )
        for _ in range(100):  # send is still returning while the answer is recorded
            pause = await env.app.store.pauses.find_by_tenant_id_and_pause_id("default", pause_id)
            if pause is not None and pause.status is PauseStatus.RESOLVED:
                break
            await asyncio.sleep(0.001)
        return ChannelOutcome.await_reply()

    env.mock_of(DepositApprovalChannel).send.side_effect = fast_webhook
    result = await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
    assert result.status is ExecutionStatus.COMPLETED  # the call did not pause at all
    assert not [e for e in recorded.events if isinstance(e, ExecutionPauseEvent)]
    assert recorded.runs == ["return-deposit L-7 as user-1"]
    waited = await webhook[0]
    assert waited.status is ExecutionStatus.COMPLETED


# ---- retention -------------------------------------------------------------------------


async def test_within_retention_a_late_answer_is_not_paused_after_it_the_id_is_unknown(
    env: TestEnv,
) -> None:
    _, _, owner_id = await both_paused(env)
    await env.app.resume(owner_id, decision=approve(), tenant_id="acme", owner_id="user-1")
    await env.clock.jump(timedelta(hours=23))
    with pytest.raises(NotPausedError):
        await env.app.resume(owner_id, decision=approve(), tenant_id="acme", owner_id="user-1")
    await env.clock.jump(timedelta(hours=1, seconds=30))  # the sweep runs on the clock
    with pytest.raises(UnknownPauseError, match="or its record expired"):  # not "a wrong id"
        await env.app.resume(owner_id, decision=approve(), tenant_id="acme", owner_id="user-1")


async def test_a_pending_pause_is_never_removed_however_old(env: TestEnv) -> None:
    _, deposit_id, owner_id = await both_paused(env)
    await env.app.resume(owner_id, decision=approve(), tenant_id="acme", owner_id="user-1")
    await env.clock.jump(timedelta(days=30))  # the sweep runs, a month after the question
    with pytest.raises(UnknownPauseError):  # the sweep ran: the answered record is gone
        await env.app.resume(owner_id, decision=approve(), tenant_id="acme", owner_id="user-1")
    result = await env.app.resume(
        deposit_id, decision=approve(), tenant_id="acme", answered_by="clerk-3"
    )
    assert result.status is ExecutionStatus.COMPLETED


# ---- cancel and withdraw -------------------------------------------------------------------


async def test_cancel_withdraws_the_threads_pauses_and_tells_each_channel_once(
    env: TestEnv,
    recorded: DeskRecorder,
) -> None:
    result, deposit_id, owner_id = await both_paused(env)
    desk_channel = env.mock_of(DeskDepositApprovalChannel)
    cancelled = await env.app.cancel(result.thread_id, tenant_id="acme", owner_id="user-1")
    assert cancelled is not None
    assert cancelled.status is ExecutionStatus.CANCELLED
    desk_channel.withdraw.assert_called_once()
    withdrawal = desk_channel.withdraw.call_args.args[0]
    assert withdrawal.pause_id == deposit_id
    assert withdrawal.resolution is PauseResolution.CANCELLED
    assert withdrawal.reference == "desk/L-7"  # what its send kept of the question it posted
    assert recorded.sent == ["send L-7 acme", "withdraw L-7 cancelled"]
    with pytest.raises(NotPausedError):
        await env.app.resume(owner_id, decision=approve(), tenant_id="acme", owner_id="user-1")
    assert await env.app.cancel(result.thread_id, tenant_id="acme", owner_id="user-1") is None
    desk_channel.withdraw.assert_called_once()
    assert recorded.runs == []


async def test_cancel_with_an_owner_id_is_by_the_threads_owner(env: TestEnv) -> None:
    result, _, _ = await both_paused(env)
    with pytest.raises(ThreadOwnerError):
        await env.app.cancel(result.thread_id, tenant_id="acme", owner_id="mallory")
    cancelled = await env.app.cancel(result.thread_id, tenant_id="acme")  # an operator's call
    assert cancelled is not None
    assert cancelled.status is ExecutionStatus.CANCELLED


async def test_a_withdraw_that_throws_is_one_warning_and_nothing_else(
    env: TestEnv, caplog: pytest.LogCaptureFixture
) -> None:
    result, deposit_id, _ = await both_paused(env)
    env.mock_of(DeskDepositApprovalChannel).withdraw.side_effect = RuntimeError("gone")
    with caplog.at_level(logging.WARNING, logger="agboss"):
        cancelled = await env.app.cancel(result.thread_id, tenant_id="acme", owner_id="user-1")
    assert cancelled is not None
    [warning] = [r for r in caplog.records if r.message.startswith("channel.withdraw-failed")]
    assert warning.levelno == logging.WARNING
    assert warning.execution_id == result.execution_id  # type: ignore[attr-defined]
    assert warning.tenant_id == "acme"  # type: ignore[attr-defined]
    # a channel pause's id never reaches the log
    assert not any(deposit_id in record.getMessage() for record in caplog.records)
    assert not any(deposit_id in str(record.__dict__) for record in caplog.records)


async def test_a_withdraw_past_its_tools_timeout_is_cut_off_on_the_clock(
    env: TestEnv, caplog: pytest.LogCaptureFixture
) -> None:
    result, _, _ = await both_paused(env)
    started = asyncio.Event()

    async def hang(withdrawal: object) -> None:
        started.set()
        await asyncio.sleep(3600)

    env.mock_of(DeskDepositApprovalChannel).withdraw.side_effect = hang
    with caplog.at_level(logging.WARNING, logger="agboss"):
        cancelling = asyncio.ensure_future(
            env.app.cancel(result.thread_id, tenant_id="acme", owner_id="user-1")
        )
        await started.wait()
        await env.clock.advance(timedelta(seconds=5))  # return-deposit-tool's timeout
        assert (await cancelling) is not None
    assert any(r.message.startswith("channel.withdraw-failed") for r in caplog.records)


# ---- replies (the interpreter itself is the next issue) --------------------------------


async def test_a_reply_for_a_role_without_an_interpreter_leaves_the_pause_untouched(
    env: TestEnv,
) -> None:
    _, deposit_id, _ = await both_paused(env)
    with pytest.raises(ReplyInterpreterMissingError) as caught:
        await env.app.resume(deposit_id, reply="yes", tenant_id="acme", answered_by="clerk-3")
    assert caught.value.code == "pause.no-reply-interpreter"
    pause = await env.app.store.pauses.find_by_tenant_id_and_pause_id("acme", deposit_id)
    assert pause is not None
    assert pause.status is PauseStatus.PENDING


async def test_a_reply_read_by_a_code_interpreter_answers_like_a_decision(
    env: TestEnv, recorded: DeskRecorder
) -> None:
    _, _, owner_id = await both_paused(env)
    await env.app.resume(owner_id, reply='{"approved": true}', tenant_id="acme", owner_id="user-1")
    assert recorded.runs == ["book-expense taxi 12.5"]


# ---- the audit trail ---------------------------------------------------------------------


async def test_record_pauses_lists_every_resolved_pause_in_the_order_asked(env: TestEnv) -> None:
    result, deposit_id, owner_id = await both_paused(env)
    await env.app.resume(owner_id, decision=approve(), tenant_id="acme", owner_id="user-1")
    final = await env.app.resume(
        deposit_id, decision=approve(), tenant_id="acme", answered_by="clerk-3", record=True
    )
    assert final.record is not None
    deposit, expense = final.record.pauses
    assert deposit.pause_id is None  # a channel pause: only its channel has the id
    assert deposit.responder == "clerk-3"
    assert deposit.answered_by is PauseAnswerer.CHANNEL
    assert deposit.role == "deposit-approval-channel"
    assert deposit.resolution is PauseResolution.REPLIED
    assert deposit.decision.model_copy(update={"digest": None}) == approve()
    assert deposit.decision.digest is not None  # the question's, bound to it (test_digests)
    assert deposit.step.tool_call is not None
    assert deposit.step.tool_call.tool == "return-deposit-tool"
    assert deposit.step.agent.name == "office-agent"
    assert deposit.execution_id == result.execution_id
    assert expense.pause_id == owner_id
    assert expense.responder == "user-1"
    assert deposit.asked_at == env.clock.now().isoformat()


async def test_the_audit_trail_outlives_retention(env: TestEnv) -> None:
    result, deposit_id, owner_id = await both_paused(env)
    await env.app.resume(owner_id, decision=approve(), tenant_id="acme", owner_id="user-1")
    await env.app.resume(deposit_id, decision=approve(), tenant_id="acme", answered_by="clerk-3")
    await env.clock.jump(timedelta(days=3))  # one sweep, past retention
    entries = await env.app.store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
        "acme", result.execution_id
    )
    assert len(entries) == 2
    assert await env.app.store.pauses.find_by_tenant_id_and_pause_id("acme", owner_id) is None


async def test_cancelled_pauses_enter_the_audit_trail_without_a_decision(env: TestEnv) -> None:
    result, _, _ = await both_paused(env)
    await env.app.cancel(result.thread_id, tenant_id="acme", owner_id="user-1")
    entries = await env.app.store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
        "acme", result.execution_id
    )
    assert [(e.resolution, e.decision, e.responder) for e in entries] == [
        (PauseResolution.CANCELLED, None, None)
    ] * 2


# ---- durability and several instances ------------------------------------------------------


async def test_a_pause_asked_by_one_process_is_answered_by_a_fresh_app_on_the_same_file(
    env: TestEnv,
    recorded: DeskRecorder,
) -> None:
    _, deposit_id, owner_id = await both_paused(env)
    await env.restart()
    await env.app.resume(deposit_id, decision=approve(), tenant_id="acme", answered_by="clerk-3")
    await env.restart()
    result = await env.app.resume(owner_id, decision=approve(), tenant_id="acme", owner_id="user-1")
    assert result.status is ExecutionStatus.COMPLETED
    assert sorted(recorded.runs) == ["book-expense taxi 12.5", "return-deposit L-7 as user-1"]


@pytest.mark.application.with_args(OfficeApplication, instances=2)
async def test_two_pauses_of_one_tree_are_answered_from_two_instances_at_once(
    env: TestEnv, recorded: DeskRecorder
) -> None:
    _, deposit_id, owner_id = await both_paused(env)
    first, second = env.apps
    results = await asyncio.gather(
        first.resume(deposit_id, decision=approve(), tenant_id="acme", answered_by="clerk-3"),
        second.resume(owner_id, decision=approve(), tenant_id="acme", owner_id="user-1"),
    )
    final = await first.get(results[0].execution_id, tenant_id="acme")
    assert final.status is ExecutionStatus.COMPLETED
    assert sorted(recorded.runs) == ["book-expense taxi 12.5", "return-deposit L-7 as user-1"]
    assert any(r.status is ExecutionStatus.COMPLETED for r in results)


async def test_before_resting_a_pass_takes_the_decisions_recorded_meanwhile(
    env: TestEnv, recorded: DeskRecorder
) -> None:
    _, deposit_id, owner_id = await both_paused(env)
    running, release = asyncio.Event(), asyncio.Event()

    async def slow_run(args: object) -> object:
        running.set()
        await release.wait()
        return desk.DeskDoneDto(status="returned, slowly")

    env.mock_of(ReturnDepositTool).run.side_effect = slow_run
    holder = asyncio.ensure_future(
        env.app.resume(deposit_id, decision=approve(), tenant_id="acme", answered_by="clerk-3")
    )
    await running.wait()
    webhook = asyncio.ensure_future(
        env.app.resume(owner_id, decision=approve(), tenant_id="acme", owner_id="user-1")
    )
    await _until_resolved(env, owner_id)
    webhook.cancel()  # the webhook gives up waiting: its recorded decision must not wait
    release.set()
    result = await holder
    assert result.status is ExecutionStatus.COMPLETED
    assert recorded.runs == ["book-expense taxi 12.5"]


async def test_a_recorded_answer_whose_caller_died_is_taken_by_the_recovery_sweep(
    env: TestEnv,
    recorded: DeskRecorder,
) -> None:
    result, _, owner_id = await both_paused(env)
    store = env.app.store
    # Another instance holds the tree and dies: its lease stays until it expires.
    assert await write_one(
        store,
        AcquireLease(result.execution_id, "dead-instance", timedelta(seconds=30), env.clock.now()),
    )
    webhook = asyncio.ensure_future(
        env.app.resume(owner_id, decision=approve(), tenant_id="acme", owner_id="user-1")
    )
    await _until_resolved(env, owner_id)
    webhook.cancel()  # the webhook's process dies too, after recording the answer
    assert recorded.runs == []
    await env.clock.advance(timedelta(seconds=61))  # the lease expires; the sweep runs
    assert recorded.runs == ["book-expense taxi 12.5"]
    after = await env.app.get(result.execution_id, tenant_id="acme")
    assert after.status is ExecutionStatus.PAUSED
    assert [p.channel for p in after.pending] == ["deposit-approval-channel"]


async def test_a_failed_step_cancels_its_sent_sibling_pause_and_tells_its_channel_once(
    env: TestEnv,
) -> None:
    env.mock_llm(OfficeAgent).then_return(BOTH, DONE)
    env.mock_of(desk.ButtonExpenseApprovalChannel).send.side_effect = ConnectionError("down")
    desk_channel = env.mock_of(DeskDepositApprovalChannel)
    with pytest.raises(AgentFailedError, match="down"):
        await env.app.execute(OfficeWorkflow, REQUEST, tenant_id="acme", owner_id="user-1")
    desk_channel.withdraw.assert_called_once()
    assert desk_channel.withdraw.call_args.args[0].resolution is PauseResolution.CANCELLED
    deposit_id = desk_channel.send.call_args.args[0].pause_id
    with pytest.raises(NotPausedError):
        await env.app.resume(deposit_id, decision=approve(), tenant_id="acme", answered_by="c")


async def test_a_pause_closed_while_send_was_returning_is_withdrawn_by_its_own_step_once(
    env: TestEnv,
) -> None:
    env.mock_llm(OfficeAgent).then_return(call_tools(tool_call(ReturnDepositTool, lease_id="L-7")))
    store = env.app.store

    async def cancelled_meanwhile(ask: object) -> ChannelOutcome:
        pause_id = ask.pause_id  # type: ignore[attr-defined]
        pause = await store.pauses.find_by_tenant_id_and_pause_id("acme", pause_id)
        assert pause is not None
        row = await store.executions.find_by_id(pause.execution_id)
        assert row is not None
        await env.app.cancel(row.thread_id, tenant_id="acme", owner_id="user-1")
        return ChannelOutcome.await_reply()

    desk_channel = env.mock_of(DeskDepositApprovalChannel)
    desk_channel.send.side_effect = cancelled_meanwhile
    result = await env.app.execute(OfficeWorkflow, REQUEST, tenant_id="acme", owner_id="user-1")
    assert result.status is ExecutionStatus.CANCELLED
    desk_channel.withdraw.assert_called_once()
    assert desk_channel.withdraw.call_args.args[0].resolution is PauseResolution.CANCELLED
