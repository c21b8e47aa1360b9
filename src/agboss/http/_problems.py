"""Errors as HTTP: each `AgbossError` becomes a status and a JSON problem body (RFC 9457).

The body carries the error's stable ``code``, its sentence and its hint; nothing else of the
error (no cause, no traceback) leaves the process. An error that is not an `AgbossError` is
logged and answered ``500`` with ``web.internal``.
"""

from __future__ import annotations

import logging
from typing import Final

from starlette.responses import JSONResponse

from agboss.errors import (
    AgbossError,
    AlreadyVotedError,
    BudgetExceededError,
    ConfigurationError,
    DtoValidationError,
    FinalFailureError,
    LeaseBusyError,
    ModelProviderError,
    ModelUnservedError,
    NotFailedError,
    NotPausedError,
    PauseAnswererError,
    PauseClaimedError,
    PiiRefusedError,
    QuestionChangedError,
    ReassignTargetError,
    ReplyInterpreterMissingError,
    StoreError,
    ThreadOwnerError,
    UninterpretableReplyError,
    UnknownDelegationError,
    UnknownExecutionError,
    UnknownPauseError,
    UnknownStandingDecisionError,
    UnknownThreadError,
)

__all__ = [
    "AppNotOpenError",
    "MethodNotAllowedError",
    "NotAuthenticatedError",
    "NotFoundError",
    "RequestTooLargeError",
    "UnreadableRequestError",
    "log_failure",
    "problem",
    "status_of",
]

log = logging.getLogger("agboss.web")

PROBLEM_TYPE: Final = "application/problem+json"


class NotAuthenticatedError(AgbossError):
    """The application's authenticator did not recognise the caller."""

    code = "web.not-authenticated"
    default_message = "the request carries no credential the application recognises"
    default_hint = "sign in, or send the credential the application's authenticator reads"


class AppNotOpenError(AgbossError):
    """The router was built before its application, which is not open (yet, or any more)."""

    code = "web.app-not-open"
    default_message = "the application is not open: it starts, or it was closed"
    default_hint = "retry in a moment; the host opens the application in its lifespan"


class RequestTooLargeError(AgbossError):
    """The request's body is over the router's limit."""

    code = "web.too-large"
    default_message = "the request's body is over the size limit"
    default_hint = "send a shorter reply or fewer override arguments"


class NotFoundError(AgbossError):
    """No route of the router has this path (a trailing slash too many, a typo)."""

    code = "web.not-found"
    default_message = "the router has no such route"
    default_hint = (
        "GET /pauses, POST /answers (the pause named in the body), GET /executions/failed, "
        "POST /executions/retry, GET /standing, DELETE /standing/{decision_id}, "
        "GET /openapi.json, GET / (the page)"
    )


class MethodNotAllowedError(AgbossError):
    """A route of the router's, asked with a method it does not take (``405``)."""

    code = "web.method-not-allowed"
    default_message = "the route does not take this method"
    default_hint = "see GET /openapi.json for each route's method"


class UnreadableRequestError(AgbossError):
    """The request's body is not JSON, or not sent as ``application/json``."""

    code = "web.unreadable"
    default_message = "the request's body is not a JSON object sent as application/json"
    default_hint = (
        'send Content-Type: application/json and {"decision": {"approved": true}} '
        'or {"reply": "the words"}'
    )


# The first matching class wins: subclasses before their bases.
_STATUSES: Final[tuple[tuple[type[AgbossError], int], ...]] = (
    (NotAuthenticatedError, 401),
    (NotFoundError, 404),
    (MethodNotAllowedError, 405),
    (AppNotOpenError, 503),
    (UnknownPauseError, 404),
    (UnknownExecutionError, 404),
    (UnknownThreadError, 404),
    (UnknownStandingDecisionError, 404),
    (UnknownDelegationError, 404),
    (NotPausedError, 409),
    (QuestionChangedError, 409),
    (PauseClaimedError, 409),
    (NotFailedError, 409),
    (FinalFailureError, 409),
    (AlreadyVotedError, 409),
    (RequestTooLargeError, 413),
    (UnreadableRequestError, 400),
    (DtoValidationError, 422),
    (ReassignTargetError, 422),
    (UninterpretableReplyError, 422),
    (ReplyInterpreterMissingError, 422),
    (PiiRefusedError, 422),
    (PauseAnswererError, 403),
    (ThreadOwnerError, 403),
    (BudgetExceededError, 429),
    (ModelProviderError, 502),
    (ModelUnservedError, 502),
    (StoreError, 503),
    (LeaseBusyError, 503),
    (ConfigurationError, 500),  # the server's own wiring (an authenticator's wrong return)
)


def status_of(error: AgbossError) -> int:
    """The HTTP status an error is answered with (``400`` for any other `AgbossError`)."""
    for kind, status in _STATUSES:
        if isinstance(error, kind):
            return status
    return 400


def log_failure(error: BaseException) -> None:
    """Logs an error that is the server's, not the caller's: any that is not an `AgbossError`,
    and a `ConfigurationError` (the server's own wiring)."""
    if not isinstance(error, AgbossError):
        log.error("agboss.web: an unexpected error while serving a request", exc_info=error)
    elif status_of(error) == 500:
        log.error("agboss.web: %s", error, exc_info=error)


def problem(error: BaseException) -> JSONResponse:
    """The response for an error raised while serving a request."""
    log_failure(error)
    if not isinstance(error, AgbossError):
        return JSONResponse(
            {
                "type": "about:blank",
                "title": "web.internal",
                "status": 500,
                "code": "web.internal",
                "detail": "the server failed while serving the request",
                "hint": "retry; the server's log has the cause",
            },
            status_code=500,
            media_type=PROBLEM_TYPE,
        )
    status = status_of(error)
    headers = {"Retry-After": "1"} if status == 503 else None
    body: dict[str, object] = {
        "type": "about:blank",
        "title": error.code,
        "status": status,
        "code": error.code,
        "detail": error.message,
        "hint": error.hint,
    }
    if isinstance(error, DtoValidationError) and error.errors:
        body["errors"] = error.errors
    return JSONResponse(
        body,
        status_code=status,
        media_type=PROBLEM_TYPE,
        headers=headers,
    )
