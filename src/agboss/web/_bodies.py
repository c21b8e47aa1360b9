"""The router's request and response bodies: one Pydantic model each, for parsing, for
writing and for the OpenAPI schema alike."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any, Final, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, StrictBool, StrictStr, ValidationError
from starlette.requests import Request

from agboss.dto import (
    ToolCallApprovalAskDto,
    ToolCallApprovalDecisionDto,
    validation_errors,
)
from agboss.enums import ExecutionStatus, PauseAnswerer, StandingScope
from agboss.errors import DtoValidationError
from agboss.http import UnreadableRequestError, nests_deeper, read_body, read_json
from agboss.inputs import MAX_DEPTH
from agboss.pauses import AnswerReceipt
from agboss.records import PauseVotes

__all__ = [
    "AnswerBody",
    "FailedBody",
    "FailedEntryBody",
    "InboxBody",
    "InboxEntryBody",
    "ProblemBody",
    "ReceiptBody",
    "RetriedBody",
    "RetryBody",
    "StandingBody",
    "StandingListBody",
    "fields_of",
    "read_answer",
    "read_model",
]


ModelT = TypeVar("ModelT", bound=BaseModel)


def fields_of(value: Any) -> dict[str, Any]:
    """A dataclass's fields as they are (not copied deep, as `dataclasses.asdict` would):
    a body takes the library's own value objects field for field."""
    return {spec.name: getattr(value, spec.name) for spec in dataclasses.fields(value)}


class AnswerBody(BaseModel):
    """``POST /answers``: which pause — exactly one of its reference and its id — and exactly
    one of a decision and a reply.

    The pause is named in the body, never in the URL, which access logs and proxies record.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    pause_ref: StrictStr | None = None
    """The pause's reference, as the inbox lists it: a signed-in person's answer."""
    pause_id: StrictStr | None = None
    """The pause's id: a channel's side answers a channel pause by the id it was sent."""
    decision: ToolCallApprovalDecisionDto | None = None
    reply: StrictStr | None = None


class ClaimBody(BaseModel):
    """``POST /claims`` and ``POST /claims/release``: which question — exactly one of its
    reference (a signed-in person) and its id (a channel's side, which was sent it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pause_ref: StrictStr | None = None
    pause_id: StrictStr | None = None


class ClaimedBody(BaseModel):
    """A claim made (``200``): who handles the question, and until when."""

    pause_ref: str
    claimed_by: str
    claimed_until: datetime


class ReleasedBody(BaseModel):
    """A claim released (``200``): whether the caller held one that still held."""

    pause_ref: str
    released: bool


class ReassignBody(BaseModel):
    """``POST /reassignments``: which question (as for a claim), where it goes — a role's
    name, a person, or both — and why."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pause_ref: StrictStr | None = None
    pause_id: StrictStr | None = None
    role: StrictStr | None = None
    to: StrictStr | None = None
    reason: StrictStr


class ReassignedBody(BaseModel):
    """A question handed on (``200``): the new question's reference (its id is its channel's
    alone), the one it replaced, where it went, and where the tree stands."""

    pause_ref: str
    previous_ref: str
    role: str
    to: str | None
    claimed_until: datetime | None
    reassigned_by: str
    status: ExecutionStatus


class ReceiptBody(BaseModel):
    """An answer recorded (``202``), or a retried answer's first receipt (``200``,
    ``repeated``)."""

    pause_ref: str
    execution_id: str
    thread_id: str
    decision: ToolCallApprovalDecisionDto
    responder: str
    repeated: bool
    votes: PauseVotes | None = None
    """For a question that takes several approvals: its votes after this one."""
    decided: bool = True
    """Whether the question is decided: ``false`` for a vote that left it waiting for the
    other voters (nothing moved)."""

    @classmethod
    def of(cls, receipt: AnswerReceipt) -> ReceiptBody:
        fields = fields_of(receipt)
        del fields["pause_id"]  # the id stays on the server: the reference names the pause
        return cls(**fields, decided=receipt.decided)


class InboxEntryBody(BaseModel):
    """A waiting pause of the caller's threads, or one that names the caller a voter, masked,
    named by its reference (never its id); one whose ``answered_by`` is ``channel`` is
    answered through its channel, not here."""

    pause_ref: str
    answered_by: PauseAnswerer
    agent: str
    channel: str
    item_index: int | None
    child_execution_id: str | None
    ask: ToolCallApprovalAskDto
    votes: PauseVotes | None = None
    """For a question that takes several approvals: how many it needs, who may vote, and the
    votes so far."""
    execution_id: str
    thread_id: str
    asked_at: datetime
    waited_seconds: float
    accepts_reply: bool
    arguments_schema: dict[str, Any]
    request: Any = None
    """What was asked of the execution (its input, masked): the page shows it once above the
    execution's cards."""
    expires_at: datetime | None = None
    """Its deadline (``expires_after``); ``None``: it waits as long as it takes."""
    expires_in_seconds: float | None = None
    """How long until its deadline, by the server's clock (0 once it passed)."""
    next_step: Literal["remind", "escalate"] | None = None
    """The next step of its role's ladder; ``None`` when none is left."""
    claimed_by: str | None = None
    """Who handles it (a claim that holds); ``None``: nobody claimed it."""
    claimed_until: datetime | None = None
    """Until when that claim holds."""
    handoffs: list[str] = []
    """The roles it may be handed to (``POST /reassignments``), by name."""
    on_behalf_of: str | None = None
    """Whose question the caller answers as their delegate (`App.delegate`): its thread's
    owner; ``None`` for the caller's own, or one that names them a voter."""
    next_step_at: datetime | None = None
    """When that step is due."""
    next_step_in_seconds: float | None = None
    """How long until that step, by the server's clock (0 once it is due)."""


