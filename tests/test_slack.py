"""Slack, end to end: questions posted through the official SDK to a fake Slack on loopback
(`agboss.testing.slack.FakeSlack`, a real HTTP server speaking the Web API), and interactions
posted to the real route (uvicorn on loopback) as Slack posts them, signed."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from slack_sdk.errors import SlackApiError
from starlette.applications import Starlette
from starlette.routing import Mount

from agboss import (
    AgentFailedError,
    ConfigurationError,
    ExecutionOutput,
    ExecutionStatus,
    PauseAnswerer,
    PauseKind,
    PauseStatus,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
)
from agboss.slack import SlackAnswering, SlackWorkspace, slack_router
from agboss.testing import TestEnv, call_tools, invalid_answer, reply_with, tool_call
from agboss.testing.slack import FakeMessage, FakeSlack
from tests.apps import slack_app
from tests.apps.recorded import recording
from tests.apps.slack_app import (
    ESCALATION,
    FINANCE,
    LEADS,
    BookExpenseTool,
    LargeRefundTool,
    RefundAgent,
    RefundCardTool,
    RefundWorkflow,
    SecondRefundAgent,
    SlackApplication,
    SlackRecorder,
    TwoDesksWorkflow,
)
from tests.stores import STORE_KINDS, env_on
from tests.test_web import serve
from tests.waiting import eventually

REQUEST = WorkflowStartTextDto(text="Refund order o-1")
DONE = reply_with(WorkflowFinishTextDto, text="Done.")
MANAGERS = {"U0MANAGER": "manager-17", "U0DEPUTY": "manager-4", "U0CLERK": "clerk-3"}
"""Who the route maps (the desk clerk too: roles say which of them may answer what)."""
GROUPS = {slack_app.FINANCE_GROUP: ["U0MANAGER", "U0DEPUTY"]}
OWNERS = {"U0ADA": "ada", "U0BOB": "bob"}


def answerer(asking: SlackAnswering) -> str | None:
    """Managers answer the refund roles' (channel) pauses; people their own threads'. The desk
    clerk answers the small refunds' role alone: told the question, the mapping refuses them
    any other."""
    if asking.answered_by is PauseAnswerer.THREAD_OWNER:
        return OWNERS.get(asking.user.id)
    if asking.user.id == "U0CLERK" and asking.role != "refund-approval-channel":
        return None
    return MANAGERS.get(asking.user.id)


@dataclass
class Desk:
    env: TestEnv
    slack: FakeSlack
    urls: list[str]  # each instance's interactions route
    recorded: SlackRecorder
    asked: list[SlackAnswering] = field(default_factory=list)
    """What the answerer was asked, in order."""
    results: list[ExecutionOutput] = field(default_factory=list)

    def answerer(self, asking: SlackAnswering) -> str | None:
        """`answerer`, recording what it was asked."""
        self.asked.append(asking)
        return answerer(asking)

    @property
    def url(self) -> str:
        return self.urls[0]

    async def refund_asked(self, **arguments: Any) -> FakeMessage:
        """Runs the refund workflow until its call waits; the question's message."""
        called = {"order_id": "o-1", "amount": 40, **arguments}
        self.env.mock_llm(RefundAgent).then_return(
            call_tools(tool_call(RefundCardTool, **called)), DONE
        )
        result = await self.env.app.execute(RefundWorkflow, REQUEST, owner_id="ada")
        assert result.status is ExecutionStatus.PAUSED
        self.results.append(result)
        [message] = self.slack.messages(FINANCE)
        return message

    async def status_of(self, message: FakeMessage) -> PauseStatus:
        """The status of the pause a message asks (read from its buttons' token)."""
        token = json.loads(_buttons(message)[0]["value"])
        found = await self.env.app.store.pauses.find_with_execution_by_ref(token["t"], token["r"])
        assert found is not None
        return found[0].status

    async def outcome(self) -> ExecutionOutput:
        """The first execution, once it stopped moving."""
        execution_id = self.results[0].execution_id

        async def settled() -> bool:
            found = await self.env.app.get(execution_id)
            return found.status is not ExecutionStatus.RUNNING

        await eventually(settled, "the tree's pass")
        return await self.env.app.get(execution_id, record=True)


def _buttons(message: FakeMessage) -> list[dict[str, Any]]:
    return [e for b in message.blocks if b["type"] == "actions" for e in b["elements"]]


@asynccontextmanager
async def served_desk(
    kind: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    instances: int = 1,
    ack_within: timedelta = timedelta(seconds=2.5),
) -> AsyncIterator[Desk]:
    """The Slack application on a fresh store, its workspace the fake Slack's (from the
    environment, as `SlackWorkspace.from_env` reads it), each instance's route served."""
    recorded = SlackRecorder()
    with FakeSlack(user_groups=GROUPS) as slack:
        monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)
        monkeypatch.setenv("SLACK_API_URL", slack.base_url)
        async with env_on(
            kind,
            tmp_path,
            SlackApplication,
            instances=instances,
            dependencies=recording(recorded),
        ) as env:
            slack.clock = env.clock  # signed on the application's clock, as the route checks
            desk = Desk(env, slack, [], recorded)
            servers = []
            for app in env.apps:
                routes = slack_router(
                    app,
                    signing_secret=slack.signing_secret,
                    answerer=desk.answerer,
                    ack_within=ack_within,
                )
                servers.append(await serve(Starlette(routes=[Mount("/slack", routes)])))
            try:
                desk.urls = [
                    f"http://127.0.0.1:{port}/slack/interactions" for _, _, port in servers
                ]
                yield desk
            finally:
                for server, task, _ in servers:
                    server.should_exit = True
                    await task


@pytest.fixture(params=STORE_KINDS)
async def desk(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Desk]:
    async with served_desk(request.param, tmp_path, monkeypatch) as made:
        yield made


