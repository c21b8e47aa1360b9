"""The framework's own DTOs: what a workflow starts and finishes with, and what an approval is."""

from __future__ import annotations

import functools
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError

from agboss.enums import PauseKind

__all__ = [
    "ToolCallApprovalAskDto",
    "ToolCallApprovalDecisionDto",
    "WorkflowFinishTextDto",
    "WorkflowStartTextDto",
    "is_text_dto",
    "schema_of",
    "validation_errors",
]


class WorkflowStartTextDto(BaseModel):
    """A workflow started with a text: a request in a person's words."""

    model_config = ConfigDict(frozen=True)

    text: str


class WorkflowFinishTextDto(BaseModel):
    """A workflow that finishes with a text answer."""

    model_config = ConfigDict(frozen=True)

    text: str


class ToolCallApprovalAskDto(BaseModel):
    """The question a pause asks: a tool call, with its arguments, waiting for a decision.

    Attributes:
        tool: The tool's name.
        call_id: The model's id of the call.
        arguments: The arguments the model gave, as the tool's input DTO dumps them (for a
            question the tool asked mid-call, the question and its schema).
        kind: What is asked: approve the call, answer the tool's question, or run again a
            call that may have run (`PauseKind`).
        digest: What it asks, digested — the tool, its definition's fingerprint and the
            arguments as asked — keyed by the question's secret id (``None``: asked before
            agboss digested questions). A decision records the digest it answered; the call
            runs only as decided (docs/pauses.md).
    """

    model_config = ConfigDict(frozen=True)

    tool: str
    call_id: str
    arguments: dict[str, Any]
    kind: PauseKind = PauseKind.APPROVAL
    digest: str | None = None


class ToolCallApprovalDecisionDto(BaseModel):
    """The answer to a tool call's approval.

    Attributes:
        approved: Whether the tool may run.
        reason: Why, in the answerer's words; a rejected call's reason is read by the model.
        override_arguments: With ``approved=True`` only: arguments to run the tool with
            instead of the model's, a valid input of the tool.
        digest: The digest of the question it decides (`ToolCallApprovalAskDto.digest`).
            An answerer may give it, whole or as shown (its first 12 characters), to say
            what it saw: an answer to a question that asks otherwise now is refused. Recorded
            by agboss with every answer it reads.
        override_digest: Recorded by agboss (never given): the digest of the call
            ``override_arguments`` make, the one that runs.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    # Strict: a webhook's "yes" or 0 is not a decision (no coercion to a boolean).
    approved: StrictBool
    reason: StrictStr | None = None
    override_arguments: dict[str, Any] | None = Field(default=None)
    digest: StrictStr | None = None
    override_digest: StrictStr | None = None


@functools.cache
def schema_of(dto: type[BaseModel]) -> dict[str, Any]:
    """A DTO's JSON schema, built once per class (shared: do not change it)."""
    return dto.model_json_schema()


def is_text_dto(dto: type[BaseModel]) -> bool:
    """Whether a DTO is a text DTO: its only field is ``text: str``, so plain text answers it."""
    fields = dto.model_fields
    return list(fields) == ["text"] and fields["text"].annotation is str


def validation_errors(error: ValidationError) -> list[str]:
    """A Pydantic validation error as lines a person (or a model) can act on: ``where: what``."""
    return [
        f"{'.'.join(str(part) for part in item['loc']) or '(the whole value)'}: {item['msg']}"
        for item in error.errors(include_url=False)
    ]
