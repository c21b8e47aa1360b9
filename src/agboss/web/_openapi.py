"""The router's OpenAPI 3.1 document, built from the same Pydantic models it parses and
writes with."""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic.json_schema import models_json_schema

from agboss.enums import ExecutionStatus
from agboss.web._bodies import (
    AnswerBody,
    ClaimBody,
    ClaimedBody,
    DelegateBody,
    DelegationBody,
    DelegationListBody,
    ExecutionsBody,
    FailedBody,
    InboxBody,
    ProblemBody,
    ReassignBody,
    ReassignedBody,
    ReceiptBody,
    ReleasedBody,
    RetriedBody,
    RetryBody,
    StandingBody,
    StandingListBody,
)

__all__ = ["openapi_schema"]

_REF = "#/components/schemas/{model}"


def _ref(name: str) -> str:
    return _REF.format(model=name)


def _json(name: str, description: str, media: str = "application/json") -> dict[str, Any]:
    return {"description": description, "content": {media: {"schema": {"$ref": _ref(name)}}}}


_PAGE = (
    {
        "name": "limit",
        "in": "query",
        "schema": {"type": "integer", "minimum": 1, "maximum": 500},
    },
    {"name": "after", "in": "query", "schema": {"type": "string"}},
)
"""A keyset page's parameters: its size, and the cursor the page before gave."""


def _problem(description: str) -> dict[str, Any]:
    return _json("ProblemBody", description, "application/problem+json")