# ---- the question --------------------------------------------------------------------------


async def test_a_question_is_posted_with_its_call_and_buttons_its_id_only_in_their_values(
    desk: Desk,
) -> None:
    message = await desk.refund_asked()
    assert message.buttons() == [
        "Approve",
        "Reject",
        "Reject with reason",
        "Edit",
        "Answer in words",  # the role reads words
        "Claim",  # one answer decides it: a manager may take it on
        "Hand on",  # the leads' role approves refunds too
    ]
    shown = message.text_of_blocks()
    assert "refund-agent asks to run refund-card-tool" in shown
    assert "expires" not in shown  # its role sets no deadline
    assert "*order_id*\no-1" in shown
    assert "*amount*\n40.0" in shown
    # What the question asks, digested: what a click on the message is recorded against.
    digest = desk.results[0].pending[0].ask.digest
    assert digest is not None
    assert f"· digest `{digest[:12]}`" in shown
    token = json.loads(_buttons(message)[0]["value"])
    assert set(token) == {"r", "t", "a", "d"}  # the pause's reference, never its id
    assert token["d"] == digest[:12]  # a click decides the question the message showed
    assert token["r"] == desk.results[0].pending[0].pause_ref
    assert desk.results[0].pending[0].pause_id is None  # a channel pause's id stays with it


async def test_what_a_model_wrote_is_shown_as_text_never_as_a_mention_or_a_link(
    desk: Desk,
) -> None:
    message = await desk.refund_asked(order_id="<!channel> & <https://evil.example|pay>")
    shown = message.text_of_blocks()
    assert "&lt;!channel&gt; &amp; &lt;https://evil.example|pay&gt;" in shown
    assert "<!channel>" not in shown


async def test_an_answer_given_elsewhere_is_shown_on_the_message_by_the_recovery_sweep(
    desk: Desk,
) -> None:
    desk.env.mock_llm(RefundAgent).then_return(
        call_tools(tool_call(BookExpenseTool, purpose="taxi", amount=12.5)), DONE
    )
    result = await desk.env.app.execute(RefundWorkflow, REQUEST, owner_id="ada")
    [message] = desk.slack.messages()
    [pending] = result.pending
    assert pending.pause_id is not None
    done = await desk.env.app.resume(
        pending.pause_id, decision={"approved": True}, owner_id="ada"
    )  # on the approvals page, say: not in Slack
    assert done.status is ExecutionStatus.COMPLETED
    assert desk.slack.message(message.ts).updates == 0
    await desk.env.app.sweep()
    answered = desk.slack.message(message.ts)
    assert answered.updates == 1
    assert answered.buttons() == []
    assert "*Approved* by ada" in answered.text_of_blocks()
    await desk.env.app.sweep()
    assert desk.slack.message(message.ts).updates == 1  # told once


async def test_a_channel_chooses_the_conversation_per_question_from_its_frame(
    desk: Desk,
) -> None:
    desk.env.mock_llm(RefundAgent).then_return(
        call_tools(tool_call(BookExpenseTool, purpose="taxi", amount=12.5)), DONE
    )
    asked_at = desk.env.clock.now()
    await desk.env.app.execute(RefundWorkflow, REQUEST, owner_id="ada")
    [message] = desk.slack.messages()
    assert message.channel == "D-ada"
    assert message.buttons() == ["Approve", "Reject", "Reject with reason", "Edit", "Claim"]
    # Its role's questions expire: the message says when, in each reader's time zone.
    due = int((asked_at + timedelta(days=2)).timestamp())
    assert f"· expires <!date^{due}^" in message.text_of_blocks()


async def test_a_reminder_is_a_reply_in_the_questions_thread_that_says_when_it_expires(
    desk: Desk,
) -> None:
    desk.env.mock_llm(RefundAgent).then_return(
        call_tools(tool_call(BookExpenseTool, purpose="taxi", amount=12.5)), DONE
    )
    asked_at = desk.env.clock.now()
    await desk.env.app.execute(RefundWorkflow, REQUEST, owner_id="ada")
    [message] = desk.slack.messages()
    await desk.env.clock.advance(timedelta(hours=4))
    [reminder] = desk.slack.replies(message.ts)
    assert reminder.channel == "D-ada"
    due = int((asked_at + timedelta(days=2)).timestamp())
    assert reminder.text.startswith("Reminder: this question still waits for an answer.")
    assert f"It expires <!date^{due}^" in reminder.text
    [posted] = desk.slack.calls_of("chat.postMessage")[1:]
    assert posted.arguments["reply_broadcast"] in (True, "true", "1")
    assert desk.slack.message(message.ts).buttons() != []  # the question still waits


async def test_a_question_handed_on_from_its_message_is_taken_back_and_asked_of_the_leads(
    desk: Desk,
) -> None:
    message = await desk.refund_asked()
    await desk.slack.click(desk.url, message, "Hand on", user="U0MANAGER")
    [view] = desk.slack.views
    unsaid = await desk.slack.submit(
        desk.url, view, {"agboss.role": "lead-refund-approval-channel"}
    )
    assert unsaid.json()["errors"] == {"agboss.why": "Say why it is handed on."}
    submitted = await desk.slack.submit(
        desk.url,
        view,
        {"agboss.role": "lead-refund-approval-channel", "agboss.why": "over my limit"},
    )
    assert submitted.status_code == 200
    await eventually(lambda: len(desk.slack.ephemerals) == 1, "where it went")
    [told] = desk.slack.ephemerals
    assert told["text"] == "Handed to lead-refund-approval-channel: it is asked there now."
    taken_back = desk.slack.message(message.ts)
    assert taken_back.buttons() == []
    assert "Reassigned: it was handed to someone else" in taken_back.text_of_blocks()
    [asked] = desk.slack.messages(LEADS)
    await desk.slack.click(desk.url, asked, "Approve", user="U0MANAGER")
    outcome = await desk.outcome()
    assert outcome.status is ExecutionStatus.COMPLETED
    assert outcome.record is not None
    handed = outcome.record.pauses[0]
    assert handed.reassigned is not None
    assert (handed.responder, handed.reassigned.reason) == ("manager-17", "over my limit")


