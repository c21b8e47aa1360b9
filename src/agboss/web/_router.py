"""The webhook router: answer a pause over HTTP — named in the body, never in the URL — and list
a signed-in owner's inbox."""

from __future__ import annotations

import html
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, TypeAlias, TypedDict

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route, Router
from starlette.types import Receive, Scope, Send

from agboss.app import App
from agboss.context import DEFAULT_TENANT_ID
from agboss.errors import (
    AgbossError,
    ConfigurationError,
    DtoValidationError,
    PauseAnswererError,
    ThreadOwnerError,
    UnknownExecutionError,
    UnknownPauseError,
)
from agboss.http import (
    MethodNotAllowedError,
    NotAuthenticatedError,
    NotFoundError,
    app_function,
    log_failure,
    opened_app,
    problem,
    status_of,
)
from agboss.pauses import ExecutionSummary, InboxEntry
from agboss.records import Delegation, StandingDecision, pause_ref
from agboss.web._bodies import (
    AnswerBody,
    ClaimBody,
    ClaimedBody,
    DelegateBody,
    DelegationBody,
    DelegationListBody,
    ExecutionEntryBody,
    ExecutionsBody,
    FailedBody,
    FailedEntryBody,
    InboxBody,
    InboxEntryBody,
    ReassignBody,
    ReassignedBody,
    ReceiptBody,
    ReleasedBody,
    RetriedBody,
    RetryBody,
    StandingBody,
    StandingListBody,
    WaitingOnBody,
    fields_of,
    read_answer,
    read_claim,
    read_model,
    read_reassignment,
)
from agboss.web._openapi import openapi_schema
from agboss.web._page import PAGE_HEADERS, page, static

__all__ = [
    "Authenticator",
    "Caller",
    "mount",
    "pause_router",
]

DEFAULT_MAX_BODY: Final = 64 * 1024
DEFAULT_POLL_MS: Final = 2000
_METHODS: Final = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


@dataclass(frozen=True, slots=True)
class Caller:
    """Who calls, as the application's authenticator established it — never read from the
    request's body or query.

    Exactly one of ``owner_id`` and ``answered_by``.

    Attributes:
        owner_id: A signed-in person: they answer the pauses of their own threads
            (`PauseAnswerer.THREAD_OWNER`) and see their inbox.
        answered_by: A channel's side (a Slack or mail integration): who answered there, for
            the `PauseAnswerer.CHANNEL` pauses whose secret id that channel was sent.
        tenant_id: The caller's tenant; the default tenant when ``None``.
    """

    owner_id: str | None = None
    answered_by: str | None = None
    tenant_id: str | None = None

    def __post_init__(self) -> None:
        if (self.owner_id is None) == (self.answered_by is None):
            raise ConfigurationError(
                "a Caller is exactly one of owner_id= and answered_by=",
                hint="Caller(owner_id=user.id) for a signed-in person, "
                "Caller(answered_by=slack_user) for a channel's side",
            )


class _Answerer(TypedDict):
    """Who answers, as every answerer's door of `App` takes it."""

    tenant_id: str | None
    owner_id: str | None
    answered_by: str | None


def _answerer(caller: Caller) -> _Answerer:
    """The caller as an answerer's credentials (`App.answer`, `claim`, `reassign`…)."""
    return _Answerer(
        tenant_id=caller.tenant_id, owner_id=caller.owner_id, answered_by=caller.answered_by
    )


Authenticator: TypeAlias = Callable[[Request], "Awaitable[Caller | None] | Caller | None"]
"""Reads the caller from a request (a session cookie, a bearer token, a signed webhook);
``None`` when it carries no credential it recognises (answered ``401``)."""


