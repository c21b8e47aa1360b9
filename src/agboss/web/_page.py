"""The approvals page: one server-rendered HTML shell, and the script and style it loads.

The files ship in the package (``static/``): nothing is fetched from a CDN. The page reads and
answers through the router's own JSON routes, so it sees exactly what the API shows (masked
asks, no channel pause's id) and is refused exactly what the API refuses.
"""

from __future__ import annotations

import html
from functools import cache
from importlib import resources
from string import Template
from typing import Final

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

__all__ = ["PAGE_HEADERS", "page", "static"]

_TYPES: Final = {"approvals.js": "text/javascript", "approvals.css": "text/css"}

# The page loads its own script and style, and talks to its own origin only.
_POLICY: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'self'; form-action 'none'; frame-ancestors 'none'"
)
PAGE_HEADERS: Final = {
    "Content-Security-Policy": _POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
"""What every HTML answer of the router carries: the page, and its 401 and 500 pages."""


@cache
def _file(name: str) -> str:
    return resources.files("agboss.web").joinpath("static", name).read_text(encoding="utf-8")


def page(request: Request, who: str, poll_ms: int) -> Response:
    """The page's HTML for a signed-in owner."""
    base = request.scope.get("root_path", "").rstrip("/") + "/"
    text = Template(_file("approvals.html")).substitute(
        base=html.escape(base, quote=True), who=html.escape(who), poll_ms=str(poll_ms)
    )
    return HTMLResponse(text, headers=PAGE_HEADERS)


def static(name: str) -> Response:
    """One of the page's files, or ``404``."""
    media = _TYPES.get(name)
    if media is None:
        return Response("not found", status_code=404, media_type="text/plain")
    headers = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"}
    return Response(_file(name), media_type=media, headers=headers)