async def test_an_escalated_question_says_so_and_is_asked_of_the_leads_with_new_buttons(
    desk: Desk,
) -> None:
    message = await desk.refund_asked()
    old = _buttons(message)[0]["value"]
    await desk.env.clock.jump(ESCALATION)
    taken_back = desk.slack.message(message.ts)
    assert taken_back.buttons() == []
    assert "Escalated: nobody answered in time, so it was asked of someone else." in (
        taken_back.text_of_blocks()
    )
    [asked] = desk.slack.messages(LEADS)
    assert asked.buttons()[:2] == ["Approve", "Reject"]
    assert _buttons(asked)[0]["value"] != old  # a new pause id: the old buttons answer nothing
    await desk.slack.click(desk.url, asked, "Approve", user="U0MANAGER")
    outcome = await desk.outcome()
    assert outcome.status is ExecutionStatus.COMPLETED


# ---- answering -----------------------------------------------------------------------------


async def test_approve_answers_as_the_mapped_manager_and_the_message_says_who_and_when(
    desk: Desk,
) -> None:
    message = await desk.refund_asked()
    response = await desk.slack.click(desk.url, message, "Approve", user="U0MANAGER")
    assert response.status_code == 200
    await eventually(lambda: desk.slack.message(message.ts).updates == 1, "the update")
    answered = desk.slack.message(message.ts)
    assert answered.buttons() == []
    shown = answered.text_of_blocks()
    assert "*Approved* by <@U0MANAGER>" in shown
    assert "<!date^" in shown  # when, in each reader's own time zone
    assert "*order_id*\no-1" in shown  # the question stays readable
    outcome = await desk.outcome()
    assert outcome.status is ExecutionStatus.COMPLETED
    assert desk.recorded.runs == ["refund o-1 40.0"]
    assert outcome.record is not None
    assert [entry.responder for entry in outcome.record.pauses] == ["manager-17"]
    # The answerer was told who clicked, in which workspace, for which tenant and role.
    asking = desk.asked[-1]
    assert (asking.user.id, asking.user.team_id, asking.user.name) == (
        "U0MANAGER",
        desk.slack.team_id,
        "u0manager",
    )
    assert (asking.tenant_id, asking.answered_by) == ("default", PauseAnswerer.CHANNEL)


async def test_claim_says_on_the_message_who_handles_it_and_only_they_answer(desk: Desk) -> None:
    message = await desk.refund_asked()
    clicked = await desk.slack.click(desk.url, message, "Claim", user="U0MANAGER")
    assert clicked.status_code == 200
    await eventually(lambda: desk.slack.message(message.ts).updates == 1, "the claim shown")
    claimed = desk.slack.message(message.ts)
    assert "Handled by <@U0MANAGER> until <!date^" in claimed.text_of_blocks()
    assert "Claim" not in claimed.buttons()
    assert "Approve" in claimed.buttons()
    await desk.slack.click(desk.url, claimed, "Approve", user="U0DEPUTY")
    await eventually(lambda: len(desk.slack.ephemerals) == 1, "the refusal")
    [told] = desk.slack.ephemerals
    assert told["user"] == "U0DEPUTY"  # told to the other manager alone
    assert told["text"].startswith("Manager-17 handles this question (claimed until")
    assert await desk.status_of(message) is PauseStatus.PENDING
    await desk.slack.click(desk.url, claimed, "Approve", user="U0MANAGER")
    outcome = await desk.outcome()
    assert outcome.status is ExecutionStatus.COMPLETED
    assert outcome.record is not None
    assert [entry.responder for entry in outcome.record.pauses] == ["manager-17"]


async def test_a_delegate_answers_from_slack_what_the_manager_on_leave_claimed(
    desk: Desk,
) -> None:
    message = await desk.refund_asked()
    await desk.slack.click(desk.url, message, "Claim", user="U0MANAGER")
    await eventually(lambda: desk.slack.message(message.ts).updates == 1, "the claim shown")
    await desk.env.app.delegate("manager-17", to="manager-4", granted_by="manager-17")
    await desk.slack.click(desk.url, desk.slack.message(message.ts), "Approve", user="U0DEPUTY")
    await eventually(
        lambda: desk.slack.message(message.ts).updates == 2 or bool(desk.slack.ephemerals),
        "the answer shown, or refused",
    )
    assert desk.slack.ephemerals == []  # taken, not refused
    assert "*Approved* by <@U0DEPUTY>" in desk.slack.message(message.ts).text_of_blocks()
    outcome = await desk.outcome()
    assert outcome.status is ExecutionStatus.COMPLETED
    assert outcome.record is not None
    [entry] = outcome.record.pauses
    assert (entry.responder, entry.on_behalf_of) == ("manager-4", "manager-17")


async def test_reject_with_reason_opens_a_modal_and_the_model_reads_the_reason(
    desk: Desk,
) -> None:
    message = await desk.refund_asked()
    response = await desk.slack.click(desk.url, message, "Reject with reason", user="U0MANAGER")
    assert response.status_code == 200
    [view] = desk.slack.views
    assert view.user == "U0MANAGER"
    assert await desk.status_of(message) is PauseStatus.PENDING  # a modal answers nothing yet
    submitted = await desk.slack.submit(desk.url, view, {"agboss.reason": "a duplicate order"})
    assert submitted.status_code == 200
    assert submitted.content == b""  # the modal closes
    await eventually(lambda: desk.slack.message(message.ts).updates == 1, "the update")
    shown = desk.slack.message(message.ts).text_of_blocks()
    assert "*Rejected* by <@U0MANAGER>" in shown
    assert "Reason: a duplicate order" in shown
    assert (await desk.outcome()).status is ExecutionStatus.COMPLETED
    assert desk.recorded.runs == []
    read = desk.env.mock_llm(RefundAgent).requests[-1].messages[-1].content
    assert "rejected by manager-17: a duplicate order" in str(read)