async def authenticated(authenticate: Authenticator, request: Request) -> Caller | None:
    """Who calls, as the application's authenticator reads them from ``request`` (awaited when
    it is a coroutine function): what every door of agboss asks first.

    Raises:
        ConfigurationError: It returned something else than a `Caller` or ``None``.
    """
    found: Any = authenticate(request)
    if inspect.isawaitable(found):
        found = await found
    if found is not None and not isinstance(found, Caller):
        raise ConfigurationError(
            f"the authenticator returned {type(found).__name__}, not a Caller or None",
            hint="return agboss.web.Caller(owner_id=…) or Caller(answered_by=…)",
        )
    return found


@dataclass(frozen=True, slots=True)
class _Routes:
    app_of: Callable[[], App | None]
    authenticate: Authenticator
    max_body: int
    poll_ms: int

    def opened(self) -> App:
        """The application, as the router's host holds it now (read once per request)."""
        return opened_app(self.app_of, "pause_router")

    async def caller(self, request: Request) -> Caller:
        found = await authenticated(self.authenticate, request)
        if found is None:
            raise NotAuthenticatedError()
        return found

    async def answer(self, request: Request) -> Response:
        try:
            caller = await self.caller(request)
            body: AnswerBody = await read_answer(request, self.max_body)
            app = self.opened()
            receipt = await app.answer(
                await _pause_id(app, caller, body),
                decision=body.decision,
                reply=body.reply,
                **_answerer(caller),
            )
        except Exception as error:  # every error becomes a problem body (see problems.py)
            return _answerers_problem(error)
        return JSONResponse(
            ReceiptBody.of(receipt).model_dump(mode="json"),
            status_code=200 if receipt.repeated else 202,
        )

    async def claim(self, request: Request) -> Response:
        """``POST /claims``: the caller claims a waiting question."""
        try:
            caller = await self.caller(request)
            body = await read_claim(request, self.max_body)
            app = self.opened()
            made = await app.claim(await _pause_id(app, caller, body), **_answerer(caller))
        except Exception as error:  # every error becomes a problem body (see problems.py)
            return _answerers_problem(error)
        return JSONResponse(ClaimedBody(**fields_of(made)).model_dump(mode="json"))

    async def release(self, request: Request) -> Response:
        """``POST /claims/release``: the caller's claim on a waiting question ends."""
        try:
            caller = await self.caller(request)
            body = await read_claim(request, self.max_body)
            app = self.opened()
            pause_id = await _pause_id(app, caller, body)
            released = await app.release(pause_id, **_answerer(caller))
        except Exception as error:  # every error becomes a problem body (see problems.py)
            return _answerers_problem(error)
        shown = ReleasedBody(pause_ref=pause_ref(pause_id), released=released)
        return JSONResponse(shown.model_dump(mode="json"))

    async def reassign(self, request: Request) -> Response:
        """``POST /reassignments``: the caller hands a waiting question to another role or
        person; the answer names the new question by its reference alone."""
        try:
            caller = await self.caller(request)
            body = await read_reassignment(request, self.max_body)
            app = self.opened()
            made = await app.reassign(
                await _pause_id(app, caller, body),
                reason=body.reason,
                role=body.role,
                to=body.to,
                **_answerer(caller),
            )
        except Exception as error:  # every error becomes a problem body (see problems.py)
            return _answerers_problem(error)
        return JSONResponse(ReassignedBody(**fields_of(made)).model_dump(mode="json"))

    async def inbox(self, request: Request) -> Response:
        try:
            caller = await self.caller(request)
            owner_id = _person(caller, "the inbox's pauses")
            query = request.query_params
            app = self.opened()
            page = await app.pending(
                tenant_id=caller.tenant_id,
                owner_id=owner_id,
                voter=owner_id,  # and the questions on others' threads that name them a voter
                channel=query.get("channel"),
                asked_before=_moment(query.get("asked_before"), "asked_before"),
                expiring_before=_moment(query.get("expiring_before"), "expiring_before"),
                limit=_whole(query.get("limit"), 50),
                after=query.get("after"),
            )
            now = app.clock.now()
            body = InboxBody(
                entries=[_entry(app, entry, now, owner_id) for entry in page.entries],
                next=page.next,
            )
        except Exception as error:  # every error becomes a problem body (see problems.py)
            return problem(error)
        return JSONResponse(body.model_dump(mode="json"))

    async def executions(self, request: Request) -> Response:
        try:
            caller = await self.caller(request)
            owner_id = _person(caller, "executions")
            query = request.query_params
            page = await self.opened().executions(
                status=query.get("status"),
                workflow=query.get("workflow"),
                since=_moment(query.get("since"), "since"),
                tenant_id=caller.tenant_id,
                owner_id=owner_id,
                limit=_whole(query.get("limit"), 50),
                after=query.get("after"),
            )
            body = ExecutionsBody(
                entries=[_execution(entry) for entry in page.entries], next=page.next
            )
        except Exception as error:  # every error becomes a problem body (see problems.py)
            return problem(error)
        return JSONResponse(body.model_dump(mode="json"))

    async def failed(self, request: Request) -> Response:
        try:
            caller = await self.caller(request)
            owner_id = _person(caller, "failed executions")
            query = request.query_params
            page = await self.opened().failed(
                tenant_id=caller.tenant_id,
                owner_id=owner_id,
                limit=_whole(query.get("limit"), 50),
                after=query.get("after"),
            )
            body = FailedBody(
                # The owner and the error's class stay on the server's side of the body.
                entries=[FailedEntryBody(**fields_of(entry)) for entry in page.entries],
                next=page.next,
            )
        except Exception as error:  # every error becomes a problem body (see problems.py)
            return problem(error)
        return JSONResponse(body.model_dump(mode="json"))

    async def retry(self, request: Request) -> Response:
        try:
            caller = await self.caller(request)
            owner_id = _person(caller, "failed executions")
            body = await read_model(request, self.max_body, RetryBody, _RETRY_HINT)
            app = self.opened()
            tenant = caller.tenant_id or DEFAULT_TENANT_ID
            row = await app.store.executions.find(tenant, body.execution_id)
            if row is None or row.owner_id != owner_id:  # "not yours" says "not there"
                raise UnknownExecutionError(
                    f"no execution {body.execution_id} of yours is known",
                    hint="retry an execution GET /executions/failed lists",
                )
            output = await app.retry(
                body.execution_id,
                tenant_id=caller.tenant_id,
                retried_by=owner_id,
                call_ran=body.call_ran,
                call_result=body.call_result,
            )
            retried = RetriedBody(
                execution_id=output.execution_id,
                status=output.status.value,
                waiting=[pause.pause_ref for pause in output.pending],
            )
        except Exception as error:  # every error becomes a problem body (see problems.py)
            return problem(error)
        return JSONResponse(retried.model_dump(mode="json"))

    async def standing(self, request: Request) -> Response:
        try:
            caller = await self.caller(request)
            owner_id = _person(caller, "standing decisions")
            decisions = await self.opened().standing(
                tenant_id=caller.tenant_id,
                owner_id=owner_id,
                revoked=request.query_params.get("revoked") == "true",
            )
            body = StandingListBody(decisions=[_standing(d) for d in decisions])
        except Exception as error:  # every error becomes a problem body (see problems.py)
            return problem(error)
        return JSONResponse(body.model_dump(mode="json"))

    async def revoke(self, request: Request) -> Response:
        try:
            caller = await self.caller(request)
            owner_id = _person(caller, "standing decisions")
            revoked = await self.opened().revoke(
                request.path_params["decision_id"],
                revoked_by=owner_id,
                tenant_id=caller.tenant_id,
                owner_id=owner_id,
            )
        except Exception as error:  # every error becomes a problem body (see problems.py)
            return problem(error)
        return JSONResponse(_standing(revoked).model_dump(mode="json"))

    async def delegations(self, request: Request) -> Response:
        """``GET /delegations``: the caller's delegations (``?revoked=true``: with the
        revoked)."""
        try:
            caller = await self.caller(request)
            person = _person(caller, "delegations")
            found = await self.opened().delegations(
                tenant_id=caller.tenant_id,
                person=person,
                revoked=request.query_params.get("revoked") == "true",
            )
            body = DelegationListBody(delegations=[_delegation(each) for each in found])
        except Exception as error:  # every error becomes a problem body (see problems.py)
            return problem(error)
        return JSONResponse(body.model_dump(mode="json"))

    async def delegate(self, request: Request) -> Response:
        """``POST /delegations``: the caller hands their own questions to another person."""
        try:
            caller = await self.caller(request)
            person = _person(caller, "delegations")
            body = await read_model(request, self.max_body, DelegateBody, _DELEGATE_HINT)
            made = await self.opened().delegate(
                person,
                to=body.to,
                granted_by=person,
                tenant_id=caller.tenant_id,
                role=body.role,
                tool=body.tool,
                until=body.until,
                reason=body.reason,
            )
        except Exception as error:  # every error becomes a problem body (see problems.py)
            return problem(error)
        return JSONResponse(_delegation(made).model_dump(mode="json"), status_code=201)

    async def revoke_delegation(self, request: Request) -> Response:
        """``DELETE /delegations/{delegation_id}``: one of the caller's delegations revoked
        (another's is `404 delegation.unknown`, as if it did not exist)."""
        try:
            caller = await self.caller(request)
            person = _person(caller, "delegations")
            revoked = await self.opened().revoke_delegation(
                request.path_params["delegation_id"],
                revoked_by=person,
                tenant_id=caller.tenant_id,
                person=person,
            )
        except Exception as error:  # every error becomes a problem body (see problems.py)
            return problem(error)
        return JSONResponse(_delegation(revoked).model_dump(mode="json"))

    async def page(self, request: Request) -> Response:
        try:
            caller = await self.caller(request)
        except Exception as error:  # shown as a page, with the problem's sentence and hint
            return _refused(error)
        return page(request, caller.owner_id or caller.answered_by or "", self.poll_ms)

    async def static(self, request: Request) -> Response:
        return static(request.path_params["name"])

    async def openapi(self, request: Request) -> Response:
        return JSONResponse(openapi_schema(request.scope.get("root_path", "")))


