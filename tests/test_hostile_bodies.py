"""Values nested ever deeper are refused with a code, over HTTP and through the Python API.

A 2 KB body of 1,000 nested arrays once made the router answer ``500 web.internal`` (a
`RecursionError` while decoding): any body the router refuses is a 400, 413 or 422 problem
with a code, any value `App.resume` / `App.answer` refuse a `DtoValidationError`, and the
pause keeps waiting (issue 37, item 4).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from agboss import PauseStatus, ToolCallApprovalDecisionDto, pause_ref
from agboss.errors import DtoValidationError
from agboss.testing import TestEnv
from agboss.web import pause_router
from tests.apps import replies_app
from tests.stores import env_on
from tests.test_replies import EXPENSE
from tests.test_web import Served, bearer, serve

pytestmark = pytest.mark.application.with_args(replies_app.OfficeApplication)

DEPTHS = [100, 999, 1_000, 5_000, 30_000]


def arrays(depth: int) -> str:
    return "[" * depth + "]" * depth


def objects(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def in_a_decision(depth: int) -> str:
    return '{"decision": {"approved": true, "override_arguments": {"purpose": ' + (
        arrays(depth) + "}}}"
    )


def in_a_reply(depth: int) -> str:
    return '{"reply": ' + arrays(depth) + "}"


def in_a_string(depth: int) -> str:
    """Brackets inside a string nest nothing: an answer like any other."""
    return '{"reply": "' + "[" * depth + '"}'


@pytest.fixture
async def served(env: TestEnv) -> AsyncIterator[Served]:
    import httpx
    from starlette.applications import Starlette
    from starlette.routing import Mount

    # The default body limit (64 KiB): 30,000 nested arrays fit in it.
    api = Starlette(routes=[Mount("/agboss", pause_router(env.app, authenticate=bearer))])
    server, task, port = await serve(api)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            yield Served(env, http)
    finally:
        server.should_exit = True
        await task


@pytest.mark.parametrize("shape", [arrays, objects, in_a_decision, in_a_reply])
async def test_a_body_nested_deeply_is_a_problem_with_a_code_and_the_pause_waits(
    served: Served, shape: Callable[[int], str]
) -> None:
    pause_id = await served.paused_on(EXPENSE)
    for depth in DEPTHS:
        response = await served.http.post(
            "/agboss/answers",
            content=shape(depth).encode(),
            headers={"Authorization": "Bearer tok-owner", "Content-Type": "application/json"},
        )
        assert response.status_code in (400, 413, 422), (depth, response.text)
        problem = response.json()
        assert problem["code"] in ("web.unreadable", "web.too-large", "dto.invalid"), problem
        if response.status_code == 400 and depth > 100:
            assert "nests deeper than" in problem["detail"]
    assert await served.status(pause_id) is PauseStatus.PENDING


async def test_brackets_inside_a_string_are_text(served: Served) -> None:
    await served.paused_on(EXPENSE)
    response = await served.http.post(
        "/agboss/answers",
        content=in_a_string(1_000).encode(),
        headers={"Authorization": "Bearer tok-owner", "Content-Type": "application/json"},
    )
    # Read as a reply (and refused by the role, which has no interpreter), not as too deep.
    assert "nests deeper" not in response.text


def nested(depth: int, make: Callable[[Any], Any]) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = make(value)
    return value


def listed(depth: int) -> Any:
    return nested(depth, lambda value: [value])


DECISIONS: list[Callable[[int], Any]] = [
    lambda depth: {"approved": True, "override_arguments": {"purpose": listed(depth)}},
    lambda depth: {
        "approved": True,
        "override_arguments": {"purpose": nested(depth, lambda v: {"a": v})},
    },
    lambda depth: {"approved": listed(depth)},
    lambda depth: {"approved": False, "reason": nested(depth, lambda v: {"a": v})},
    lambda depth: nested(depth, lambda v: {"decision": v}),
    lambda depth: ToolCallApprovalDecisionDto(
        approved=True, override_arguments={"purpose": listed(depth)}
    ),
]


@pytest.mark.parametrize("answer", ["resume", "answer"])
@pytest.mark.parametrize("decision", DECISIONS)
async def test_a_decision_nested_deeply_is_a_dto_validation_error_and_the_pause_waits(
    served: Served, answer: str, decision: Callable[[int], Any]
) -> None:
    pause_id = await served.paused_on(EXPENSE)
    app = served.env.app
    for depth in DEPTHS:
        with pytest.raises(DtoValidationError):
            await getattr(app, answer)(pause_id, decision=decision(depth), owner_id="user-1")
        with pytest.raises(DtoValidationError):
            await getattr(app, answer)(pause_id, reply=listed(depth), owner_id="user-1")
    assert await served.status(pause_id) is PauseStatus.PENDING


# ---- what a client may send that is not an answer (issue 53, item 6) --------------------------


async def _raw(served: Served, content: bytes, media: str = "application/json") -> Any:
    return await served.http.post(
        "/agboss/answers",
        content=content,
        headers={"Authorization": "Bearer tok-owner", "Content-Type": media},
    )


async def test_a_name_given_twice_in_one_object_is_refused_not_read_either_way(
    served: Served,
) -> None:
    pause_id = await served.paused_on(EXPENSE)
    ref = pause_ref(pause_id)
    for body in (
        f'{{"pause_ref": "{ref}", "decision": {{"approved": false, "approved": true}}}}',
        f'{{"pause_ref": "{ref}", "pause_ref": "{ref}", "decision": {{"approved": true}}}}',
    ):
        response = await _raw(served, body.encode())
        assert response.status_code == 400, response.text
        problem = response.json()
        assert problem["code"] == "web.unreadable"
        assert "twice" in problem["detail"]
    assert await served.status(pause_id) is PauseStatus.PENDING


async def test_a_body_in_utf16_or_with_a_byte_order_mark_is_refused_as_not_utf8(
    served: Served,
) -> None:
    pause_id = await served.paused_on(EXPENSE)
    body = f'{{"pause_ref": "{pause_ref(pause_id)}", "decision": {{"approved": true}}}}'
    for raw in (b"\xef\xbb\xbf" + body.encode(), body.encode("utf-16"), body.encode("utf-32")):
        response = await _raw(served, raw)
        assert response.status_code == 400, response.text
        assert response.json()["code"] == "web.unreadable"
    assert await served.status(pause_id) is PauseStatus.PENDING
    assert (await _raw(served, body.encode())).status_code == 202  # UTF-8 as RFC 8259 says


@pytest.mark.parametrize("path", ["/agboss/pauses", "/agboss/executions/failed"])
async def test_a_limit_that_is_no_whole_number_is_a_422(served: Served, path: str) -> None:
    for limit in ("²", "٣", "9" * 5000, "-1", "1e3"):
        response = await served.http.get(
            path, params={"limit": limit}, headers={"Authorization": "Bearer tok-owner"}
        )
        assert response.status_code == 422, (limit[:10], response.text[:200])
        assert response.json()["code"] == "dto.invalid"


async def test_a_method_a_route_does_not_take_is_a_405_problem_with_allow(
    served: Served,
) -> None:
    for method, path, allowed in (
        ("PUT", "/agboss/pauses", "GET, HEAD"),
        ("GET", "/agboss/answers", "POST"),
        ("POST", "/agboss/standing", "GET, HEAD"),
        ("PATCH", "/agboss/standing/d-1", "DELETE"),
    ):
        response = await served.http.request(
            method, path, headers={"Authorization": "Bearer tok-owner"}
        )
        assert response.status_code == 405, (method, path)
        assert response.headers["content-type"] == "application/problem+json"
        assert response.headers["allow"] == allowed
        assert response.json()["code"] == "web.method-not-allowed"


async def test_mounted_with_mount_the_bare_path_is_the_page_never_a_redirect(
    tmp_path: Path,
) -> None:
    from fastapi import FastAPI

    from agboss.web import mount

    async with env_on("sqlite", tmp_path, replies_app.OfficeApplication) as env:
        api = FastAPI()  # the documented host: its own redirect_slashes on
        mount(api, "/agboss", pause_router(env.app, authenticate=bearer))
        server, task, port = await serve(api)
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
                headers = {"Host": "evil.example", "Authorization": "Bearer tok-owner"}
                bare = await http.get("/agboss", headers=headers, follow_redirects=False)
                slashed = await http.get("/agboss/", headers=headers)
                listed = await http.get("/agboss/pauses", headers=headers)
        finally:
            server.should_exit = True
            await task
    assert bare.status_code == 200
    assert "location" not in bare.headers
    assert "evil.example" not in bare.text
    assert '<base href="/agboss/">' in bare.text  # its links resolve under the mount
    assert bare.text == slashed.text
    assert listed.status_code == 200
