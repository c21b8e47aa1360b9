"""Answering with free text: pauses.md "Answering with free text", sentence by sentence."""

from __future__ import annotations

from typing import Any

import pytest

from agboss import (
    AgentFailedError,
    App,
    AssemblyError,
    BudgetExceededError,
    DtoValidationError,
    ExecutionStatus,
    FunctionProvider,
    PauseAnswererError,
    PauseStatus,
    ReplyInterpretation,
    ToolCallApprovalDecisionDto,
    UninterpretableReplyError,
    WorkflowFinishTextDto,
)
from agboss.errors import TestSetupError
from agboss.models import ChatRequest, ChatResponse, MessageRole
from agboss.models._decisions import DecisionRequest
from agboss.testing import (
    ScriptedTurn,
    TestEnv,
    call_tools,
    decide_with,
    reply_with,
    tool_call,
)
from tests.apps.replies_app import (
    BookExpenseTool,
    DepositReplyInterpreter,
    DeskDepositApprovalChannel,
    ExpenseReplyInterpreter,
    OfficeAgent,
    OfficeApplication,
    OfficeWorkflow,
    RefundCardTool,
    RefundReplyInterpreter,
    RepliesRecorder,
    ReturnDepositTool,
    SlackRefundApprovalChannel,
    TightOfficeWorkflow,
)

DONE = reply_with(WorkflowFinishTextDto, text="Done.")


pytestmark = pytest.mark.application.with_args(OfficeApplication)


async def paused_on(env: TestEnv, call: Any, workflow: type[Any] = OfficeWorkflow) -> str:
    """Executes until ``call`` waits; the pause id its channel (or pending) has."""
    env.mock_llm(OfficeAgent).then_return(call_tools(call), DONE)
    channels = [env.mock_of(SlackRefundApprovalChannel), env.mock_of(DeskDepositApprovalChannel)]
    result = await env.app.execute(workflow, {"text": "please"}, owner_id="user-1")
    assert result.status is ExecutionStatus.PAUSED
    for mock in channels:
        if mock.send.called:
            return str(mock.send.call_args.args[0].pause_id)
    pause_id = result.pending[0].pause_id
    assert pause_id is not None
    return pause_id


async def status_of(env: TestEnv, pause_id: str) -> PauseStatus:
    pause = await env.app.store.pauses.find_by_tenant_id_and_pause_id("default", pause_id)
    assert pause is not None
    return pause.status


def tool_results(env: TestEnv) -> list[str]:
    request = env.mock_llm(OfficeAgent).requests[-1]
    assert isinstance(request, ChatRequest)
    return [m.content for m in request.messages if m.role is MessageRole.TOOL]


REFUND = tool_call(RefundCardTool, order_id="7", amount=50.0)
DEPOSIT = tool_call(ReturnDepositTool, lease_id="L-7")
EXPENSE = tool_call(BookExpenseTool, purpose="taxi", amount=12.5)


# ---- the spec's three examples ---------------------------------------------------------


async def test_a_model_reads_ok_but_only_half_as_an_approval_of_half_the_amount(
    env: TestEnv,
    recorded: RepliesRecorder,
) -> None:
    pause_id = await paused_on(env, REFUND)
    interpreter = env.mock_llm(RefundReplyInterpreter)
    interpreter.when(reply="ok, but only half").then_return(
        reply_with(
            ToolCallApprovalDecisionDto,
            approved=True,
            override_arguments={"order_id": "7", "amount": 25.0},
        )
    )
    result = await env.app.resume(pause_id, reply="ok, but only half", answered_by="manager-17")
    assert result.status is ExecutionStatus.COMPLETED
    assert recorded.runs == ["refund 7 25.0"]


async def test_a_decision_model_reads_a_clerks_reply_as_approve_or_refuse(
    env: TestEnv, recorded: RepliesRecorder
) -> None:
    pause_id = await paused_on(env, DEPOSIT)
    env.mock_llm(DepositReplyInterpreter).then_return(decide_with(approved=0.9))
    result = await env.app.resume(pause_id, reply="sure, give it back", answered_by="clerk-3")
    assert result.status is ExecutionStatus.COMPLETED
    assert recorded.runs == ["return-deposit L-7"]


async def test_code_reads_the_owners_expense_button(
    env: TestEnv, recorded: RepliesRecorder
) -> None:
    pause_id = await paused_on(env, EXPENSE)
    result = await env.app.resume(pause_id, reply='{"approved": true}', owner_id="user-1")
    assert result.status is ExecutionStatus.COMPLETED
    assert recorded.runs == ["book-expense taxi"]


# ---- what an interpreter reads ---------------------------------------------------------