def _answerers_problem(error: BaseException) -> Response:
    """The problem body of a refused answer or claim: another's pause is refused as one that
    is not there, and who answers is said in the words of this door."""
    if isinstance(error, ThreadOwnerError):
        return problem(UnknownPauseError())
    if isinstance(error, PauseAnswererError):
        return problem(PauseAnswererError(error.message, hint=_WHO_ANSWERS_HERE))
    return problem(error)


def _refused(error: BaseException) -> Response:
    """The page's answer when the caller is not signed in (or the authenticator failed)."""
    log_failure(error)
    if not isinstance(error, AgbossError):
        return HTMLResponse(
            "<!doctype html><p>The page failed; the server's log has why.</p>",
            500,
            headers=PAGE_HEADERS,
        )
    status = status_of(error)
    said = "You are not signed in" if isinstance(error, NotAuthenticatedError) else "Not shown"
    text, hint = html.escape(error.message), html.escape(error.hint or "")
    return HTMLResponse(
        f"<!doctype html><title>Approvals</title><p>{said}: {text}.</p><p>{hint}</p>",
        status_code=status,
        headers=PAGE_HEADERS,
    )


async def _pause_id(app: App, caller: Caller, body: AnswerBody | ClaimBody | ReassignBody) -> str:
    """The pause an answer's body names: by its id (a channel's side, which was sent it), or by
    its reference, mapped back for a signed-in person alone (a reference is no credential)."""
    if body.pause_id is not None:
        return body.pause_id
    assert body.pause_ref is not None  # read_answer: exactly one of the two
    if caller.owner_id is None:
        raise PauseAnswererError(
            "a channel's side answers a channel pause by the id its channel was sent, "
            "not by its reference",
            hint='send "pause_id" in the body instead of "pause_ref"',
        )
    return await app.pause_id_of(
        body.pause_ref, tenant_id=caller.tenant_id, owner_id=caller.owner_id
    )


