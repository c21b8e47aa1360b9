"""Checking a decision before it is recorded: the DTO, and ``override_arguments``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from agboss.dto import ToolCallApprovalDecisionDto, validation_errors
from agboss.enums import PauseKind
from agboss.errors import DtoValidationError, QuestionChangedError
from agboss.inputs import InputLimits, check_text, check_values, has_non_finite
from agboss.records import SHOWN_DIGEST, PauseRecord, call_digest, shown_digest

__all__ = ["bound_decision", "decided_digest", "not_as_decided", "validate_decision"]

DIGEST_LENGTH = 64
"""A digest's length, in hexadecimal characters (`agboss.records.call_digest`)."""


def validate_decision(
    decision: object,
    tool: str,
    tool_input: type[BaseModel],
    limits: InputLimits,
    kind: PauseKind = PauseKind.APPROVAL,
) -> ToolCallApprovalDecisionDto:
    """A decision as a valid `ToolCallApprovalDecisionDto` for a call of ``tool``.

    Strict: ``approved`` is a boolean (``"yes"`` and ``0`` are refused, not coerced),
    ``override_arguments`` names only fields of the tool's input and holds finite numbers; the
    decision returned carries the arguments as the tool's input validated them (what the
    tool gets is what the audit trail records).

    Args:
        decision: A `ToolCallApprovalDecisionDto` or a mapping of its fields (a webhook's body).
        tool: The tool whose call it decides.
        tool_input: The tool's input DTO, which ``override_arguments`` must be.
        limits: The application's input limits.
        kind: What the pause asks: a call that may have run (`PauseKind.INTERRUPTED`) runs
            again as it was, so its decision takes no ``override_arguments``.

    Raises:
        DtoValidationError: It is not a decision, or ``override_arguments`` comes without
            ``approved=True``, to a question whose call runs again as it was, or is not a
            valid input of the tool.
    """
    if isinstance(decision, ToolCallApprovalDecisionDto):
        raw: Any = {
            "approved": decision.approved,
            "reason": decision.reason,
            "override_arguments": decision.override_arguments,
            "digest": decision.digest,
            "override_digest": decision.override_digest,
        }
    elif isinstance(decision, Mapping):
        raw = dict(decision)
    else:
        raise DtoValidationError(
            f"the decision is a {type(decision).__name__}, not a ToolCallApprovalDecisionDto "
            "or a mapping of its fields",
            hint="pass decision=ToolCallApprovalDecisionDto(approved=True) or {'approved': True}",
        )
    try:
        valid = ToolCallApprovalDecisionDto.model_validate(raw)
    except ValidationError as error:
        raise DtoValidationError(
            "the decision is not a valid ToolCallApprovalDecisionDto",
            errors=validation_errors(error),
            hint="pass approved (true or false, not a string or a number), and optionally "
            "reason (text) and override_arguments (the tool's input)",
        ) from error
    if valid.override_digest is not None:
        raise DtoValidationError(
            "override_digest is what agboss records of the arguments that will run: an answer "
            "does not give it",
            hint="drop override_digest; give digest= to say which question you decide",
        )
    if valid.digest is not None:
        check_text(valid.digest, "digest", DIGEST_LENGTH, "digest")
    if valid.reason is not None:
        check_text(valid.reason, "reason", limits.reason_length, "reason_length")
    if valid.override_arguments is None:
        if valid.approved and getattr(tool_input, "answer_required", False):
            # An answer to a question a tool asked: the approval is the answer, here empty.
            _check_answer(tool, tool_input)
        return valid
    check_values(
        valid.override_arguments, "override_arguments", limits.override_bytes, "override_bytes"
    )
    if kind is PauseKind.INTERRUPTED:
        raise DtoValidationError(
            f"{tool}'s call may have run already: it runs again as it was, or not at all, so "
            "the answer takes no override_arguments",
            hint="answer approved=True to run it again with the same arguments and key, or "
            "approved=False to leave it (the model reads that it may have run)",
        )
    if not valid.approved:
        raise DtoValidationError(
            "override_arguments is only allowed with approved=True",
            hint="drop override_arguments from a rejection, or approve the call",
        )
    known = {
        name
        for field_name, field in tool_input.model_fields.items()
        for name in (field_name, field.alias)
        if name is not None
    }
    unknown = sorted(set(valid.override_arguments) - known)
    # An input that takes any field (an MCP tool's) is checked whole, by its own schema.
    if unknown and tool_input.model_config.get("extra") != "allow":
        raise DtoValidationError(
            f"override_arguments has fields {tool_input.__name__} does not have: "
            f"{', '.join(unknown)}",
            hint=f"give only {tool}'s input fields: {', '.join(sorted(tool_input.model_fields))}",
        )
    try:
        arguments = tool_input.model_validate(valid.override_arguments)
        checked = arguments.model_dump(mode="json", by_alias=True)
        # What is recorded must give the tool the same input when the step replays ("nan"
        # read as a float would be stored as null): its size was checked on the way in.
        if has_non_finite(checked) or tool_input.model_validate(checked) != arguments:
            raise ValueError("the arguments change when stored")
    except (ValidationError, ValueError) as error:
        raise DtoValidationError(
            f"override_arguments is not a valid input of {tool} ({tool_input.__name__})",
            errors=validation_errors(error) if isinstance(error, ValidationError) else [],
            hint=f"give every field {tool_input.__name__} requires, with valid values",
        ) from error
    return valid.model_copy(update={"override_arguments": checked})