async def test_edit_shows_the_arguments_refuses_an_invalid_one_on_its_field_then_approves(
    desk: Desk,
) -> None:
    message = await desk.refund_asked()
    await desk.slack.click(desk.url, message, "Edit", user="U0MANAGER")
    [view] = desk.slack.views
    assert view.initial_values() == {
        "field.order_id": "o-1",
        "field.amount": "40.0",
        "field.express": "false",
    }
    not_a_number = await desk.slack.submit(desk.url, view, {"amount": "forty"})
    assert not_a_number.json() == {
        "response_action": "errors",
        "errors": {"field.amount": "'forty' is not a number"},
    }
    negative = await desk.slack.submit(desk.url, view, {"amount": "-5"})
    errors = negative.json()["errors"]
    assert list(errors) == ["field.amount"]
    assert "greater than 0" in errors["field.amount"]
    assert await desk.status_of(message) is PauseStatus.PENDING  # refused: still waiting
    assert desk.slack.message(message.ts).updates == 0
    valid = await desk.slack.submit(desk.url, view, {"amount": "25", "express": "true"})
    assert valid.status_code == 200
    assert valid.content == b""
    await eventually(lambda: desk.slack.message(message.ts).updates == 1, "the update")
    shown = desk.slack.message(message.ts).text_of_blocks()
    assert "Changed *amount*: 40.0 → 25.0" in shown
    assert "Changed *express*: false → true" in shown
    assert (await desk.outcome()).status is ExecutionStatus.COMPLETED
    assert desk.recorded.runs == ["refund o-1 25.0"]


async def test_an_answer_in_words_is_read_by_the_roles_interpreter_unread_words_on_the_modal(
    desk: Desk,
) -> None:
    message = await desk.refund_asked()
    await desk.slack.click(desk.url, message, "Answer in words", user="U0DEPUTY")
    [view] = desk.slack.views
    unread = await desk.slack.submit(desk.url, view, {"agboss.words": "hmm, maybe"})
    assert unread.json()["response_action"] == "errors"
    assert "say ok, or ok but half" in unread.json()["errors"]["agboss.words"]
    assert await desk.status_of(message) is PauseStatus.PENDING
    read = await desk.slack.submit(desk.url, view, {"agboss.words": "ok, but only half"})
    assert read.status_code == 200
    await eventually(lambda: desk.slack.message(message.ts).updates == 1, "the update")
    shown = desk.slack.message(message.ts).text_of_blocks()
    assert "*Approved* by <@U0DEPUTY>" in shown
    assert "In their words: “ok, but only half”" in shown
    assert "Changed *amount*: 40.0 → 20.0" in shown
    assert (await desk.outcome()).status is ExecutionStatus.COMPLETED
    assert desk.recorded.runs == ["refund o-1 20.0"]


async def test_an_answer_still_being_read_is_acknowledged_in_time_and_shown_once_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with served_desk(
        "sqlite", tmp_path, monkeypatch, ack_within=timedelta(milliseconds=200)
    ) as desk:
        desk.recorded.gate = asyncio.Event()
        message = await desk.refund_asked()
        await desk.slack.click(desk.url, message, "Answer in words", user="U0MANAGER")
        [view] = desk.slack.views
        response = await desk.slack.submit(desk.url, view, {"agboss.words": "slowly ok"})
        # Acknowledged while the interpreter still reads: Slack would have given up at 3 s.
        assert response.status_code == 200
        assert desk.slack.message(message.ts).updates == 0
        desk.recorded.gate.set()
        await eventually(lambda: desk.slack.message(message.ts).updates == 1, "the update")
        assert "*Approved* by <@U0MANAGER>" in desk.slack.message(message.ts).text_of_blocks()
        assert (await desk.outcome()).status is ExecutionStatus.COMPLETED


# ---- refused ---------------------------------------------------------------------------------


async def test_a_double_click_answers_once_and_a_retried_delivery_changes_nothing_more(
    desk: Desk,
) -> None:
    message = await desk.refund_asked()
    payload = desk.slack.click_payload(message, "Approve", user="U0MANAGER")
    other_tab = desk.slack.click_payload(message, "Approve", user="U0MANAGER")
    first = await desk.slack.post(desk.url, payload)
    again = await desk.slack.post(desk.url, payload, retry=1)  # Slack's retried delivery
    assert (first.status_code, again.status_code) == (200, 200)
    await eventually(lambda: desk.slack.message(message.ts).updates == 1, "the update")
    assert (await desk.outcome()).status is ExecutionStatus.COMPLETED
    assert desk.recorded.runs == ["refund o-1 40.0"]
    # A second click on the stale buttons (another tab): the same answer repeats the receipt.
    second = await desk.slack.post(desk.url, other_tab)
    assert second.status_code == 200
    await asyncio.sleep(0.1)
    assert desk.slack.message(message.ts).updates == 1
    assert desk.slack.ephemerals == []