@cache
def _document() -> dict[str, Any]:
    _, schemas = models_json_schema(
        [
            (AnswerBody, "validation"),
            (ClaimBody, "validation"),
            (ClaimedBody, "serialization"),
            (ReleasedBody, "serialization"),
            (ReassignBody, "validation"),
            (DelegateBody, "validation"),
            (DelegationBody, "serialization"),
            (DelegationListBody, "serialization"),
            (ReassignedBody, "serialization"),
            (ReceiptBody, "serialization"),
            (InboxBody, "serialization"),
            (FailedBody, "serialization"),
            (ExecutionsBody, "serialization"),
            (RetryBody, "validation"),
            (RetriedBody, "serialization"),
            (StandingBody, "serialization"),
            (StandingListBody, "serialization"),
            (ProblemBody, "serialization"),
        ],
        ref_template=_REF,
    )
    unauthenticated = _problem("No credential the application recognises (web.not-authenticated)")
    store = _problem("The store is busy or unreachable (store.*); retry")
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "agboss pauses",
            "version": "1",
            "description": "Answer a pause (named in the body, never in the URL), list a "
            "signed-in owner's inbox, "
            "their failed executions and their standing decisions, and revoke one. "
            "Who calls comes from the application's authenticator, never from the body.",
        },
        "paths": {
            "/pauses": {
                "get": {
                    "operationId": "listPauses",
                    "summary": "The caller's waiting pauses, oldest first (masked)",
                    "parameters": [
                        {"name": "channel", "in": "query", "schema": {"type": "string"}},
                        {
                            "name": "asked_before",
                            "in": "query",
                            "schema": {"type": "string", "format": "date-time"},
                        },
                        {
                            "name": "expiring_before",
                            "in": "query",
                            "schema": {"type": "string", "format": "date-time"},
                        },
                        *_PAGE,
                    ],
                    "responses": {
                        "200": _json("InboxBody", "A page of the inbox; next is the cursor"),
                        "401": unauthenticated,
                        "403": _problem("A channel's side has no inbox"),
                        "422": _problem("A bad filter (dto.invalid)"),
                        "503": store,
                    },
                }
            },
            "/executions": {
                "get": {
                    "operationId": "listExecutions",
                    "summary": "The caller's execution trees, newest change first, with what "
                    "each waits on (masked)",
                    "parameters": [
                        {
                            "name": "status",
                            "in": "query",
                            "schema": {
                                "type": "string",
                                "enum": [status.value for status in ExecutionStatus],
                            },
                        },
                        {"name": "workflow", "in": "query", "schema": {"type": "string"}},
                        {
                            "name": "since",
                            "in": "query",
                            "schema": {"type": "string", "format": "date-time"},
                        },
                        *_PAGE,
                    ],
                    "responses": {
                        "200": _json("ExecutionsBody", "A page of executions; next: cursor"),
                        "401": unauthenticated,
                        "403": _problem("A channel's side has no executions of its own"),
                        "422": _problem("A bad filter, limit or cursor (dto.invalid)"),
                        "503": store,
                    },
                }
            },
            "/executions/failed": {
                "get": {
                    "operationId": "listFailedExecutions",
                    "summary": "The caller's failed execution trees, newest first (masked)",
                    "parameters": list(_PAGE),
                    "responses": {
                        "200": _json("FailedBody", "A page of failed executions; next: cursor"),
                        "401": unauthenticated,
                        "403": _problem("A channel's side has no executions of its own"),
                        "422": _problem("A bad limit or cursor (dto.invalid)"),
                        "503": store,
                    },
                }
            },
            "/executions/retry": {
                "post": {
                    "operationId": "retryExecution",
                    "summary": "Run one of the caller's failed execution trees again; for one a "
                    "call cut off mid-call failed, say whether it ran (call_ran, call_result)",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": _ref("RetryBody")}}},
                    },
                    "responses": {
                        "200": _json("RetriedBody", "Retried: where the tree stands now"),
                        "400": _problem("Not a JSON object (web.unreadable)"),
                        "401": unauthenticated,
                        "403": _problem("A channel's side has no executions of its own"),
                        "404": _problem("None of the caller's has this id (run.unknown)"),
                        "409": _problem(
                            "It did not fail (run.not-failed), or failed on what its journal "
                            "decided (run.failure-final; a call cut off: say call_ran)"
                        ),
                        "422": _problem("An invalid body (dto.invalid)"),
                        "503": store,
                    },
                }
            },
            "/standing": {
                "get": {
                    "operationId": "listStandingDecisions",
                    "summary": "The caller's standing decisions, oldest first: granted by "
                    "them, or covering only their threads",
                    "parameters": [
                        {"name": "revoked", "in": "query", "schema": {"type": "boolean"}}
                    ],
                    "responses": {
                        "200": _json("StandingListBody", "The decisions"),
                        "401": unauthenticated,
                        "403": _problem("A channel's side has no standing decisions"),
                        "503": store,
                    },
                }
            },
            "/standing/{decision_id}": {
                "delete": {
                    "operationId": "revokeStandingDecision",
                    "summary": "Revoke one of the caller's standing decisions (a repeat "
                    "returns the first revocation)",
                    "parameters": [
                        {
                            "name": "decision_id",
                            "in": "path",
                            "required": True,
                            "schema": {"type": "string"},
                        }
                    ],
                    "responses": {
                        "200": _json("StandingBody", "Revoked"),
                        "401": unauthenticated,
                        "403": _problem("A channel's side has no standing decisions"),
                        "404": _problem("None of the caller's has this id (standing.unknown)"),
                        "503": store,
                    },
                }
            },
            "/delegations": {
                "get": {
                    "operationId": "listDelegations",
                    "summary": "The caller's delegations — theirs, to them, or granted by them "
                    "(?revoked=true: with the revoked)",
                    "responses": {
                        "200": _json("DelegationListBody", "In the order granted"),
                        "401": unauthenticated,
                        "403": _problem("A channel's side has no delegations"),
                        "503": store,
                    },
                },
                "post": {
                    "operationId": "delegate",
                    "summary": "Hand the caller's questions to another person, within a role or "
                    "a tool, until a date or revoked",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": _ref("DelegateBody")}}},
                    },
                    "responses": {
                        "201": _json("DelegationBody", "Granted"),
                        "400": _problem("Not a JSON object (web.unreadable)"),
                        "401": unauthenticated,
                        "403": _problem("A channel's side has no delegations"),
                        "422": _problem("To themselves, an unknown role or tool (dto.invalid)"),
                        "503": store,
                    },
                },
            },
            "/delegations/{delegation_id}": {
                "delete": {
                    "operationId": "revokeDelegation",
                    "summary": "Revoke one of the caller's delegations (a repeat returns the "
                    "first revocation)",
                    "parameters": [
                        {
                            "name": "delegation_id",
                            "in": "path",
                            "required": True,
                            "schema": {"type": "string"},
                        }
                    ],
                    "responses": {
                        "200": _json("DelegationBody", "Revoked"),
                        "401": unauthenticated,
                        "403": _problem("A channel's side has no delegations"),
                        "404": _problem("None of the caller's has this id (delegation.unknown)"),
                        "503": store,
                    },
                }
            },
            "/claims": {
                "post": {
                    "operationId": "claimPause",
                    "summary": "Claim a waiting question, named in the body (its pause_ref, or a "
                    "channel's side: its pause_id): the caller handles it, others see who does",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": _ref("ClaimBody")}}},
                    },
                    "responses": {
                        "200": _json("ClaimedBody", "Claimed (or renewed): until when"),
                        "400": _problem("Not a JSON object (web.unreadable)"),
                        "401": unauthenticated,
                        "403": _problem("Not who may answer this question"),
                        "404": _problem(
                            "No such question for this tenant, or none of the caller's"
                        ),
                        "409": _problem(
                            "Someone else handles it (pause.claimed), or it no longer waits "
                            "(run.not-paused)"
                        ),
                        "422": _problem("A question several approve is not claimed (dto.invalid)"),
                        "503": store,
                    },
                }
            },
            "/claims/release": {
                "post": {
                    "operationId": "releaseClaim",
                    "summary": "End the caller's claim on a waiting question",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": _ref("ClaimBody")}}},
                    },
                    "responses": {
                        "200": _json("ReleasedBody", "Whether the caller held a claim on it"),
                        "400": _problem("Not a JSON object (web.unreadable)"),
                        "401": unauthenticated,
                        "403": _problem("Not who may answer this question"),
                        "404": _problem(
                            "No such question for this tenant, or none of the caller's"
                        ),
                        "409": _problem("It no longer waits (run.not-paused)"),
                        "503": store,
                    },
                }
            },
            "/reassignments": {
                "post": {
                    "operationId": "reassignPause",
                    "summary": "Hand a waiting question (named as for a claim) to another role, "
                    "a person, or both, saying why: it is asked again under a new id",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": _ref("ReassignBody")}}},
                    },
                    "responses": {
                        "200": _json("ReassignedBody", "Handed on: the new question's reference"),
                        "400": _problem("Not a JSON object (web.unreadable)"),
                        "401": unauthenticated,
                        "403": _problem("Not who may answer this question"),
                        "404": _problem(
                            "No such question for this tenant, or none of the caller's"
                        ),
                        "409": _problem(
                            "Someone else handles it (pause.claimed), or it no longer waits "
                            "(run.not-paused)"
                        ),
                        "422": _problem(
                            "It cannot go there (pause.reassign-target), or the body is "
                            "invalid (dto.invalid)"
                        ),
                        "503": store,
                    },
                }
            },
            "/answers": {
                "post": {
                    "operationId": "answerPause",
                    "summary": "Answer a pause, named in the body (its pause_ref, or a channel's "
                    "side: its pause_id): recorded at once, the tree moved after",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": _ref("AnswerBody")}}},
                    },
                    "responses": {
                        "202": _json("ReceiptBody", "Recorded; the tree moves in the background"),
                        "200": _json("ReceiptBody", "A retried answer: the first one's receipt"),
                        "400": _problem("Not a JSON object (web.unreadable)"),
                        "401": unauthenticated,
                        "403": _problem("Not who may answer this pause"),
                        "404": _problem(
                            "No such pause for this tenant, or none of the caller's (pause.unknown)"
                        ),
                        "409": _problem(
                            "The pause no longer waits (run.not-paused), or someone else "
                            "handles it (pause.claimed)"
                        ),
                        "413": _problem("The body is over the limit (web.too-large)"),
                        "422": _problem("An invalid decision, or a reply that cannot be read"),
                        "429": _problem("A budget of the tree is spent (budget.exceeded)"),
                        "502": _problem("The reply interpreter's model failed"),
                        "503": store,
                    },
                }
            },
        },
        "components": {"schemas": schemas["$defs"]},
    }


def openapi_schema(root_path: str = "") -> dict[str, Any]:
    """The OpenAPI document, its server at ``root_path`` (where the router is mounted)."""
    return {**_document(), "servers": [{"url": root_path or "/"}]}
