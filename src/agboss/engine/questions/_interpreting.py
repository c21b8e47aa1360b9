"""Reading a free-text reply with the pause's role's reply interpreter, before the pause closes.

A reply that cannot be read as a valid answer — a code interpreter's ``not_understood``, a
model that gave no answer, an answer invalid for the role, an interpreter that crashed — is
`UninterpretableReplyError`, and the pause stays Pending.

A model interpreter's call is checked against the tree's budgets before it is made
(`BudgetExceededError`, the pause untouched), counted in the ledger as soon as it returns,
under the pause's execution with the caller ``reply-interpreter:<name>``, and added to the
execution's spend when the waiting step takes the answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agboss.components import ApprovalAsk, ReplyInterpreterSpec
from agboss.dto import ToolCallApprovalDecisionDto, schema_of
from agboss.engine.instance import Runtime
from agboss.engine.questions._channels import asked_arguments, tool_of
from agboss.engine.questions._decisions import validate_decision
from agboss.engine.trees import (
    check_budgets,
    count_spend,
    execution_context,
    maybe_await,
    step_context,
)
from agboss.enums import DecidedBy, PauseKind
from agboss.errors import (
    BudgetExceededError,
    DtoValidationError,
    TestSetupError,
    UninterpretableReplyError,
)
from agboss.interpreters import InterpreterInput, ReplyInterpretation
from agboss.models import (
    ChatRequest,
    Decision,
    DecisionModel,
    DecisionRequest,
    Message,
    MessageRole,
    ModelCaller,
    ToolSchema,
    Usage,
)
from agboss.observability import chat_span
from agboss.pii import PiiSeam, TreeTokens, UnknownTokenError
from agboss.records import DecisionReading, PauseRecord
from agboss.store.protocol import ExecutionRow

__all__ = ["APPROVAL_QUESTION", "Interpretation", "interpret_reply"]

ANSWER_TOOL = "final_answer"

APPROVAL_QUESTION = (
    "Someone was asked to approve the tool call under '### ask' and answered with the text "
    "under '### reply'. Does the reply approve the call? Answer with one word: yes or no."
)
"""The framework's question to a decision model that reads an approval's reply."""

RUN_AGAIN_QUESTION = (
    "This call may already have run: its process stopped mid-call, after it began and before "
    "its result was kept. Approving runs it again, as it was; rejecting leaves it as it is."
)
"""What the ask of a call that may have run (`PauseKind.INTERRUPTED`) says to a model that
reads its reply."""


@dataclass(frozen=True, slots=True)
class Interpretation:
    """What a reply reads as, what reading it cost, and how it was read."""

    decision: ToolCallApprovalDecisionDto
    usage: Usage | None
    reading: DecisionReading


async def interpret_reply(
    runtime: Runtime, pause: PauseRecord, row: ExecutionRow, reply: str
) -> Interpretation:
    """The decision a reply reads as, validated for the pause's tool.

    Raises:
        UninterpretableReplyError: The reply cannot be read as a valid answer.
        BudgetExceededError: A model interpreter's tree has no budget left.
    """
    tool_spec, channel = tool_of(runtime, pause)
    assert channel.role is not None
    assert channel.role.reply_interpreter is not None
    interpreter = channel.role.reply_interpreter
    spec = runtime.assembly.components[interpreter]
    assert isinstance(spec, ReplyInterpreterSpec)
    args = asked_arguments(tool_spec, pause)
    reading = InterpreterInput(
        ask=ApprovalAsk(
            tool=pause.ask.tool, call_id=pause.ask.call_id, arguments=args, kind=pause.ask.kind
        ),
        reply=reply,
    )
    usage: Usage | None = None
    how = DecisionReading(interpreter=spec.name)
    if spec.decided_by is DecidedBy.CODE:
        decided = await _by_code(runtime, interpreter, spec, pause, row, reading)
    else:
        # The model reads the question and the reply through the PII policies, as an agent
        # does; tokens it answers with are the real values again before validation. Tokens
        # issued here live for this call only: the answer keeps real values.
        policy = runtime.assembly.pii_policy(row.workflow)
        store = runtime.store
        seam = PiiSeam(
            policy, TreeTokens(load=lambda: store.executions.pii_tokens(row.root_execution_id))
        )
        seam.know(args, type(args))
        await seam.ready_for([json.dumps(pause.ask.arguments), reply])
        decided, usage, p_yes = await _by_model(runtime, spec, row, reading, seam)
        probabilities = None if p_yes is None else {"approved": p_yes}
        how = DecisionReading(interpreter=spec.name, model=spec.model, probabilities=probabilities)
        try:
            await seam.ready_for([json.dumps(decided, default=str)])
            decided = seam.reveal_value(decided)
        except UnknownTokenError as error:  # a decline: the pause stays Pending
            raise UninterpretableReplyError(
                f"{spec.name}'s model answered with {error.token}, a token nobody issued",
                cause=error,
            ) from error
    try:
        decision = validate_decision(
            decided,
            tool_spec.name,
            tool_spec.input,
            runtime.assembly.spec.limits,
            pause.ask.kind,
        )
    except DtoValidationError as error:
        raise UninterpretableReplyError(
            f"{spec.name} gave an answer that is not valid for the role: {error.message}",
            cause=error,
        ) from error
    return Interpretation(decision, usage, how)


async def _by_code(
    runtime: Runtime,
    interpreter: type[Any],
    spec: ReplyInterpreterSpec,
    pause: PauseRecord,
    row: ExecutionRow,
    reading: InterpreterInput[Any],
) -> object:
    context = execution_context(row, step_context(pause.step, "reply-interpret"))
    try:
        handler = runtime.assembly.container.create(interpreter, spec.deps, context)
        outcome = await maybe_await(handler.interpret(reading))
    except Exception as error:
        raise UninterpretableReplyError(f"{spec.name} crashed: {error!r}", cause=error) from error
    if not isinstance(outcome, ReplyInterpretation):
        raise UninterpretableReplyError(
            f"{spec.name}.interpret returned {type(outcome).__name__}, not a "
            "ReplyInterpretation (return ReplyInterpretation.understood(...) or "
            ".not_understood(reason=...))"
        )
    if outcome.decision is None:
        raise UninterpretableReplyError(outcome.reason or f"{spec.name} did not understand it")
    return outcome.decision


def _state(reading: InterpreterInput[Any], seam: PiiSeam) -> str:
    arguments = reading.ask.arguments.model_dump(mode="json")
    ask = {"tool": reading.ask.tool, "call_id": reading.ask.call_id, "arguments": arguments}
    if reading.ask.kind is PauseKind.INTERRUPTED:  # what approving it means here
        ask["question"] = RUN_AGAIN_QUESTION
    return seam.to_model(f"### ask\n{json.dumps(ask, indent=2)}\n\n### reply\n{reading.reply}")


async def _by_model(
    runtime: Runtime,
    spec: ReplyInterpreterSpec,
    row: ExecutionRow,
    reading: InterpreterInput[Any],
    seam: PiiSeam,
) -> tuple[object, Usage, float | None]:
    """What a model read the reply as, what it cost, and a decision model's P(yes)."""
    assert spec.model is not None
    caller = ModelCaller("reply-interpreter", spec.name, row.tenant_id, row.execution_id)
    await check_budgets(runtime, row, caller.label)  # BudgetExceededError: pause untouched
    instructions = runtime.prompts.get(spec.name, spec.prompt or "")
    subject = {"ask": reading.ask, "reply": reading.reply}
    decider = runtime.models.decision_model(spec.model)
    state = _state(reading, seam)  # PiiRefusedError here: nothing was sent, the pause waits
    try:
        with chat_span(
            spec.model,
            cost_caller=caller.label,
            decision_model=decider is not None,
            execution_id=row.execution_id,
            root_execution_id=row.root_execution_id,
            tenant_id=row.tenant_id,
        ):
            usage, p_yes, calls = await _read_with_model(
                runtime, spec, caller, subject, instructions, state, decider
            )
    except (TestSetupError, BudgetExceededError, UninterpretableReplyError):
        raise
    except Exception as error:
        raise UninterpretableReplyError(
            f"{spec.name}'s model call failed: {error}", cause=error
        ) from error
    await count_spend(runtime, row.root_execution_id, row.execution_id, caller.label, usage)
    answer = {"approved": p_yes > 0.5} if p_yes is not None else _answer_of(spec, calls)
    if answer is None:
        raise UninterpretableReplyError(f"{spec.name}'s model gave no answer")
    return answer, usage, p_yes