async def test_a_click_on_a_question_answered_otherwise_is_told_to_the_clicker_alone(
    desk: Desk,
) -> None:
    message = await desk.refund_asked()
    stale = desk.slack.click_payload(message, "Reject", user="U0DEPUTY")
    await desk.slack.click(desk.url, message, "Approve", user="U0MANAGER")
    await eventually(lambda: desk.slack.message(message.ts).updates == 1, "the update")
    response = await desk.slack.post(desk.url, stale)
    assert response.status_code == 200
    await eventually(lambda: len(desk.slack.ephemerals) == 1, "the refusal")
    [told] = desk.slack.ephemerals
    assert told["user"] == "U0DEPUTY"
    assert told["channel"] == FINANCE
    assert "no longer waits" in told["text"]
    assert desk.slack.message(message.ts).updates == 1  # the message untouched
    assert "*Approved* by <@U0MANAGER>" in desk.slack.message(message.ts).text_of_blocks()


async def test_a_click_on_a_message_that_shows_another_question_decides_nothing(
    desk: Desk,
) -> None:
    message = await desk.refund_asked()
    click = desk.slack.click_payload(message, "Approve", user="U0MANAGER")
    [action] = click["actions"]
    shown = json.loads(action["value"])
    # The message showed another question than the one that waits now.
    action["value"] = json.dumps({**shown, "d": "0" * 12})
    response = await desk.slack.post(desk.url, click)
    assert response.status_code == 200
    await eventually(lambda: len(desk.slack.ephemerals) == 1, "the refusal")
    [told] = desk.slack.ephemerals
    assert told["user"] == "U0MANAGER"
    assert "question" in told["text"]
    assert "000000000000" in told["text"]
    pending = (await desk.env.app.get(desk.results[0].execution_id)).pending
    assert [p.pause_ref for p in pending] == [shown["r"]]  # it waits, undecided
    assert desk.recorded.runs == []


async def test_a_vote_that_leaves_the_question_waiting_is_told_to_the_voter_alone(
    desk: Desk,
) -> None:
    desk.env.mock_llm(RefundAgent).then_return(
        call_tools(tool_call(LargeRefundTool, order_id="o-9", amount=9000)), DONE
    )
    desk.results.append(await desk.env.app.execute(RefundWorkflow, REQUEST, owner_id="ada"))
    [message] = desk.slack.messages(FINANCE)
    await desk.slack.click(desk.url, message, "Approve", user="U0MANAGER")
    await eventually(lambda: len(desk.slack.ephemerals) == 1, "the vote's note")
    [told] = desk.slack.ephemerals
    assert told["user"] == "U0MANAGER"
    assert told["text"] == (
        "Your vote is counted: 1 of the 2 approvals it needs. "
        "The question waits for the other voters."
    )
    assert desk.slack.message(message.ts).updates == 0  # its buttons stay for the others
    assert await desk.status_of(message) is PauseStatus.PENDING
    await desk.slack.click(desk.url, message, "Approve", user="U0MANAGER")  # again: a repeat
    await desk.slack.click(desk.url, message, "Approve", user="U0DEPUTY")
    # The deciding vote's tree moves once its lease is taken, after the acknowledgement.
    await eventually(lambda: desk.recorded.runs == ["large refund o-9 9000.0"], "the refund")
    assert (await desk.outcome()).status is ExecutionStatus.COMPLETED
    await eventually(lambda: desk.slack.message(message.ts).updates == 1, "the update")
    assert "*Approved* by <@U0DEPUTY>" in desk.slack.message(message.ts).text_of_blocks()
    assert len(desk.slack.ephemerals) == 1


async def test_the_answerer_is_told_the_question_and_may_refuse_a_user_for_it(
    desk: Desk,
) -> None:
    message = await desk.refund_asked()
    await desk.slack.click(desk.url, message, "Approve", user="U0CLERK")
    asking = desk.asked[-1]
    assert (asking.role, asking.channel, asking.tool, asking.owner_id, asking.kind) == (
        "refund-approval-channel",
        "refund-approval-channel",
        "refund-card-tool",
        "ada",
        PauseKind.APPROVAL,
    )
    assert (await desk.outcome()).status is ExecutionStatus.COMPLETED  # the clerk's to answer
    desk.env.mock_llm(RefundAgent).then_return(
        call_tools(tool_call(LargeRefundTool, order_id="o-9", amount=9000)), DONE
    )
    await desk.env.app.execute(RefundWorkflow, REQUEST, owner_id="ada")
    large = desk.slack.messages(FINANCE)[-1]
    desk.slack.user_groups[slack_app.FINANCE_GROUP].append("U0CLERK")  # let past the group
    await desk.slack.click(desk.url, large, "Approve", user="U0CLERK")
    await eventually(lambda: len(desk.slack.ephemerals) == 1, "the refusal")
    assert desk.asked[-1].role == "large-refund-approval-channel"
    [told] = desk.slack.ephemerals
    assert told["user"] == "U0CLERK"
    assert "not allowed to answer this question" in told["text"]
    assert await desk.status_of(large) is PauseStatus.PENDING
    assert large.buttons()[:2] == ["Approve", "Reject"]