async def test_a_chat_model_gets_its_prompt_and_the_ask_and_reply_sections(env: TestEnv) -> None:
    pause_id = await paused_on(env, REFUND)
    script = env.mock_llm(RefundReplyInterpreter).then_return(
        reply_with(ToolCallApprovalDecisionDto, approved=True)
    )
    await env.app.resume(pause_id, reply="fine", answered_by="manager-17")
    [request] = script.requests
    assert isinstance(request, ChatRequest)
    system, user = request.messages
    assert system.content.startswith("The manager answered a refund approval in free text.")
    assert user.content.startswith("### ask\n")
    assert '"amount": 50.0' in user.content
    assert user.content.endswith("### reply\nfine")
    assert [schema.name for schema in request.tools] == ["final_answer"]
    assert request.tools[0].parameters["title"] == "ToolCallApprovalDecisionDto"
    assert request.require_tool
    assert request.caller.label == "reply-interpreter:refund-reply-interpreter"


async def test_a_decision_model_gets_one_approved_decision_and_the_interpreters_prompt(
    env: TestEnv,
) -> None:
    pause_id = await paused_on(env, DEPOSIT)
    script = env.mock_llm(DepositReplyInterpreter).then_return(decide_with(approved=0.9))
    await env.app.resume(pause_id, reply="sure", answered_by="clerk-3")
    [request] = script.requests
    assert isinstance(request, DecisionRequest)
    assert [d.name for d in request.decisions] == ["approved"]
    assert "Does the reply approve the call?" in request.decisions[0].question
    assert request.instructions == "The clerk answered a deposit return."
    assert request.state.endswith("### reply\nsure")


async def test_a_decision_model_approves_only_above_one_half_and_answers_approved_only(
    env: TestEnv,
    recorded: RepliesRecorder,
) -> None:
    pause_id = await paused_on(env, DEPOSIT)
    env.mock_llm(DepositReplyInterpreter).then_return(decide_with(approved=0.5))
    result = await env.app.resume(
        pause_id, reply="hm, not sure", answered_by="clerk-3", record=True
    )
    assert recorded.runs == []
    assert tool_results(env) == ["Tool error: the call was rejected by clerk-3"]
    assert result.record is not None
    [entry] = result.record.pauses
    assert entry.decision.model_copy(update={"digest": None}) == ToolCallApprovalDecisionDto(
        approved=False
    )


async def test_a_code_interpreter_reads_in_the_pauses_execution_frame(
    env: TestEnv, recorded: RepliesRecorder
) -> None:
    pause_id = await paused_on(env, EXPENSE)
    await env.app.resume(pause_id, reply='{"approved": false}', owner_id="user-1")
    [context] = recorded.contexts
    assert context.tenant.tenant_id == "default"
    assert context.owner_id == "user-1"
    assert context.step is not None
    assert context.step.node_id == "1:office-agent"
    assert context.step.call_id == "call-0"
    assert context.step.idempotency_key.endswith("/1:office-agent#0/turn-0/tool-0")


# ---- the pause survives a bad reply ------------------------------------------------------


async def test_not_understood_is_an_uninterpretable_reply_and_the_pause_stays_pending(
    env: TestEnv,
    recorded: RepliesRecorder,
) -> None:
    pause_id = await paused_on(env, EXPENSE)
    with pytest.raises(UninterpretableReplyError) as caught:
        await env.app.resume(pause_id, reply='{"pressed": "maybe"}', owner_id="user-1")
    assert caught.value.code == "pause.uninterpretable-reply"
    assert caught.value.reason == 'not an expense button: {"pressed": "maybe"}'
    assert caught.value.cause is None
    assert await status_of(env, pause_id) is PauseStatus.PENDING
    await env.app.resume(pause_id, decision={"approved": True}, owner_id="user-1")
    assert recorded.runs == ["book-expense taxi"]


async def test_an_interpreter_that_crashes_is_unreadable_with_the_error_as_its_cause(
    env: TestEnv,
) -> None:
    pause_id = await paused_on(env, EXPENSE)
    with pytest.raises(UninterpretableReplyError) as caught:
        await env.app.resume(pause_id, reply="yes please", owner_id="user-1")
    assert isinstance(caught.value.cause, ValueError)  # json.JSONDecodeError
    assert caught.value.__cause__ is caught.value.cause
    assert await status_of(env, pause_id) is PauseStatus.PENDING


async def test_a_plain_object_from_a_code_interpreter_is_unreadable(env: TestEnv) -> None:
    pause_id = await paused_on(env, EXPENSE)
    env.mock_of(ExpenseReplyInterpreter).interpret.return_value = {"approved": True}
    with pytest.raises(UninterpretableReplyError, match="not a ReplyInterpretation"):
        await env.app.resume(pause_id, reply="x", owner_id="user-1")
    assert await status_of(env, pause_id) is PauseStatus.PENDING


async def test_a_model_that_gives_no_answer_is_unreadable(env: TestEnv) -> None:
    pause_id = await paused_on(env, REFUND)
    env.mock_llm(RefundReplyInterpreter).then_return(ScriptedTurn(content="I am not sure."))
    with pytest.raises(UninterpretableReplyError, match="gave no answer"):
        await env.app.resume(pause_id, reply="ok?", answered_by="manager-17")
    assert await status_of(env, pause_id) is PauseStatus.PENDING


