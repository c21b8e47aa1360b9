"""The approvals page, end to end in headless Chromium (Debian's, driven by Playwright) against
a real uvicorn server on loopback, on both stores."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from playwright.async_api import Browser, Page, async_playwright, expect
from starlette.requests import Request

from agboss import ExecutionStatus, PauseAnswerer
from agboss.testing import TestEnv, call_tools, test_with, tool_call
from agboss.web import Caller, pause_router
from tests.apps import deadline_app, travel_app
from tests.apps.desk import (
    BookExpenseTool,
    DeskDepositApprovalChannel,
    OfficeAgent,
    OfficeApplication,
    OfficeWorkflow,
)
from tests.apps.recorded import recorder_for, recording
from tests.interrupting import cut_off_in_tool
from tests.stores import STORE_KINDS, store_url
from tests.test_examples import example_env
from tests.test_pauses import BOTH, DONE, REQUEST
from tests.test_web import serve
from tests.waiting import eventually

CHROMIUM = os.environ.get("AGBOSS_CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
# As root on a closed network: no sandbox, and none of Chromium's own connections.
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = os.environ.get("AGBOSS_SCREENSHOTS")  # a folder: the docs' screenshots are made so

# .ci/run installs Chromium and sets AGBOSS_REQUIRE_CHROMIUM: there, a missing browser fails.
pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists() and not os.environ.get("AGBOSS_REQUIRE_CHROMIUM"),
    reason="no Chromium (.ci/run installs Debian's chromium)",
)

SESSIONS = {
    "s-ada": Caller(owner_id="ada", tenant_id="acme"),
    "s-bo": Caller(owner_id="bo", tenant_id="acme"),
}


async def by_cookie(request: Request) -> Caller | None:
    """The application's sign-in: a session cookie."""
    return SESSIONS.get(request.cookies.get("session", ""))


@dataclass
class Site:
    env: TestEnv
    browser: Browser
    base: str
    recorded: Any
    """What the site's application records (`tests.apps.recorded`)."""
    errors: list[str] = field(default_factory=list)

    async def open(self, session: str = "s-ada") -> Page:
        context = await self.browser.new_context(viewport={"width": 1000, "height": 900})
        await context.add_cookies([{"name": "session", "value": session, "url": self.base}])
        page = await context.new_page()
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        await page.goto(f"{self.base}/agboss/")
        return page

    async def paused(self, owner: str = "ada", *, then_done: bool = True) -> Any:
        script = self.env.mock_llm(OfficeAgent).then_return(BOTH)
        if then_done:  # the agent's turn after the answer
            script.then_return(DONE)
        self.env.mock_of(DeskDepositApprovalChannel)
        result = await self.env.app.execute(
            OfficeWorkflow, REQUEST, tenant_id="acme", owner_id=owner
        )
        assert result.status is ExecutionStatus.PAUSED
        return result


async def site_for(
    kind: str,
    folder: Path,
    poll_ms: int,
    application: type[Any] = OfficeApplication,
    *,
    access_log: bool = False,
) -> AsyncIterator[Site]:
    recorded = recorder_for(application)
    async with (
        store_url(kind, folder) as url,
        test_with(application, store=url, dependencies=recording(recorded)) as env,
        async_playwright() as playwright,
    ):
        api = FastAPI()
        api.mount("/agboss", pause_router(env.app, authenticate=by_cookie, poll_ms=poll_ms))
        server, task, port = await serve(api, access_log=access_log)
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        site = Site(env, browser, f"http://127.0.0.1:{port}", recorded)
        try:
            yield site
            assert site.errors == []  # the page never crashed
        finally:
            await browser.close()
            server.should_exit = True
            await task


@pytest.fixture(params=STORE_KINDS)
async def site(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Site]:
    async for made in site_for(request.param, tmp_path, poll_ms=250):
        yield made


@pytest.fixture(params=STORE_KINDS)
async def stale_site(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Site]:
    """A page that does not refresh on its own (an hour between polls): a stale tab."""
    async for made in site_for(request.param, tmp_path, poll_ms=3_600_000):
        yield made


@pytest.fixture(params=STORE_KINDS)
async def travel_site(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Site]:
    """The page over an application whose tool input has a field of every kind."""
    async for made in site_for(request.param, tmp_path, 250, travel_app.TravelApplication):
        yield made


@pytest.fixture(params=STORE_KINDS)
async def deadline_site(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Site]:
    """The page over an application whose questions expire."""
    async for made in site_for(request.param, tmp_path, 250, deadline_app.DeadlineApplication):
        yield made