async def test_a_role_names_who_in_slack_may_vote_and_a_clerk_casts_no_vote(
    desk: Desk,
) -> None:
    desk.env.mock_llm(RefundAgent).then_return(
        call_tools(tool_call(LargeRefundTool, order_id="o-9", amount=9000)), DONE
    )
    desk.results.append(await desk.env.app.execute(RefundWorkflow, REQUEST, owner_id="ada"))
    [message] = desk.slack.messages(FINANCE)
    assert "Claim" not in message.buttons()  # several approve it: each voter answers
    await desk.slack.click(desk.url, message, "Approve", user="U0MANAGER")
    asked = len(desk.asked)
    # The clerk is mapped by the route, but not in the role's group: refused before the
    # answerer is asked, nothing recorded — the deciding vote is not theirs to cast.
    clicked = await desk.slack.click(desk.url, message, "Approve", user="U0CLERK")
    assert clicked.status_code == 200
    await eventually(lambda: len(desk.slack.ephemerals) == 2, "the refusal")
    told = desk.slack.ephemerals[-1]
    assert told["user"] == "U0CLERK"
    assert "answered by the people its channel names, not by you" in told["text"].lower()
    assert len(desk.asked) == asked
    found = await desk.env.app.store.pauses.find_with_execution_by_ref(
        "default", json.loads(_buttons(message)[0]["value"])["r"]
    )
    assert found is not None
    votes = found[0].votes
    assert votes is not None
    assert [vote.voter for vote in votes.votes] == ["manager-17"]
    assert desk.slack.message(message.ts).updates == 0  # its buttons stay for the others
    # A form is refused before it opens, too.
    await desk.slack.click(desk.url, message, "Reject with reason", user="U0CLERK")
    await eventually(lambda: len(desk.slack.ephemerals) == 3, "the second refusal")
    assert desk.slack.views == []
    await desk.slack.click(desk.url, message, "Approve", user="U0DEPUTY")
    await eventually(lambda: desk.recorded.runs == ["large refund o-9 9000.0"], "the refund")
    outcome = await desk.outcome()
    assert outcome.record is not None
    [entry] = outcome.record.pauses
    assert [vote.voter for vote in entry.votes] == ["manager-17", "manager-4"]


async def test_a_role_that_names_users_refuses_another_mapped_manager(desk: Desk) -> None:
    message = await desk.refund_asked()
    await desk.env.clock.jump(ESCALATION)  # asked of the leads: the lead alone answers
    [asked] = desk.slack.messages(LEADS)
    await desk.slack.click(desk.url, asked, "Approve", user="U0DEPUTY")
    await eventually(lambda: len(desk.slack.ephemerals) == 1, "the refusal")
    assert desk.slack.ephemerals[0]["user"] == "U0DEPUTY"
    assert await desk.status_of(asked) is PauseStatus.PENDING
    await desk.slack.click(desk.url, asked, "Approve", user="U0MANAGER")
    assert (await desk.outcome()).status is ExecutionStatus.COMPLETED
    assert message.ts != asked.ts


def test_a_slack_channels_answerers_are_checked_where_they_are_written() -> None:
    with pytest.raises(ConfigurationError, match="allowed_users must be a set of Slack ids"):

        class Wrong(slack_app.SlackRefundApprovalChannel):
            allowed_users = "U0MANAGER"  # type: ignore[assignment]


async def test_an_unmapped_user_is_refused_alone_and_the_question_keeps_waiting(
    desk: Desk,
) -> None:
    message = await desk.refund_asked()
    clicked = await desk.slack.click(desk.url, message, "Approve", user="U0STRANGER")
    assert clicked.status_code == 200
    await desk.slack.click(desk.url, message, "Edit", user="U0STRANGER")
    await eventually(lambda: len(desk.slack.ephemerals) == 2, "the refusals")
    for told in desk.slack.ephemerals:
        assert told["user"] == "U0STRANGER"
        assert told["text"].startswith("Your Slack account is not allowed to answer")
    assert desk.slack.views == []  # no form to fill in for nothing
    assert desk.slack.message(message.ts).updates == 0
    assert await desk.status_of(message) is PauseStatus.PENDING


async def test_a_thread_owners_question_is_answered_by_the_owner_alone(desk: Desk) -> None:
    desk.env.mock_llm(RefundAgent).then_return(
        call_tools(tool_call(BookExpenseTool, purpose="taxi", amount=12.5)), DONE
    )
    desk.results.append(await desk.env.app.execute(RefundWorkflow, REQUEST, owner_id="ada"))
    [message] = desk.slack.messages()
    await desk.slack.click(desk.url, message, "Approve", user="U0BOB")  # another owner
    await eventually(lambda: len(desk.slack.ephemerals) == 1, "the refusal")
    assert desk.slack.ephemerals[0]["text"].startswith("Only the person whose conversation")
    await desk.slack.click(desk.url, message, "Approve", user="U0MANAGER")  # not an owner
    await eventually(lambda: len(desk.slack.ephemerals) == 2, "the refusal")
    await desk.slack.click(desk.url, message, "Approve", user="U0ADA")
    assert (await desk.outcome()).status is ExecutionStatus.COMPLETED
    assert desk.recorded.runs == ["expense taxi 12.5"]
    # The message is updated once the click's answer is recorded, beside the tree's move.
    await eventually(lambda: desk.slack.message(message.ts).updates == 1, "the update")


async def test_a_forged_signature_is_refused_and_answers_nothing(desk: Desk) -> None:
    message = await desk.refund_asked()
    forged = await desk.slack.click(
        desk.url, message, "Approve", user="U0MANAGER", signing_secret="not-the-secret"
    )
    assert forged.status_code == 401
    assert forged.json()["code"] == "slack.bad-signature"
    unsigned = await _unsigned(desk, message)
    assert unsigned.status_code == 401
    assert await desk.status_of(message) is PauseStatus.PENDING
    assert desk.slack.ephemerals == []


async def _unsigned(desk: Desk, message: FakeMessage) -> Any:
    import httpx

    payload = desk.slack.click_payload(message, "Approve", user="U0MANAGER")
    async with httpx.AsyncClient() as http:
        return await http.post(desk.url, data={"payload": json.dumps(payload)})


async def test_a_request_older_than_five_minutes_is_a_replay_and_is_refused(desk: Desk) -> None:
    message = await desk.refund_asked()
    now = int(desk.env.clock.now().timestamp())
    old = await desk.slack.click(
        desk.url, message, "Approve", user="U0MANAGER", timestamp=now - 301
    )
    assert old.status_code == 401
    assert old.json()["code"] == "slack.stale-request"
    assert await desk.status_of(message) is PauseStatus.PENDING
    within = await desk.slack.click(
        desk.url, message, "Approve", user="U0MANAGER", timestamp=now - 299
    )
    assert within.status_code == 200