async def test_an_answer_invalid_for_the_role_is_unreadable(
    env: TestEnv, recorded: RepliesRecorder
) -> None:
    pause_id = await paused_on(env, REFUND)
    env.mock_llm(RefundReplyInterpreter).then_return(
        reply_with(ToolCallApprovalDecisionDto, approved=True, override_arguments={"amount": 1})
    )
    with pytest.raises(UninterpretableReplyError, match="not valid for the role") as caught:
        await env.app.resume(pause_id, reply="ok, 1 euro", answered_by="manager-17")
    assert isinstance(caught.value.cause, DtoValidationError)
    assert await status_of(env, pause_id) is PauseStatus.PENDING
    assert recorded.runs == []


async def test_the_credential_is_checked_for_a_reply_as_for_a_decision(env: TestEnv) -> None:
    pause_id = await paused_on(env, REFUND)
    with pytest.raises(PauseAnswererError):
        await env.app.resume(pause_id, reply="ok", owner_id="user-1")
    assert env.mock_llm(RefundReplyInterpreter).requests == []


# ---- budgets, the ledger and the spend --------------------------------------------------


async def test_an_interpreters_call_on_a_spent_budget_is_refused_and_the_pause_untouched(
    env: TestEnv,
) -> None:
    pause_id = await paused_on(env, REFUND, TightOfficeWorkflow)
    script = env.mock_llm(RefundReplyInterpreter)
    with pytest.raises(BudgetExceededError) as caught:
        await env.app.resume(pause_id, reply="ok", answered_by="manager-17")
    assert "the budget of tight-office-workflow is spent" in str(caught.value)
    assert script.requests == []
    assert await status_of(env, pause_id) is PauseStatus.PENDING


async def test_agents_model_calls_are_checked_against_budgets_too(
    env: TestEnv, recorded: RepliesRecorder
) -> None:
    pause_id = await paused_on(env, REFUND, TightOfficeWorkflow)
    with pytest.raises(AgentFailedError) as caught:
        await env.app.resume(pause_id, decision={"approved": True}, answered_by="manager-17")
    assert isinstance(caught.value.__cause__, BudgetExceededError)
    assert recorded.runs == ["refund 7 50.0"]


async def test_an_interpreters_call_is_in_the_ledger_at_once_and_in_the_spend_once_taken(
    env: TestEnv,
) -> None:
    pause_id = await paused_on(env, REFUND)
    env.mock_llm(RefundReplyInterpreter).then_return(
        ScriptedTurn(content="no idea"), reply_with(ToolCallApprovalDecisionDto, approved=True)
    )
    with pytest.raises(UninterpretableReplyError):
        await env.app.resume(pause_id, reply="hmm", answered_by="manager-17")
    result = await env.app.resume(pause_id, reply="yes", answered_by="manager-17", record=True)
    assert result.record is not None
    callers = [entry.caller for entry in result.record.ledger]
    assert callers == [
        "agent:office-agent",
        "reply-interpreter:refund-reply-interpreter",
        "reply-interpreter:refund-reply-interpreter",
        "agent:office-agent",
    ]
    assert {entry.execution_id for entry in result.record.ledger} == {result.execution_id}
    taken = result.record.ledger[2].usage
    agents = [e.usage for e in result.record.ledger if e.caller.startswith("agent:")]
    assert result.spend.model_calls == 3  # two agent turns and the reading that was taken
    assert result.spend.total_tokens == sum(u.total_tokens for u in [*agents, taken])


# ---- the test kit -------------------------------------------------------------------------


async def test_mock_llm_of_a_code_interpreter_is_a_setup_error(env: TestEnv) -> None:
    with pytest.raises(TestSetupError, match="calls no model"):
        env.mock_llm(ExpenseReplyInterpreter)


async def test_mock_of_a_code_interpreter_scripts_its_reading(
    env: TestEnv, recorded: RepliesRecorder
) -> None:
    pause_id = await paused_on(env, EXPENSE)
    env.mock_of(ExpenseReplyInterpreter).interpret.return_value = ReplyInterpretation.understood(
        ToolCallApprovalDecisionDto(approved=True)
    )
    await env.app.resume(pause_id, reply="anything at all", owner_id="user-1")
    assert recorded.runs == ["book-expense taxi"]
    assert recorded.contexts == []  # the real interpret did not run


async def test_a_code_interpreter_may_be_async(env: TestEnv, recorded: RepliesRecorder) -> None:
    pause_id = await paused_on(env, EXPENSE)

    async def interpret(reading: Any) -> ReplyInterpretation:
        return ReplyInterpretation.understood(ToolCallApprovalDecisionDto(approved=True))

    env.mock_of(ExpenseReplyInterpreter).interpret.side_effect = interpret
    await env.app.resume(pause_id, reply="👍", owner_id="user-1")
    assert recorded.runs == ["book-expense taxi"]


async def test_an_interpreters_model_must_be_served_like_any_model() -> None:
    only_moonshot = FunctionProvider(
        lambda request: ChatResponse(content="x"), serves=["moonshotai/*"]
    )
    with pytest.raises(AssemblyError) as caught:
        await App.create(OfficeApplication, providers=[only_moonshot])
    found = [(v.rule, v.component) for v in caught.value.violations]
    assert found == [("model.unserved", "deposit-reply-interpreter")]