_WHO_ANSWERS_HERE: Final = (
    "a thread-owner pause is answered by its signed-in owner (the authenticator returns "
    "Caller(owner_id=…)); a channel pause through its channel, by the channel's side "
    "(Caller(answered_by=…)) with the pause_id it was sent — or on the page, not at all"
)

_RETRY_HINT: Final = (
    'send {"execution_id": "ex-…"}, and for a call cut off mid-call, once checked, '
    '"call_ran": true with "call_result": "what it did", or "call_ran": false'
)


def _person(caller: Caller, what: str) -> str:
    """A signed-in owner's id: a channel's side has no ``what`` of its own."""
    if caller.owner_id is None:
        raise PauseAnswererError(
            f"{what} are listed for a signed-in owner; a channel's side has none",
            hint="authenticate the person as Caller(owner_id=…)",
        )
    return caller.owner_id


def _standing(decision: StandingDecision) -> StandingBody:
    fields = fields_of(decision)
    del fields["tenant_id"]  # the caller's own: it stays on the server's side
    return StandingBody(**fields)


def _delegation(delegation: Delegation) -> DelegationBody:
    fields = fields_of(delegation)
    del fields["tenant_id"]  # the caller's own: it stays on the server's side
    return DelegationBody(**fields)


_DELEGATE_HINT: Final = (
    'send {"to": "bo", "until": "2026-12-11T18:00:00+00:00", "role": "…", "tool": "…", '
    '"reason": "…"} (role, tool, until and reason may be left out)'
)