async def test_a_body_that_is_no_interaction_is_a_problem_and_another_apps_click_is_ignored(
    desk: Desk,
) -> None:
    import httpx

    body = b"not a form at all"
    async with httpx.AsyncClient() as http:
        unreadable = await http.post(desk.url, content=body, headers=desk.slack.signed(body))
    assert unreadable.status_code == 400
    assert unreadable.json()["code"] == "web.unreadable"
    other = await desk.slack.post(desk.url, {"type": "shortcut", "callback_id": "theirs"})
    assert other.status_code == 200


async def test_every_hostile_request_is_a_problem_with_a_code_never_a_500(
    desk: Desk, caplog: pytest.LogCaptureFixture
) -> None:
    import httpx

    message = await desk.refund_asked()
    payload = json.dumps(desk.slack.click_payload(message, "Approve", user="U0MANAGER"))
    good = urlencode({"payload": payload}).encode()
    signed = desk.slack.signed(good)
    deep = urlencode({"payload": "[" * 5000 + "]" * 5000}).encode()
    nested = {
        "type": "view_submission",
        "user": {"id": "U0MANAGER"},
        "view": {"callback_id": "agboss.reason", "private_metadata": "[" * 2900 + "]" * 2900},
    }
    deep_metadata = urlencode({"payload": json.dumps(nested)}).encode()
    sent: list[tuple[bytes, dict[str, str]]] = [
        (good, {**signed, "X-Slack-Request-Timestamp": "²³"}),  # digits to str.isdigit
        (good, {**signed, "X-Slack-Request-Timestamp": "9" * 5000}),
        (good, {**signed, "X-Slack-Signature": "v0=é" + "0" * 60}),
        (b"\xff\xfe" + good, desk.slack.signed(b"")),  # not UTF-8
        (deep, desk.slack.signed(deep)),
        (deep_metadata, desk.slack.signed(deep_metadata)),
    ]
    caplog.set_level(logging.ERROR)
    async with httpx.AsyncClient() as http:
        for body, headers in sent:
            sent_headers = {"Content-Type": "application/x-www-form-urlencoded", **headers}
            response = await http.post(
                desk.url,
                content=body,
                headers={name: value.encode() for name, value in sent_headers.items()},
            )
            assert response.status_code in (200, 400, 401), (headers, response.text)
            if response.status_code != 200:  # a modal that is not ours is acknowledged
                assert response.headers["content-type"] == "application/problem+json"
                assert response.json()["code"].startswith(("slack.", "web.unreadable"))
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert await desk.status_of(message) is PauseStatus.PENDING


# ---- taken back ----------------------------------------------------------------------------


async def test_a_question_a_failfast_sibling_withdrew_says_so_once_its_buttons_gone(
    desk: Desk,
) -> None:
    desk.env.mock_llm(RefundAgent).then_return(
        call_tools(tool_call(RefundCardTool, order_id="o-1", amount=40)), DONE
    )
    desk.env.mock_llm(SecondRefundAgent).then_return(
        call_tools(tool_call(RefundCardTool, order_id="o-2", amount=9)),
        invalid_answer(nonsense=True),  # fails once its question is answered
    )
    result = await desk.env.app.execute(TwoDesksWorkflow, REQUEST, owner_id="ada")
    desk.results.append(result)
    assert len(result.pending) == 2
    first, second = sorted(desk.slack.messages(), key=lambda m: m.text_of_blocks())
    assert "o-1" in first.text_of_blocks()
    stale = desk.slack.click_payload(first, "Approve", user="U0MANAGER")
    await desk.slack.click(desk.url, second, "Approve", user="U0MANAGER")
    outcome = await desk.outcome()
    assert outcome.output == WorkflowFinishTextDto(text="a refund desk failed")
    withdrawn = desk.slack.message(first.ts)
    assert withdrawn.updates == 1
    assert withdrawn.buttons() == []
    assert "No longer needed" in withdrawn.text_of_blocks()
    assert "*order_id*\no-1" in withdrawn.text_of_blocks()
    await desk.slack.post(desk.url, stale)  # a click on the buttons a stale screen still shows
    await eventually(lambda: len(desk.slack.ephemerals) == 1, "the refusal")
    assert "no longer waits" in desk.slack.ephemerals[0]["text"]
    assert desk.slack.message(first.ts).updates == 1
    assert desk.recorded.runs == ["refund o-2 9.0"]


async def test_a_cancelled_question_says_so_its_buttons_gone(desk: Desk) -> None:
    message = await desk.refund_asked()
    await desk.env.app.cancel(desk.results[0].thread_id)
    cancelled = desk.slack.message(message.ts)
    assert cancelled.updates == 1
    assert cancelled.buttons() == []
    assert "Cancelled" in cancelled.text_of_blocks()
    [update] = desk.slack.calls_of("chat.update")
    assert (update.arguments["channel"], update.arguments["ts"]) == (FINANCE, message.ts)


