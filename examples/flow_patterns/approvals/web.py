"""The approvals example's ``--web`` mode: the approvals page of `agboss.web`, on 127.0.0.1.

The page is signed in by a one-time link: the example prints ``/login?token=…``, which works
once — it sets a session cookie of its own (HttpOnly, SameSite=Strict, and Secure when served
over https) that the authenticator reads, and is then spent. A real application reads its own
sign-in here instead; the router never trusts a name the browser sends.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route

from agboss import App, ExecutionOutput, ExecutionStatus
from agboss.web import Caller, pause_router

__all__ = ["serve_page"]

COOKIE = "agboss_demo_session"


def site(app: App, owner: str, token: str) -> Starlette:
    """The example's web application: the one-time login link, and the page mounted at
    /approvals."""
    link = [token]  # the link's token until it is used, then nothing
    session = secrets.token_urlsafe(24)  # the cookie's: not the link's, which is spent

    async def authenticate(request: Request) -> Caller | None:
        given = request.cookies.get(COOKIE, "")
        return Caller(owner_id=owner) if secrets.compare_digest(given, session) else None

    async def login(request: Request) -> Response:
        given = request.query_params.get("token", "")
        if not link or not secrets.compare_digest(given, link[0]):
            return PlainTextResponse(
                "this link is not the one the example printed, or it was used already: "
                "restart the example for a new one",
                403,
            )
        link.clear()
        response = RedirectResponse("/approvals/", status_code=303)
        secure = request.url.scheme == "https"
        response.set_cookie(COOKIE, session, httponly=True, samesite="strict", secure=secure)
        return response

    return Starlette(
        routes=[
            Route("/login", login),
            Mount("/approvals", pause_router(app, authenticate=authenticate)),
        ]
    )


LINGER = 3
"""Seconds the page is still served once nothing waits (its next poll shows so)."""


async def serve_page(
    app: App,
    result: ExecutionOutput,
    *,
    owner: str,
    port: int,
    report: Callable[[ExecutionOutput], None],
) -> ExecutionOutput:
    """Serves the page until the execution stops waiting, then reports it.

    Args:
        app: The application, open.
        result: The paused execution the page answers.
        owner: Who the login link signs in.
        port: The port on 127.0.0.1; 0 for any free one.
        report: Prints the finished execution.

    Returns:
        The execution once it no longer waits.
    """
    token = secrets.token_urlsafe(24)
    config = uvicorn.Config(
        site(app, owner, token), host="127.0.0.1", port=port, log_level="warning", lifespan="off"
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if serving.done():
                serving.result()  # the port was taken: its error
            await asyncio.sleep(0.05)
        bound = server.servers[0].sockets[0].getsockname()[1]
        print(f"open http://127.0.0.1:{bound}/login?token={token} to answer on the page")
        while result.status in (ExecutionStatus.PAUSED, ExecutionStatus.RUNNING):
            await asyncio.sleep(0.2)
            result = await app.get(result.execution_id)
        result = await app.get(result.execution_id, record=True)  # the audit trail, once
        # The page reads the inbox every 2 s: it shows that nothing waits before the server goes.
        print(f"every question is answered; the page's server stops in {LINGER} s")
        await asyncio.sleep(LINGER)
        report(result)
        return result
    finally:
        server.should_exit = True
        await serving