async def _read_with_model(
    runtime: Any,
    spec: ReplyInterpreterSpec,
    caller: ModelCaller,
    subject: dict[str, Any],
    instructions: str,
    state: str,
    decider: DecisionModel | None,
) -> tuple[Usage, float | None, tuple[Any, ...]]:
    """One call of the interpreter's model: (its usage, P(yes) of a decision model, the
    tool calls of a chat model)."""
    assert spec.model is not None
    if decider is not None:
        decided = await decider.decide(
            DecisionRequest(
                model=spec.model,
                instructions=instructions,
                state=state,
                decisions=(Decision.noul("approved", APPROVAL_QUESTION),),
                caller=caller,
                subject=subject,
            )
        )
        return decided.usage, decided.probabilities.get("approved"), ()
    response = await runtime.models.chat_model(spec.model).complete(
        ChatRequest(
            model=spec.model,
            messages=(
                Message(
                    MessageRole.SYSTEM,
                    f"{instructions}\n\nAnswer by calling the `{ANSWER_TOOL}` tool.",
                ),
                Message(MessageRole.USER, state),
            ),
            tools=(
                ToolSchema(
                    ANSWER_TOOL,
                    "Gives the decision the reply expresses.",
                    schema_of(ToolCallApprovalDecisionDto),
                ),
            ),
            caller=caller,
            subject=subject,
            require_tool=True,
        )
    )
    return response.usage, None, response.tool_calls


def _answer_of(spec: ReplyInterpreterSpec, calls: tuple[Any, ...]) -> object:
    for call in calls:
        if call.name == ANSWER_TOOL:
            try:
                return json.loads(call.arguments or "{}")
            except ValueError as error:
                raise UninterpretableReplyError(
                    f"{spec.name}'s model answered with arguments that are not JSON", cause=error
                ) from error
    return None
