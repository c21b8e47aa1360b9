"""A pause's id never leaves agboss, except to its channel's ``send`` (issue 53, item 1).

One full cycle per face — HTTP behind uvicorn with its access log on, the approvals page in
Chromium, Slack through slack_sdk at DEBUG — with every log line captured: the id appears in no
log line, no URL, no body the server sends and no Slack payload. What leaves names the pause by
its reference, which the door maps back once it knows who calls.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from playwright.async_api import Request as BrowserRequest
from playwright.async_api import Response as BrowserResponse
from playwright.async_api import expect

from agboss import ExecutionStatus, ToolCallApprovalDecisionDto, pause_ref
from agboss.testing import reply_with
from agboss.web import pause_router
from tests.apps.desk import DeskDepositApprovalChannel
from tests.apps.recorded import recording
from tests.apps.replies_app import OfficeApplication, RefundReplyInterpreter, RepliesRecorder
from tests.stores import env_on
from tests.test_page import expense_card, ran, site_for
from tests.test_replies import EXPENSE, REFUND
from tests.test_slack import _buttons, served_desk
from tests.test_web import Served, bearer, serve
from tests.waiting import eventually


def _nowhere(secrets: list[str], *places: tuple[str, str]) -> None:
    """Each secret appears in none of the places (named, for the failure's message)."""
    for secret in secrets:
        assert len(secret) == 32
        for name, text in places:
            assert secret not in text, f"a pause's id in {name}"


def _logged(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(f"{r.name}: {r.getMessage()}" for r in caplog.records)


async def test_over_http_behind_uvicorns_access_log_the_id_is_in_no_url_line_or_body(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    recorded = RepliesRecorder()
    urls: list[str] = []
    bodies: list[str] = []

    async def sent(request: httpx.Request) -> None:
        urls.append(str(request.url))

    async def received(response: httpx.Response) -> None:
        bodies.append((await response.aread()).decode())

    async with env_on(
        "sqlite", tmp_path, OfficeApplication, dependencies=recording(recorded)
    ) as env:
        api = FastAPI()
        api.mount("/agboss", pause_router(env.app, authenticate=bearer))
        server, task, port = await serve(api, access_log=True)
        hooks = {"request": [sent], "response": [received]}
        try:
            async with httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{port}", event_hooks=hooks
            ) as http:
                served = Served(env, http)
                # The owner answers by the reference the inbox lists…
                owners = await served.paused_on(EXPENSE)
                [listed] = (await served.inbox()).json()["entries"]
                assert listed["pause_ref"] == pause_ref(owners)
                mine = await served.post(owners, {"decision": {"approved": True}})
                assert mine.status_code == 202
                first = mine.json()["execution_id"]

                async def finished() -> bool:  # its last model turn taken: the script is free
                    found = await env.app.get(first)
                    return found.status is ExecutionStatus.COMPLETED

                await eventually(finished, "the expense booked and its tree finished")
                # … a channel's side by the id it was sent, in the body.
                channels = await served.paused_on(REFUND)
                env.mock_llm(RefundReplyInterpreter).then_return(
                    reply_with(ToolCallApprovalDecisionDto, approved=True)
                )
                theirs = await served.post(channels, {"reply": "yes"}, token="tok-manager")
                assert theirs.status_code == 202
                await eventually(lambda: len(recorded.runs) == 2, "the refund made")
        finally:
            server.should_exit = True
            await task
    lines = _logged(caplog)
    assert "POST /agboss/answers" in lines  # the access log was on, and read
    _nowhere(
        [owners, channels],
        ("a URL", "\n".join(urls)),
        ("a log line", lines),
        ("a response body", "\n".join(bodies)),
    )


async def test_on_the_approvals_page_the_id_is_in_no_url_request_or_response(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    requests: list[BrowserRequest] = []
    responses: list[asyncio.Future[str]] = []

    def read(response: BrowserResponse) -> None:
        responses.append(asyncio.ensure_future(response.text()))

    async for site in site_for("sqlite", tmp_path, poll_ms=250, access_log=True):
        result = await site.paused()
        owners = str(result.pending[0].pause_id)
        channels = site.env.mock_of(DeskDepositApprovalChannel).send.call_args.args[0].pause_id
        page = await site.open()
        page.on("request", lambda request: requests.append(request))
        page.on("response", read)
        await page.reload()
        card = expense_card(page)
        await card.get_by_role("button", name="Approve", exact=True).click()
        await expect(card.locator(".note")).to_have_text("Approved — recorded.")
        await ran(site, "book-expense taxi 12.5")
        shown = await page.content()
        sent = [f"{r.method} {r.url} {r.post_data or ''}" for r in requests]
        # A poll's body a reload cut off is not read: the ones read include the inbox's.
        bodies = await asyncio.gather(*responses, return_exceptions=True)
        read = [text for text in bodies if isinstance(text, str)]
    assert any(pause_ref(owners) in text for text in read)
    lines = _logged(caplog)
    assert '"POST /agboss/answers' in lines  # the page answered, and the access log saw it
    assert any(pause_ref(owners) in request for request in sent)  # named by its reference
    _nowhere(
        [owners, channels],
        ("the page", shown),
        ("a request the page sent", "\n".join(sent)),
        ("a response the page read", "\n".join(read)),
        ("a log line", lines),
    )


async def test_in_slack_the_id_is_in_no_button_form_update_or_sdk_debug_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.DEBUG)
    async with served_desk("sqlite", tmp_path, monkeypatch) as desk:
        message = await desk.refund_asked()
        token = json.loads(_buttons(message)[0]["value"])
        secret = await desk.env.app.pause_id_of(token["r"], tenant_id=token["t"])
        # A cycle through a form: its private_metadata carries the question too.
        await desk.slack.click(desk.url, message, "Reject with reason", user="U0MANAGER")
        [view] = desk.slack.views
        await desk.slack.submit(desk.url, view, {"agboss.reason": "a duplicate"})
        await eventually(lambda: desk.slack.message(message.ts).updates == 1, "the update")
        outcome = await desk.outcome()
        assert outcome.status is ExecutionStatus.COMPLETED
        calls: list[Any] = [(call.method, call.arguments) for call in desk.slack.calls]
        payloads = json.dumps(calls, default=str) + json.dumps(
            [view.view.get("private_metadata") for view in desk.slack.views]
        )
    lines = _logged(caplog)
    assert any(r.name.startswith("slack_sdk") for r in caplog.records)  # its DEBUG was read
    assert "chat.postMessage" in payloads
    assert "views.open" in payloads
    _nowhere(
        [secret],
        ("a Slack payload", payloads),
        ("a message as Slack shows it", json.dumps(desk.slack.message(message.ts).blocks)),
        ("a log line", lines),
    )
