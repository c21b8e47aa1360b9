"""``agboss.web``: answering pauses over HTTP, on Starlette (mountable in FastAPI).

    from agboss.web import Caller, mount, pause_router

    async def authenticate(request):           # the application's own sign-in
        user = await sessions.user_of(request)
        return None if user is None else Caller(owner_id=user.id, tenant_id=user.tenant)

    mount(api, "/agboss", pause_router(app, authenticate=authenticate))

Needs the ``web`` extra: ``pip install 'agboss[web]'``.
"""

# `agboss.http`, imported first, names the web extra when starlette is missing.
from agboss.http import (
    AppNotOpenError,
    NotAuthenticatedError,
    RequestTooLargeError,
    UnreadableRequestError,
)
from agboss.web._links import AnswerLink, AnswerLinkError, AnswerLinks
from agboss.web._router import Authenticator, Caller, authenticated, mount, pause_router

__all__ = [
    "AnswerLink",
    "AnswerLinkError",
    "AnswerLinks",
    "AppNotOpenError",
    "Authenticator",
    "Caller",
    "NotAuthenticatedError",
    "RequestTooLargeError",
    "UnreadableRequestError",
    "authenticated",
    "mount",
    "pause_router",
]