def expense_card(page: Page) -> Any:
    return page.locator('li.pause[data-tool="book-expense-tool"]')


async def ran(site: Site, expected: str) -> None:
    runs = site.recorded.runs
    await eventually(lambda: expected in runs, f"{expected!r} (ran {runs})")


async def test_the_owner_sees_the_masked_ask_and_approves_it(site: Site) -> None:
    paused = await site.paused()
    page = await site.open()
    card = expense_card(page)
    await expect(card).to_contain_text("office-agent asks to run book-expense-tool")
    await expect(card).to_contain_text("expense-approval-channel")
    [asked] = [p.ask for p in paused.pending if p.ask.tool == "book-expense-tool"]
    assert asked.digest is not None
    await expect(card.locator(".digest")).to_have_text(f"digest {asked.digest[:12]}")
    await expect(card).to_contain_text("waiting 0 s")  # the test clock stands still
    await expect(card.locator("table.arguments")).to_contain_text("12.5")
    await card.get_by_role("button", name="Approve", exact=True).click()
    await expect(card.locator(".note")).to_have_text("Approved — recorded.")
    await ran(site, "book-expense taxi 12.5")


async def test_the_cards_of_one_request_stand_together_under_the_request(site: Site) -> None:
    await site.paused(then_done=False)
    await site.paused(then_done=False)
    page = await site.open()
    await expect(page.locator("li.pause")).to_have_count(4)
    headers = page.locator("li.request")
    await expect(headers).to_have_count(2)
    await expect(headers.first).to_have_text(f"Request: {REQUEST.text}")
    order = await page.locator("ul#pauses > li").evaluate_all(
        "items => items.map(item => item.classList.contains('request') ? 'request' : 'card')"
    )
    assert order == ["request", "card", "card", "request", "card", "card"]


async def test_a_rejection_carries_its_reason_to_the_audit_trail(site: Site) -> None:
    result = await site.paused()
    page = await site.open()
    card = expense_card(page)
    await card.get_by_label("Reason").fill("no taxis this month")
    await card.get_by_role("button", name="Reject").click()
    await expect(card.locator(".note")).to_have_text("Rejected (no taxis this month) — recorded.")
    decided: list[Any] = []

    async def recorded() -> bool:
        record = (await site.env.app.get(result.execution_id, tenant_id="acme", record=True)).record
        assert record is not None
        decided[:] = [e.decision for e in record.pauses if e.decision is not None]
        return bool(decided)

    await eventually(recorded, "the rejection in the audit trail")
    assert [(d.approved, d.reason) for d in decided] == [(False, "no taxis this month")]
    assert not any(run.startswith("book-expense") for run in site.recorded.runs)


async def editing(site: Site) -> tuple[Page, Any, Any]:
    """The page, the expense's card and its open form of the tool's arguments."""
    await site.paused()
    page = await site.open()
    card = expense_card(page)
    await card.get_by_role("button", name="Edit arguments").click()
    return page, card, card.get_by_role("form", name="Edit the arguments")


async def test_an_edited_argument_is_what_the_tool_gets(site: Site) -> None:
    page, card, form = await editing(site)
    await form.get_by_label("Amount").fill("6.25")
    if SCREENSHOTS:
        await page.screenshot(path=f"{SCREENSHOTS}/approvals-edit.png", full_page=True)
    await form.get_by_role("button", name="Approve with these arguments").click()
    await expect(card.locator(".note")).to_have_text("Approved with amount=6.25 — recorded.")
    await ran(site, "book-expense taxi 6.25")


async def test_the_form_has_a_control_for_each_kind_of_field_and_sends_what_it_shows(
    travel_site: Site,
) -> None:
    env = travel_site.env
    trip = tool_call(
        travel_app.BookTripTool,
        city="Lyon",
        note="window seat",
        nights=2,
        refundable=False,
        cabin="economy",
        travellers=["ada"],
    )
    env.mock_llm(travel_app.TravelAgent).then_return(call_tools(trip), DONE)
    await env.app.execute(travel_app.TravelWorkflow, REQUEST, tenant_id="acme", owner_id="ada")
    page = await travel_site.open()
    card = page.locator('li.pause[data-tool="book-trip-tool"]')
    await card.get_by_role("button", name="Edit arguments").click()
    form = card.get_by_role("form", name="Edit the arguments")
    await expect(form.get_by_label("City")).to_have_value("Lyon")
    await form.get_by_label("Note").fill("")  # optional text left empty: none
    await form.get_by_label("Nights").fill("3")
    await form.get_by_label("Refundable").check()
    await form.get_by_label("Cabin").select_option(label="business")
    await form.get_by_label("Travellers").fill('["ada", "bob"]')
    await form.get_by_role("button", name="Approve with these arguments").click()
    await expect(card.locator(".note")).to_contain_text("Approved with ")
    await expect(card.locator(".note")).to_contain_text("nights=3")
    booked = travel_site.recorded.booked
    await eventually(lambda: bool(booked), "the booking")
    expected = travel_app.TripDto(
        city="Lyon",
        note=None,
        nights=3,
        refundable=True,
        cabin="business",
        travellers=["ada", "bob"],
    )
    assert [expected] == booked


