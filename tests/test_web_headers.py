"""What the router answers cannot be steered by a client's headers, and every HTML answer
carries the page's protections (issue 37, item 7)."""

from __future__ import annotations

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Mount

from agboss.web import Caller, pause_router
from tests.apps.replies_app import OfficeApplication
from tests.test_replies import EXPENSE
from tests.test_web import Served, serve, served  # noqa: F401 - the fixture

pytestmark = pytest.mark.application.with_args(OfficeApplication)

_PROTECTIONS = ("content-security-policy", "x-content-type-options")


async def test_a_trailing_slash_is_not_redirected_to_the_clients_host(served: Served) -> None:  # noqa: F811
    pause_id = await served.paused_on(EXPENSE)
    for method, path in (
        ("POST", "/agboss/answers/"),
        ("GET", "/agboss/pauses/"),
        ("GET", "/agboss/openapi.json/"),
    ):
        response = await served.http.request(
            method,
            path,
            json={"pause_id": pause_id, "decision": {"approved": True}}
            if method == "POST"
            else None,
            headers={"Host": "evil.example", "Authorization": "Bearer tok-owner"},
            follow_redirects=False,
        )
        assert response.status_code == 404, (path, response.status_code)
        assert "location" not in response.headers
        assert response.json()["code"] == "web.not-found"
        assert "evil.example" not in response.text
    assert await served.status(pause_id) is not None


async def test_the_pages_401_and_500_carry_its_csp_and_nosniff(served: Served) -> None:  # noqa: F811
    refused = await served.http.get("/agboss/")  # no credential
    assert refused.status_code == 401
    assert refused.headers["content-type"].startswith("text/html")
    for header in _PROTECTIONS:
        assert header in refused.headers, header
    assert refused.headers["x-content-type-options"] == "nosniff"
    shown = await served.http.get("/agboss/", headers={"Authorization": "Bearer tok-owner"})
    assert refused.headers["content-security-policy"] == shown.headers["content-security-policy"]


async def test_the_pages_500_carries_them_too(served: Served) -> None:  # noqa: F811
    async def broken(request: Request) -> Caller | None:
        raise RuntimeError("the session store is down")

    api = Starlette(routes=[Mount("/agboss", pause_router(served.env.app, authenticate=broken))])
    server, task, port = await serve(api)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            failed = await http.get("/agboss/")
    finally:
        server.should_exit = True
        await task
    assert failed.status_code == 500
    assert "session store" not in failed.text  # the cause stays in the log
    for header in _PROTECTIONS:
        assert header in failed.headers, header


async def test_the_demos_sign_in_link_works_once_and_its_cookie_is_secure_over_https() -> None:
    from examples.flow_patterns.approvals.web import COOKIE, site

    demo = site(lambda: None, "ada", "link-token")  # type: ignore[arg-type]
    transport = httpx.ASGITransport(app=demo)
    async with httpx.AsyncClient(transport=transport, base_url="https://demo.example") as http:
        first = await http.get("/login?token=link-token")
        again = await http.get("/login?token=link-token")
    assert first.status_code == 303
    cookie = first.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=")
    assert "link-token" not in cookie  # the session is not the spent link's token
    assert "Secure" in cookie
    assert "HttpOnly" in cookie
    assert again.status_code == 403


async def test_without_javascript_the_page_says_what_to_do(served: Served) -> None:  # noqa: F811
    page = await served.http.get("/agboss/", headers={"Authorization": "Bearer tok-owner"})
    assert page.status_code == 200
    shown = page.text.split("<noscript>")[1].split("</noscript>")[0]
    assert "needs JavaScript" in shown
    assert "agboss pauses list" in shown