def _whole(text: str | None, default: int) -> int:
    """A query's whole number: ASCII digits only (``²`` is a digit to `str.isdigit`, not to
    `int`), and short enough to read (a 5,000-digit one is refused, not converted)."""
    if text is None:
        return default
    if not (text.isascii() and text.isdigit() and len(text) <= 9):
        raise DtoValidationError(
            f"limit={text[:20]!r} is not a whole number", hint="pass e.g. ?limit=50 (1 to 500)"
        )
    return int(text)


def _moment(text: str | None, name: str) -> datetime | None:
    if text is None:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError as error:
        raise DtoValidationError(
            f"{name}={text!r} is not an ISO 8601 time",
            hint=f"pass e.g. ?{name}=2026-12-03T09:00:00%2B00:00 (with its offset)",
        ) from error


def _entry(app: App, entry: InboxEntry, now: datetime, person: str) -> InboxEntryBody:
    pause = entry.pause
    fields = fields_of(pause)
    del fields["pause_id"]  # the id stays on the server: the reference names the pause
    seats = () if pause.votes is None else pause.votes.eligible or ()
    theirs = entry.owner_id == person or person in seats
    return InboxEntryBody(
        **fields,
        execution_id=entry.execution_id,
        thread_id=entry.thread_id,
        asked_at=entry.asked_at,
        waited_seconds=max(0.0, (now - entry.asked_at).total_seconds()),
        accepts_reply=app.accepts_reply(pause),
        arguments_schema=app.arguments_schema(pause),
        request=entry.request,
        expires_at=entry.expires_at,
        expires_in_seconds=_seconds_until(entry.expires_at, now),
        next_step=None if entry.next_step is None else entry.next_step.kind,
        next_step_at=entry.next_step_at,
        next_step_in_seconds=_seconds_until(entry.next_step_at, now),
        claimed_by=entry.claimed_by,
        claimed_until=entry.claimed_until,
        handoffs=app.handoffs(pause),
        on_behalf_of=None if theirs else entry.owner_id,
    )