async def test_an_invalid_edit_shows_the_errors_and_the_pause_keeps_waiting(site: Site) -> None:
    _, card, form = await editing(site)
    await form.get_by_label("Amount").fill("")
    await form.get_by_role("button", name="Approve with these arguments").click()
    await expect(card.locator(".note")).to_contain_text("override_arguments")
    await expect(card.locator("ul.errors")).to_contain_text("amount")
    assert await site.env.app.count_pending(tenant_id="acme", owner_id="ada") == 2
    await expect(card.get_by_role("button", name="Approve", exact=True)).to_be_enabled()


async def test_an_answer_in_words_is_read_by_the_roles_interpreter(site: Site) -> None:
    await site.paused()
    page = await site.open()
    card = expense_card(page)
    await card.get_by_role("button", name="Answer in words").click()
    await card.get_by_label("Your answer in words").fill('{"approved": false}')
    await card.get_by_role("button", name="Send reply").click()
    await expect(card.locator(".note")).to_have_text("Rejected — recorded.")


async def test_a_stale_page_answering_a_pause_answered_elsewhere_says_so(
    stale_site: Site,
) -> None:
    result = await stale_site.paused()
    page = await stale_site.open()
    card = expense_card(page)
    await expect(card).to_be_visible()
    [owner_pause] = [p for p in result.pending if p.answered_by is PauseAnswerer.THREAD_OWNER]
    assert owner_pause.pause_id is not None
    await stale_site.env.app.answer(  # from another device
        owner_pause.pause_id, decision={"approved": False}, tenant_id="acme", owner_id="ada"
    )
    await card.get_by_role("button", name="Approve", exact=True).click()
    await expect(card.locator(".note")).to_contain_text("answered elsewhere or withdrawn")
    await expect(card).to_have_attribute("data-state", "gone")


async def test_the_list_updates_when_a_pause_is_answered_elsewhere(site: Site) -> None:
    result = await site.paused()
    page = await site.open()
    card = expense_card(page)
    await expect(card).to_have_attribute("data-state", "waiting")
    [owner_pause] = [p for p in result.pending if p.answered_by is PauseAnswerer.THREAD_OWNER]
    assert owner_pause.pause_id is not None
    await site.env.app.answer(
        owner_pause.pause_id, decision={"approved": True}, tenant_id="acme", owner_id="ada"
    )
    await expect(card).to_have_count(0, timeout=10_000)  # said on the card, then removed


async def test_a_withdrawn_question_leaves_the_list(site: Site) -> None:
    result = await site.paused()
    page = await site.open()
    card = expense_card(page)
    await expect(card).to_have_attribute("data-state", "waiting")
    await site.env.app.cancel(result.thread_id, tenant_id="acme")  # every pause withdrawn
    await expect(page.locator("li.pause")).to_have_count(0, timeout=10_000)
    await expect(page.locator("#empty")).to_be_visible()


async def test_the_page_reads_every_page_of_the_inbox(site: Site) -> None:
    for _ in range(101):  # 202 waiting pauses: more than one page of 200
        await site.paused(then_done=False)
    page = await site.open()
    await expect(page.locator("#status")).to_have_text(
        "202 waiting: 101 for you, 101 through their channels"
    )
    await expect(page.locator("li.pause")).to_have_count(202)


async def test_what_the_model_wrote_is_shown_as_text_never_run_as_html(site: Site) -> None:
    hostile = '<img src=x onerror="document.title=1">'
    site.env.mock_llm(OfficeAgent).then_return(
        call_tools(tool_call(BookExpenseTool, purpose=hostile, amount=1.0))
    )
    await site.env.app.execute(OfficeWorkflow, REQUEST, tenant_id="acme", owner_id="ada")
    page = await site.open()
    card = expense_card(page)
    await expect(card.locator("table.arguments")).to_contain_text(hostile)
    assert await card.locator("img").count() == 0
    assert await page.title() == "Approvals"