class InboxBody(BaseModel):
    """``GET /pauses``: a page of the caller's inbox, oldest first."""

    entries: list[InboxEntryBody]
    next: str | None


class WaitingOnBody(BaseModel):
    """A question a paused tree waits on, named by its reference (never its id), masked."""

    pause_ref: str
    answered_by: PauseAnswerer
    channel: str
    tool: str
    arguments: dict[str, Any]


class ExecutionEntryBody(BaseModel):
    """An execution tree of the caller's threads, with what it waits on (masked)."""

    execution_id: str
    thread_id: str
    workflow: str
    workflow_version: str
    status: ExecutionStatus
    began_at: datetime
    changed_at: datetime
    request: Any = None
    waiting_on: list[WaitingOnBody]
    """The questions a paused tree waits on."""
    wakes_at: datetime | None = None
    """When a resting tree (a retry's wait) moves by itself."""


class ExecutionsBody(BaseModel):
    """``GET /executions``: a page of the caller's execution trees, newest change first."""

    entries: list[ExecutionEntryBody]
    next: str | None


class FailedEntryBody(BaseModel):
    """A failed execution tree of the caller's threads, with what it failed with (masked)."""

    execution_id: str
    thread_id: str
    workflow: str
    failed_at: datetime
    code: str
    message: str
    hint: str | None


class FailedBody(BaseModel):
    """``GET /executions/failed``: a page of the caller's failed executions, newest first."""

    entries: list[FailedEntryBody]
    next: str | None


class RetryBody(BaseModel):
    """``POST /executions/retry``: a failed tree of the caller's, run again — for one a call
    cut off under ``OnInterrupted.FAIL`` failed, with what the caller checked of that call."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    execution_id: StrictStr
    call_ran: StrictBool | None = None
    """The call cut off took effect (``true``: the model reads ``call_result``), or did not
    (``false``: it runs once more, with the same idempotency key)."""
    call_result: StrictStr | None = None
    """With ``call_ran: true``: what the call did."""


class RetriedBody(BaseModel):
    """A retried tree, as its pass left it."""

    execution_id: str
    status: str
    waiting: list[str]
    """The references of the questions it waits on now (``pause_ref``)."""


class StandingBody(BaseModel):
    """A standing decision (`App.allow`): a tool's calls, or a role's questions, approved
    ahead of time within a scope."""

    decision_id: str
    tool: str | None
    role: str | None
    scope: StandingScope
    thread_id: str | None
    owner_id: str | None
    granted_by: str
    reason: str | None
    granted_at: datetime
    until: datetime | None
    revoked_at: datetime | None
    revoked_by: str | None


class StandingListBody(BaseModel):
    """``GET /standing``: the caller's standing decisions, oldest first."""

    decisions: list[StandingBody]


class DelegationBody(BaseModel):
    """A delegation (`App.delegate`): one person's questions answered by another, within a
    role or a tool, until a date or revoked."""

    delegation_id: str
    principal: str
    delegate: str
    role: str | None
    tool: str | None
    granted_by: str
    reason: str | None
    granted_at: datetime
    until: datetime | None
    revoked_at: datetime | None
    revoked_by: str | None


class DelegationListBody(BaseModel):
    """``GET /delegations``: the caller's delegations — theirs, to them, or granted by them —
    in the order granted."""

    delegations: list[DelegationBody]