# ---- several instances -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_two_instances_answer_two_questions_of_one_tree_at_once(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with served_desk(kind, tmp_path, monkeypatch, instances=2) as desk:
        desk.env.mock_llm(RefundAgent).then_return(
            call_tools(tool_call(RefundCardTool, order_id="o-1", amount=40)), DONE
        )
        desk.env.mock_llm(SecondRefundAgent).then_return(
            call_tools(tool_call(RefundCardTool, order_id="o-2", amount=9)), DONE
        )
        desk.results.append(await desk.env.app.execute(TwoDesksWorkflow, REQUEST, owner_id="ada"))
        first, second = desk.slack.messages()
        clicks = await asyncio.gather(
            desk.slack.click(desk.urls[0], first, "Approve", user="U0MANAGER"),
            desk.slack.click(desk.urls[1], second, "Approve", user="U0DEPUTY"),
        )
        assert [c.status_code for c in clicks] == [200, 200]
        outcome = await desk.outcome()
        assert outcome.status is ExecutionStatus.COMPLETED
        assert outcome.output == WorkflowFinishTextDto(text="Done. | Done.")
        assert sorted(desk.recorded.runs) == ["refund o-1 40.0", "refund o-2 9.0"]
        for message in (first, second):
            await eventually(lambda m=message: desk.slack.message(m.ts).updates == 1, "updates")
        assert outcome.record is not None
        assert sorted(e.responder or "" for e in outcome.record.pauses) == [
            "manager-17",
            "manager-4",
        ]


# ---- wiring ----------------------------------------------------------------------------------


async def test_a_slack_that_refuses_the_token_fails_the_asking_step_with_the_sdks_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with served_desk("sqlite", tmp_path, monkeypatch) as desk:
        desk.slack.token = "xoxb-another"  # the app's token is no longer accepted
        desk.env.mock_llm(RefundAgent).then_return(
            call_tools(tool_call(RefundCardTool, order_id="o-1", amount=40)), DONE
        )
        with pytest.raises(AgentFailedError, match="invalid_auth") as caught:
            await desk.env.app.execute(RefundWorkflow, REQUEST, owner_id="ada")
        assert isinstance(caught.value.__cause__, SlackApiError)
        assert desk.recorded.runs == []


def test_the_workspace_from_the_environment_needs_a_bot_token() -> None:
    with pytest.raises(ConfigurationError, match="SLACK_BOT_TOKEN is not set"):
        SlackWorkspace.from_env({})
    found = SlackWorkspace.from_env(
        {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_CONVERSATION": "C1", "SLACK_API_URL": "http://x/"}
    )
    assert (found.conversation, found.client.base_url) == ("C1", "http://x/")
    with pytest.raises(ConfigurationError, match="AsyncWebClient"):
        SlackWorkspace(object())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"signing_secret": " "}, "signing secret"),
        ({"answerer": 42}, "answerer="),
        ({"ack_within": timedelta(seconds=3)}, "under Slack's 3 seconds"),
        ({"max_body": 0}, "max_body=0"),
        ({"workspace": "C1"}, "SlackWorkspace"),
    ],
)
def test_the_route_refuses_its_wrong_settings_where_they_are_written(
    options: dict[str, Any], said: str
) -> None:
    settings: dict[str, Any] = {"signing_secret": "s", "answerer": {}, **options}
    with pytest.raises(ConfigurationError, match=said):
        slack_router(lambda: None, **settings)


async def test_a_channel_with_no_conversation_fails_its_step_saying_where_to_name_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(slack_app.SlackRefundApprovalChannel, "conversation", None)
    async with served_desk("sqlite", tmp_path, monkeypatch) as desk:
        desk.env.mock_llm(RefundAgent).then_return(
            call_tools(tool_call(RefundCardTool, order_id="o-1", amount=40)), DONE
        )
        with pytest.raises(AgentFailedError, match="no conversation to post in"):
            await desk.env.app.execute(RefundWorkflow, REQUEST, owner_id="ada")


async def test_a_form_slack_did_not_open_is_told_to_the_clicker_who_clicks_again(
    desk: Desk,
) -> None:
    message = await desk.refund_asked()
    payload = desk.slack.click_payload(message, "Edit", user="U0MANAGER")
    await desk.slack.post(desk.url, payload)
    await desk.slack.post(desk.url, payload)  # its trigger id is spent: Slack opens nothing
    await eventually(lambda: len(desk.slack.ephemerals) == 1, "the refusal")
    assert desk.slack.ephemerals[0]["text"].startswith("The form did not open")
    assert len(desk.slack.views) == 1
    assert await desk.status_of(message) is PauseStatus.PENDING


async def test_an_answerer_that_crashes_is_logged_and_the_clicker_told_nothing_was_recorded(
    desk: Desk, caplog: pytest.LogCaptureFixture
) -> None:
    message = await desk.refund_asked()

    def broken(asking: SlackAnswering) -> str | None:
        raise RuntimeError("the directory is down")

    routes = slack_router(desk.env.app, signing_secret=desk.slack.signing_secret, answerer=broken)
    server, task, port = await serve(Starlette(routes=[Mount("/slack", routes)]))
    try:
        url = f"http://127.0.0.1:{port}/slack/interactions"
        assert (
            await desk.slack.click(url, message, "Approve", user="U0MANAGER")
        ).status_code == 200
        await eventually(lambda: len(desk.slack.ephemerals) == 1, "the refusal")
    finally:
        server.should_exit = True
        await task
    assert desk.slack.ephemerals[0]["text"].startswith("The answer failed on the server")
    assert any("the directory is down" in str(r.exc_info) for r in caplog.records if r.exc_info)
    assert await desk.status_of(message) is PauseStatus.PENDING


@pytest.mark.parametrize(
    ("found", "status", "code"),
    [(None, 503, "web.app-not-open"), ("not an app", 500, "config.invalid")],
)
async def test_a_route_whose_host_has_no_open_app_answers_a_problem(
    found: object, status: int, code: str
) -> None:
    import httpx

    routes = slack_router(lambda: found, signing_secret="s", answerer={})  # type: ignore[arg-type,return-value]
    server, task, port = await serve(Starlette(routes=[Mount("/slack", routes)]))
    try:
        async with httpx.AsyncClient() as http:
            response = await http.post(f"http://127.0.0.1:{port}/slack/interactions", content=b"")
    finally:
        server.should_exit = True
        await task
    assert (response.status_code, response.json()["code"]) == (status, code)