async def test_another_owners_pause_is_not_on_the_page(site: Site) -> None:
    await site.paused(owner="bob")
    page = await site.open()
    await expect(page.locator("#status")).to_have_text("0 waiting for you")
    await expect(page.locator("li.pause")).to_have_count(0)
    await expect(page.locator("#empty")).to_be_visible()


async def test_a_channel_pause_is_shown_without_its_id_and_cannot_be_answered_here(
    site: Site,
) -> None:
    await site.paused()
    secret = site.env.mock_of(DeskDepositApprovalChannel).send.call_args.args[0].pause_id
    page = await site.open()
    deposit = page.locator('li.pause[data-tool="return-deposit-tool"]')
    await expect(deposit).to_contain_text("Answered through deposit-approval-channel, not here.")
    await expect(deposit.get_by_role("button")).to_have_count(0)
    assert secret not in await page.content()


async def test_a_claimed_question_shows_who_handles_it_until_the_claim_ends(site: Site) -> None:
    await site.paused()
    secret = site.env.mock_of(DeskDepositApprovalChannel).send.call_args.args[0].pause_id
    await site.env.app.claim(secret, tenant_id="acme", answered_by="desk-ann")
    page = await site.open()
    deposit = page.locator('li.pause[data-tool="return-deposit-tool"]')
    await expect(deposit.locator(".claimed")).to_contain_text("handled by desk-ann until")
    await site.env.app.release(secret, tenant_id="acme", answered_by="desk-ann")
    await expect(deposit.locator(".claimed")).to_have_text("")  # the next poll says so
    assert secret not in await page.content()


async def test_a_question_is_handed_on_from_its_card_and_asked_again_there(site: Site) -> None:
    await site.paused()
    page = await site.open()
    card = expense_card(page).first
    await expect(card).to_have_attribute("data-state", "waiting")
    await card.get_by_role("button", name="Hand on").click()
    form = card.locator("form.hand-on")
    await form.get_by_label("Role").select_option("expense-lead-channel")
    await form.get_by_role("button", name="Hand on").click()
    await expect(card.locator(".note")).to_have_text("Say why it is handed on first.")
    await form.get_by_label("Why").fill("the lead decides taxis")
    await form.get_by_role("button", name="Hand on").click()
    await expect(card.locator(".note")).to_have_text(
        "Handed to expense-lead-channel: it is asked there now."
    )
    # Asked again of the lead (the owner, here) under a new id: a card of its own.
    lead = page.locator('li.pause[data-tool="book-expense-tool"]', has_text="expense-lead-channel")
    await expect(lead).to_have_count(1)
    [waiting] = [
        entry
        for entry in (await site.env.app.pending(tenant_id="acme", owner_id="ada")).entries
        if entry.pause.ask.tool == "book-expense-tool"
    ]
    assert waiting.pause.channel == "expense-lead-channel"


async def test_a_delegate_sees_the_owners_question_for_them_and_answers_it(site: Site) -> None:
    await site.paused(then_done=False)
    await site.env.app.delegate("ada", to="bo", granted_by="ada", tenant_id="acme")
    page = await site.open("s-bo")
    card = expense_card(page)
    await expect(card.locator(".for")).to_have_text("for ada")
    await card.get_by_role("button", name="Approve").click()
    await expect(card.locator(".note")).to_contain_text("recorded")
    waiting = (await site.env.app.pending(tenant_id="acme", owner_id="ada")).entries
    assert [entry.pause.ask.tool for entry in waiting] == ["return-deposit-tool"]  # answered


async def test_the_page_lists_the_owners_executions_and_what_each_waits_on(site: Site) -> None:
    paused = await site.paused(then_done=False)
    page = await site.open()
    tree = page.locator(f'li.execution[data-execution="{paused.execution_id}"]')
    await expect(tree.locator(".status")).to_have_text("paused")
    await expect(tree.locator(".waits-on")).to_contain_text("book-expense-tool")
    await expect(tree.locator(".waits-on")).to_contain_text("return-deposit-tool")
    other = await site.paused(owner="bob")  # another owner's tree is not on ada's page
    await page.reload()
    await expect(tree.locator(".status")).to_have_text("paused")
    await expect(
        page.locator(f'li.execution[data-execution="{other.execution_id}"]')
    ).to_have_count(0)