def _execution(entry: ExecutionSummary) -> ExecutionEntryBody:
    """A tree as the body shows it: its questions by reference, the owner on the server."""
    fields = fields_of(entry)
    del fields["owner_id"]  # the caller's own
    fields["waiting_on"] = [
        WaitingOnBody(
            pause_ref=pause.pause_ref,
            answered_by=pause.answered_by,
            channel=pause.channel,
            tool=pause.ask.tool,
            arguments=dict(pause.ask.arguments),
        )
        for pause in entry.waiting_on
    ]
    return ExecutionEntryBody(**fields)


def _seconds_until(moment: datetime | None, now: datetime) -> float | None:
    return None if moment is None else max(0.0, (moment - now).total_seconds())


def pause_router(
    app: App | Callable[[], App | None],
    *,
    authenticate: Authenticator,
    max_body: int = DEFAULT_MAX_BODY,
    page: bool = True,
    poll_ms: int = DEFAULT_POLL_MS,
) -> Router:
    """The HTTP face of an application's pauses, to mount in a Starlette or FastAPI app.

    ``POST /answers`` answers a pause (`App.answer`: recorded, then moved in the background;
    ``202``, or ``200`` with ``repeated`` for a retried answer), the pause named in the JSON
    body — a signed-in person by its ``pause_ref`` as the inbox lists it, a channel's side by
    the ``pause_id`` it was sent — never in the URL: no route takes a pause's id in its path or
    query, and no body the router sends carries one;
    ``GET /pauses`` lists the caller's inbox (`App.pending`); ``GET /executions/failed`` the
    caller's failed execution trees (`App.failed`) and ``POST /executions/retry`` runs one
    again (`App.retry`, as the caller; for a call cut off mid-call, with what they checked);
    ``GET /standing`` the caller's standing
    decisions (`App.standing`, ``?revoked=true`` with the revoked) and ``DELETE
    /standing/{decision_id}`` revokes one (`App.revoke`); ``GET /openapi.json`` describes them;
    ``GET /`` is the approvals page, which answers through those same routes.
    Who answers comes from ``authenticate`` alone. Errors are JSON problem bodies with
    the error's ``code``: unknown ``404``, not waiting ``409``, invalid ``422``, not a JSON
    object ``400``, wrong answerer or owner ``403``, budget ``429``, store ``503`` (see
    `problems.py`).

    The router does not open or close ``app``: the host application does, in its lifespan. A
    router built before the application is open takes a function that returns it (``None``
    until it is open: then ``503 web.app-not-open``).

    Args:
        app: The application whose pauses it answers, or a function of nothing returning it.
        authenticate: Reads the `Caller` from a request; ``None`` for no credential.
        max_body: The largest request body, in bytes (``413`` over it).
        page: Serve the approvals page at ``/`` (its files under ``/static/``).
        poll_ms: How often the page reads the inbox again, in milliseconds: how soon it shows
            a pause answered elsewhere.

    Raises:
        ConfigurationError: ``authenticate`` is not callable, or ``max_body`` or ``poll_ms``
            not a positive whole number.
    """
    app_of = app_function(app, "pause_router")
    if not callable(authenticate):
        raise ConfigurationError(
            "authenticate= must be a function of the request returning a Caller or None",
            hint="async def authenticate(request): return Caller(owner_id=…)",
        )
    for name, value, hint in (
        ("max_body", max_body, "leave it out for 64 KiB"),
        ("poll_ms", poll_ms, "leave it out for every 2 seconds"),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigurationError(f"{name}={value!r} must be a positive whole number", hint=hint)
    routes = _Routes(app_of, authenticate, max_body, poll_ms)
    table: list[BaseRoute] = [
        Route("/pauses", routes.inbox, methods=["GET"]),
        Route("/executions", routes.executions, methods=["GET"]),
        Route("/executions/failed", routes.failed, methods=["GET"]),
        Route("/executions/retry", routes.retry, methods=["POST"]),
        Route("/answers", routes.answer, methods=["POST"]),
        Route("/claims", routes.claim, methods=["POST"]),
        Route("/claims/release", routes.release, methods=["POST"]),
        Route("/reassignments", routes.reassign, methods=["POST"]),
        Route("/standing", routes.standing, methods=["GET"]),
        Route("/standing/{decision_id}", routes.revoke, methods=["DELETE"]),
        Route("/delegations", routes.delegations, methods=["GET"]),
        Route("/delegations", routes.delegate, methods=["POST"]),
        Route("/delegations/{delegation_id}", routes.revoke_delegation, methods=["DELETE"]),
        Route("/openapi.json", routes.openapi, methods=["GET"]),
    ]
    if page:
        table += [
            Route("/", routes.page, methods=["GET"]),
            Route("/static/{name}", routes.static, methods=["GET"]),
        ]
    # Any other method of a route's path is a problem with a code, not Starlette's text/plain
    # 405: a route that takes every method, after the route it stands behind.
    table += [Route(path, _not_allowed(table, path), methods=_METHODS) for path in _paths(table)]
    # No trailing-slash redirects: Starlette builds their Location from the client's Host
    # header (an open redirect); a path with a slash too many is a 404 like any unknown one.
    return Router(routes=table, redirect_slashes=False, default=_not_found)


def _paths(table: list[BaseRoute]) -> list[str]:
    """The paths of a table's routes, each once, in order."""
    return list(dict.fromkeys(route.path for route in table if isinstance(route, Route)))


def _not_allowed(table: list[BaseRoute], path: str) -> Callable[[Request], Awaitable[Response]]:
    """The answer to a method no route of ``path`` takes: ``405`` with a problem body and the
    ``Allow`` header."""
    allowed = sorted(
        {
            method
            for route in table
            if isinstance(route, Route) and route.path == path
            for method in route.methods or ()
        }
    )

    async def refuse(request: Request) -> Response:
        response = problem(
            MethodNotAllowedError(
                f"{request.method} is not a method of {path}",
                hint=f"use {' or '.join(allowed)}",
            )
        )
        response.headers["Allow"] = ", ".join(allowed)
        return response

    return refuse


def mount(host: Starlette, path: str, router: Router) -> None:
    """Mounts a router (`pause_router`) on a host application at ``path`` — as
    ``host.mount(path, router)`` does — and serves ``path`` itself, without its slash, as
    the router's root.

    ``host.mount`` alone leaves ``GET /agboss`` to the host, whose trailing-slash redirect
    builds its ``Location`` from the client's ``Host`` header (``http://evil.example/agboss/``).
    Here it is the page, served as at ``/agboss/`` (its links are relative to its base).

    Args:
        host: The Starlette or FastAPI application.
        path: Where the router answers (``/agboss``).
        router: The router.

    Raises:
        ConfigurationError: ``path`` does not start with ``/`` or ends with one.
    """
    if not path.startswith("/") or path.endswith("/"):
        raise ConfigurationError(
            f"mount path {path!r} must start with '/' and not end with one",
            hint='mount(api, "/agboss", pause_router(app, authenticate=...))',
        )

    host.router.routes.append(Route(path, _BareRoot(path, router), methods=_METHODS))
    host.mount(path, router)


@dataclass(frozen=True, slots=True)
class _BareRoot:
    """The mount's path without its slash, served by the router as its root (an ASGI app:
    a class, so that Starlette does not take it for an endpoint of a request)."""

    path: str
    router: Router

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        base = scope.get("root_path", "")
        inner = {**scope, "path": f"{base}{self.path}/", "root_path": f"{base}{self.path}"}
        inner["raw_path"] = inner["path"].encode()
        await self.router(inner, receive, send)


async def _not_found(scope: Scope, receive: Receive, send: Send) -> None:
    response = problem(NotFoundError(f"the router has no route {scope.get('path', '')!r}"))
    await response(scope, receive, send)