class DelegateBody(BaseModel):
    """``POST /delegations``: the signed-in caller hands their questions to ``to``, within a
    role or a tool (their names), until ``until`` (ISO 8601, with its offset)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    to: StrictStr
    role: StrictStr | None = None
    tool: StrictStr | None = None
    until: datetime | None = None
    reason: StrictStr | None = None


class ProblemBody(BaseModel):
    """An error (RFC 9457): ``code`` is the `AgbossError`'s stable code."""

    type: str
    title: str
    status: int
    code: str
    detail: str
    hint: str | None
    errors: list[str] | None = None


async def read_model(request: Request, limit: int, model: type[ModelT], hint: str) -> ModelT:
    """A request's JSON body read as ``model``, its size, shape and text checked as an
    answer's is.

    Raises:
        UnreadableRequestError: Not ``application/json``, not a JSON object, or unreadable.
        RequestTooLargeError: Over ``limit`` bytes.
        DtoValidationError: Not exactly the fields of ``model``.
    """
    media = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media != "application/json":
        raise UnreadableRequestError(f"the body is sent as {media or 'nothing'!r}", hint=hint)
    raw = await read_body(request, limit)
    if nests_deeper(raw, MAX_DEPTH):
        raise UnreadableRequestError(f"the body nests deeper than {MAX_DEPTH} levels", hint=hint)
    value = read_json(raw)
    if not isinstance(value, dict):
        raise UnreadableRequestError("the body is JSON, but not an object", hint=hint)
    try:
        return model.model_validate(value)
    except ValidationError as error:
        raise DtoValidationError(
            "the body is not valid", errors=validation_errors(error), hint=hint
        ) from error


async def read_answer(request: Request, limit: int) -> AnswerBody:
    """The answer a request carries, its size and shape checked.

    Only ``application/json``: a cross-site form cannot send it without the browser asking
    first (a CORS preflight), which keeps a cookie-authenticated page safe from forged posts.

    Raises:
        UnreadableRequestError: Not ``application/json``, not a JSON object, or nested
            deeper than `MAX_DEPTH` levels.
        RequestTooLargeError: Over ``limit`` bytes.
        DtoValidationError: Not exactly the fields of `AnswerBody`.
    """
    body = await read_model(request, limit, AnswerBody, _ANSWER_HINT)
    if (body.pause_ref is None) == (body.pause_id is None):
        raise DtoValidationError(
            "an answer names its pause by exactly one of pause_ref and pause_id",
            hint=_ANSWER_HINT,
        )
    return body


async def read_claim(request: Request, limit: int) -> ClaimBody:
    """The question a claim's request names, its size and shape checked as an answer's.

    Raises:
        UnreadableRequestError: Not ``application/json``, or not a JSON object.
        RequestTooLargeError: Over ``limit`` bytes.
        DtoValidationError: Not exactly one of ``pause_ref`` and ``pause_id``.
    """
    body = await read_model(request, limit, ClaimBody, _CLAIM_HINT)
    if (body.pause_ref is None) == (body.pause_id is None):
        raise DtoValidationError(
            "a claim names its question by exactly one of pause_ref and pause_id",
            hint=_CLAIM_HINT,
        )
    return body


async def read_reassignment(request: Request, limit: int) -> ReassignBody:
    """What a reassignment's request asks, its size and shape checked as a claim's.

    Raises:
        UnreadableRequestError: Not ``application/json``, or not a JSON object.
        RequestTooLargeError: Over ``limit`` bytes.
        DtoValidationError: Not exactly one of ``pause_ref`` and ``pause_id``, or no reason.
    """
    body = await read_model(request, limit, ReassignBody, _REASSIGN_HINT)
    if (body.pause_ref is None) == (body.pause_id is None):
        raise DtoValidationError(
            "a reassignment names its question by exactly one of pause_ref and pause_id",
            hint=_REASSIGN_HINT,
        )
    return body


_REASSIGN_HINT: Final = (
    'send {"pause_ref": "ref_…", "role": "legal-approvers", "to": "bo", "reason": "…"} '
    '(role, to, or both; a channel\'s side: "pause_id" instead of "pause_ref")'
)

_CLAIM_HINT: Final = (
    'send {"pause_ref": "ref_…"} (a channel\'s side: {"pause_id": "…"}, the id it was sent)'
)

_ANSWER_HINT: Final = (
    'send {"pause_ref": "ref_…", "decision": {"approved": true, "reason": "…"}} or '
    '{"pause_ref": "ref_…", "reply": "…"} (a channel\'s side: "pause_id" instead of "pause_ref")'
)