async def test_without_a_session_the_page_says_to_sign_in(site: Site) -> None:
    page = await site.open(session="nobody")
    await expect(page.locator("body")).to_contain_text("not signed in")


async def test_the_demo_serves_the_page_on_loopback_and_finishes_when_it_is_answered(
    tmp_path: Path,
) -> None:
    env = example_env()
    demo = await asyncio.create_subprocess_exec(
        sys.executable,
        "-u",
        "-m",
        "examples.flow_patterns.approvals",
        "--web",
        "--port",
        "0",
        cwd=tmp_path,
        env=env,
        stdout=asyncio.subprocess.PIPE,
    )
    assert demo.stdout is not None
    try:
        link = ""
        while not link.startswith("open http://127.0.0.1:"):
            link = (await asyncio.wait_for(demo.stdout.readline(), 30)).decode()
            assert link, "the demo ended before it served the page"
        url = link.split()[1]
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = await browser.new_page(viewport={"width": 1000, "height": 760})
            await page.goto(url)  # the login link: a session cookie, then the page
            # The link is spent: opened again (a forwarded mail, a browser's history) it signs
            # in no one, and the cookie it set is not the link's token.
            again = await browser.new_page()
            refused = await again.goto(url)
            assert refused is not None
            assert refused.status == 403
            await again.close()
            [cookie] = await page.context.cookies()
            assert cookie["value"] not in url
            assert cookie["httpOnly"]
            deposit = page.locator('li.pause[data-tool="return-deposit-tool"]')
            await expect(deposit).to_contain_text("****3000")  # the IBAN, masked
            assert "DE89 3704" not in await page.content()
            if SCREENSHOTS:
                await page.screenshot(path=f"{SCREENSHOTS}/approvals-page.png", full_page=True)
            # Another lease, the IBAN left as the page shows it (masked): the tool must get
            # the real one.
            await deposit.get_by_role("button", name="Edit arguments").click()
            form = deposit.get_by_role("form", name="Edit the arguments")
            await expect(form.get_by_label("Iban")).to_have_value("****3000")
            await form.get_by_label("Lease Id").fill("L-8")
            await form.get_by_role("button", name="Approve with these arguments").click()
            await expect(deposit.locator(".note")).to_have_text(
                "Approved with lease_id=L-8 — recorded."
            )
            expense = page.locator('li.pause[data-tool="book-expense-tool"]')
            await expense.get_by_label("Reason").fill("not this month")
            await expense.get_by_role("button", name="Reject").click()
            await expect(expense.locator(".note")).to_have_text(
                "Rejected (not this month) — recorded."
            )
            # The demo serves the page a moment longer: it shows that nothing waits any more.
            await expect(page.locator("#status")).to_have_text("0 waiting for you")
            await browser.close()
        out = (await asyncio.wait_for(demo.stdout.read(), 30)).decode()
        assert await asyncio.wait_for(demo.wait(), 30) == 0
    finally:
        if demo.returncode is None:
            demo.kill()
            await demo.wait()
    # The tool got the edited lease, and the real IBAN the page never showed.
    assert "returned the deposit of L-8 to DE89 3704 0044 0532 0130 00" in out
    assert "rejected by user-1: not this month" in out
    assert out.rstrip().endswith("status: completed")


async def test_a_call_that_may_have_run_is_asked_again_as_it_was_without_an_edit_form(
    site: Site,
) -> None:
    result = await site.paused()
    [expense] = [p for p in result.pending if p.ask.tool == "book-expense-tool"]
    assert expense.pause_id is not None
    await cut_off_in_tool(
        site.env, expense.pause_id, site.recorded, owner_id="ada", tenant_id="acme"
    )
    page = await site.open()
    card = expense_card(page)
    await expect(card).to_have_attribute("data-kind", "interrupted")
    await expect(card.get_by_role("heading")).to_have_text(
        "office-agent's call of book-expense-tool may already have run (it was cut off "
        "mid-call). Run it again?"
    )
    await expect(card.locator("table.arguments")).to_contain_text("12.5")  # as it was approved
    await expect(card.get_by_role("button", name="Edit arguments")).to_have_count(0)
    await card.get_by_role("button", name="Run again").click()
    await expect(card.locator(".note")).to_have_text("Approved — recorded.")
    runs = site.recorded.runs
    await eventually(lambda: len(runs) == 2, f"a second run (ran {runs})")
    assert runs == ["book-expense taxi 12.5", "book-expense taxi 12.5"]