def _check_answer(tool: str, answer: type[BaseModel]) -> None:
    try:
        answer.model_validate({})
    except ValidationError as error:
        raise DtoValidationError(
            f"{tool} asked a question: approving it needs override_arguments with the answer",
            errors=validation_errors(error),
            hint="pass override_arguments valid for the question's requested_schema, or reject "
            "the question (approved=False) to decline it",
        ) from error


def bound_decision(
    decision: ToolCallApprovalDecisionDto,
    pause: PauseRecord,
    tool_input: type[BaseModel],
    definition: str | None,
) -> ToolCallApprovalDecisionDto:
    """A valid decision bound to the question it decides: the question's digest recorded with
    it, and — with ``override_arguments`` — the digest of the call they make (``definition``:
    the tool's part of this build's fingerprint).

    Raises:
        QuestionChangedError: The decision gives a digest the question does not have now.
    """
    asked = pause.ask.digest
    given = decision.digest
    if given is not None and not (
        asked is not None
        and (given == asked or (len(given) >= SHOWN_DIGEST and asked.startswith(given)))
    ):
        raise QuestionChangedError(
            f"the answer decides the question whose digest is {given}, and the pause asks "
            f"{shown_digest(asked) or 'a question asked before digests'} now"
        )
    override = None
    if decision.override_arguments is not None and asked is not None:
        runs = tool_input.model_validate(decision.override_arguments).model_dump(mode="json")
        override = call_digest(pause.pause_id, pause.ask.tool, definition, runs)
    return decision.model_copy(update={"digest": asked, "override_digest": override})


def decided_digest(decision: ToolCallApprovalDecisionDto, pause: PauseRecord) -> str | None:
    """The digest of the call a decision lets run: its override's, else the question's as
    it recorded it, else the question's (a decision no person gave: a standing one, a
    deadline's); ``None`` for a question asked before digests."""
    if decision.override_arguments is not None:
        return decision.override_digest
    return decision.digest or pause.ask.digest


def not_as_decided(
    decision: ToolCallApprovalDecisionDto,
    pause: PauseRecord,
    tool: str,
    definition: str | None,
    arguments: BaseModel,
) -> str | None:
    """Why the call about to run is not the call ``decision`` let run — another tool, another
    definition of it, or other arguments than its digest covers — or ``None`` when it is (or
    when the question was asked before digests).

    Checked at the moment the call runs: a row of the store changed since the decision (its
    question, its journal) does not run a call nobody decided.
    """
    decided = decided_digest(decision, pause)
    if decided is None or pause.ask.kind is not PauseKind.APPROVAL:
        return None
    runs = call_digest(pause.pause_id, tool, definition, arguments.model_dump(mode="json"))
    if runs == decided:
        return None
    return (
        f"the call of {tool} about to run is not the call that was decided (its digest is "
        f"{shown_digest(runs)}, the decision's {shown_digest(decided)}): it does not run"
    )
