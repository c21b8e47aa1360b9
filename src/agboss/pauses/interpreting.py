"""Reading a free-text reply with the pause's role's reply interpreter, before the pause closes.

A reply that cannot be read as a valid answer — a code interpreter's ``not_understood``, a
model that gave no answer, an answer invalid for the role, an interpreter that crashed — is
`UninterpretableReplyError`, and the pause stays Pending.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from agboss.components.channels import ApprovalAsk
from agboss.components.specs import ReplyInterpreterSpec
from agboss.dto import ToolCallApprovalDecisionDto
from agboss.engine.frame import maybe_await
from agboss.enums import DecidedBy
from agboss.errors import DtoValidationError, UninterpretableReplyError
from agboss.interpreters import InterpreterInput, ReplyInterpretation
from agboss.models.messages import ChatRequest, Message, MessageRole, ModelCaller, ToolSchema
from agboss.pauses.decisions import validate_decision
from agboss.pauses.model import PauseRecord
from agboss.pauses.withdrawing import pause_context, tool_of
from agboss.store.protocol import ExecutionRow

if TYPE_CHECKING:
    from agboss.engine.engine import Engine

__all__ = ["interpret_reply"]

ANSWER_TOOL = "final_answer"


async def interpret_reply(
    engine: Engine, pause: PauseRecord, row: ExecutionRow, reply: str
) -> ToolCallApprovalDecisionDto:
    """The decision a reply reads as.

    Raises:
        UninterpretableReplyError: The reply cannot be read as a valid answer.
    """
    runtime = engine.runtime
    _, tool_spec, channel = tool_of(runtime, pause)
    assert channel.role is not None
    assert channel.role.reply_interpreter is not None
    interpreter = channel.role.reply_interpreter
    spec = runtime.assembly.components[interpreter]
    assert isinstance(spec, ReplyInterpreterSpec)
    args = tool_spec.input.model_validate(pause.ask.arguments)
    reading = InterpreterInput(
        ask=ApprovalAsk(tool=pause.ask.tool, call_id=pause.ask.call_id, arguments=args),
        reply=reply,
    )
    context = pause_context(row, pause, "reply-interpret")
    if spec.decided_by is DecidedBy.CODE:
        handler = runtime.assembly.container.create(interpreter, spec.deps, context)
        try:
            outcome = await maybe_await(handler.interpret(reading))
        except Exception as error:
            raise UninterpretableReplyError(
                f"{spec.name} crashed: {error!r}", cause=error
            ) from error
        if not isinstance(outcome, ReplyInterpretation):
            raise UninterpretableReplyError(
                f"{spec.name}.interpret returned {type(outcome).__name__}, not a "
                "ReplyInterpretation (use ReplyInterpretation.understood / .not_understood)"
            )
        if outcome.decision is None:
            raise UninterpretableReplyError(outcome.reason or f"{spec.name} did not understand it")
        decided: object = outcome.decision
    else:
        decided = await _ask_model(engine, spec, pause, reading, row)
    try:
        return validate_decision(decided, tool_spec.name, tool_spec.input)
    except DtoValidationError as error:
        raise UninterpretableReplyError(
            f"{spec.name} gave an answer that is not valid for the role: {error.message}",
            cause=error,
        ) from error


async def _ask_model(
    engine: Engine,
    spec: ReplyInterpreterSpec,
    pause: PauseRecord,
    reading: InterpreterInput[Any],
    row: ExecutionRow,
) -> object:
    runtime = engine.runtime
    assert spec.model is not None
    arguments: BaseModel = reading.ask.arguments
    ask = {"tool": reading.ask.tool, "arguments": arguments.model_dump(mode="json")}
    request = ChatRequest(
        model=spec.model,
        messages=(
            Message(
                MessageRole.SYSTEM,
                f"{spec.prompt or ''}\n\nAnswer by calling the `{ANSWER_TOOL}` tool.",
            ),
            Message(
                MessageRole.USER,
                f"### ask\n{json.dumps(ask, indent=2)}\n\n### reply\n{reading.reply}",
            ),
        ),
        tools=(
            ToolSchema(
                ANSWER_TOOL,
                "Gives the decision the reply expresses.",
                ToolCallApprovalDecisionDto.model_json_schema(),
            ),
        ),
        caller=ModelCaller("reply-interpreter", spec.name, row.tenant_id, row.execution_id),
        subject={"ask": reading.ask, "reply": reading.reply},
        require_tool=True,
    )
    try:
        response = await runtime.models.chat_model(spec.model).complete(request)
    except Exception as error:
        raise UninterpretableReplyError(
            f"{spec.name}'s model call failed: {error}", cause=error
        ) from error
    for call in response.tool_calls:
        if call.name == ANSWER_TOOL:
            try:
                return json.loads(call.arguments or "{}")
            except ValueError as error:
                raise UninterpretableReplyError(
                    f"{spec.name}'s model answered with arguments that are not JSON", cause=error
                ) from error
    raise UninterpretableReplyError(f"{spec.name}'s model gave no answer")