async def test_a_question_with_a_deadline_shows_the_time_left_as_it_runs_out(
    deadline_site: Site,
) -> None:
    env = deadline_site.env
    env.mock_llm(deadline_app.RefundAgent).then_return(
        call_tools(tool_call(deadline_app.UrgentRefundTool, order_id="o-1")), DONE
    )
    await env.app.execute(deadline_app.RefundWorkflow, REQUEST, tenant_id="acme", owner_id="ada")
    page = await deadline_site.open()
    card = page.locator('li.pause[data-tool="urgent-refund-tool"]')
    await expect(card.locator(".expires")).to_have_text("expires in 1 h 0 min")
    await env.clock.advance(timedelta(minutes=45))  # the page's next read of the inbox says so
    await expect(card.locator(".expires")).to_have_text("expires in 15 min")


@pytest.mark.parametrize(
    ("tool_cls", "name", "after_the_first"),
    [
        (deadline_app.RemindedRefundTool, "reminded-refund-tool", "reminder in 23 h 0 min"),
        (deadline_app.EscalatingRefundTool, "escalating-refund-tool", "escalation in 23 h 0 min"),
    ],
)
async def test_a_question_on_a_ladder_shows_what_its_next_step_is_and_when(
    deadline_site: Site, tool_cls: type[Any], name: str, after_the_first: str
) -> None:
    env = deadline_site.env
    env.mock_llm(deadline_app.RefundAgent).then_return(
        call_tools(tool_call(tool_cls, order_id="o-1")), DONE
    )
    await env.app.execute(deadline_app.RefundWorkflow, REQUEST, tenant_id="acme", owner_id="ada")
    page = await deadline_site.open()
    card = page.locator(f'li.pause[data-tool="{name}"]')
    await expect(card.locator(".next-step")).to_have_text("reminder in 1 h 0 min")
    await env.clock.advance(timedelta(minutes=45))
    await expect(card.locator(".next-step")).to_have_text("reminder in 15 min")
    await env.clock.advance(timedelta(minutes=15))  # reminded: the next step is a day after
    await expect(card.locator(".next-step")).to_have_text(after_the_first)


@pytest.fixture(params=STORE_KINDS)
async def voting_site(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Site]:
    """The page over an application whose questions take several approvals."""
    from tests.apps import quorum_app

    async for made in site_for(request.param, tmp_path, 250, quorum_app.TreasuryApplication):
        yield made


async def _voted_on_write_off(site: Site, owner: str) -> tuple[Any, Any]:
    """ada signed in approves the write-off asked on ``owner``'s thread (the partners' quorum
    names her): the run and its card."""
    from tests.apps import quorum_app

    env = site.env
    env.mock_llm(quorum_app.TreasuryAgent).then_return(
        call_tools(tool_call(quorum_app.WriteOffTool, order_id="x-1", amount=70)), DONE
    )
    paused = await env.app.execute(
        quorum_app.TreasuryWorkflow, REQUEST, tenant_id="acme", owner_id=owner
    )
    page = await site.open()
    card = page.locator('li.pause[data-tool="write-off-tool"]')
    await expect(card.locator(".votes")).to_have_text("0 of 2 approvals")
    await card.get_by_role("button", name="Approve", exact=True).click()
    await expect(card.locator(".note")).to_have_text(
        "Your vote is recorded (Approved); it waits for the other voters."
    )
    assert site.recorded.runs == []
    return paused, card


async def test_a_vote_shows_the_votes_so_far_and_the_card_waits_for_the_other_voters(
    voting_site: Site,
) -> None:
    paused, card = await _voted_on_write_off(voting_site, "ada")
    await expect(card.locator(".votes")).to_have_text("1 of 2 approvals (ada)")
    [pending] = paused.pending
    assert pending.pause_id is not None
    await voting_site.env.app.resume(
        pending.pause_id,
        decision={"approved": False},
        tenant_id="acme",
        owner_id="bo",
    )
    await expect(card.locator(".votes")).to_have_text("1 of 2 approvals (ada), rejected by bo")


async def test_a_named_voter_sees_a_question_on_another_persons_thread_and_votes(
    voting_site: Site,
) -> None:
    _, card = await _voted_on_write_off(voting_site, "dan")  # ada votes on dan's question
    await expect(card.locator(".votes")).to_have_text("1 of 2 approvals (ada)")
