"""PII policies: what models see, what pending / records / channels keep, what is refused."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import phonenumbers
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agboss import (
    AssemblyError,
    ExecutionStatus,
    Pii,
    PiiKind,
    PiiRefusedError,
    PiiRule,
    ToolCallApprovalDecisionDto,
    UninterpretableReplyError,
    WorkflowFinishTextDto,
    application,
    mask,
    provide,
    replace_with_token,
)
from agboss.models import ChatRequest, MessageRole
from agboss.pii._detect import DETECTORS
from agboss.testing import TestEnv, call_tools, reply_with, test_with, tool_call
from tests.apps import pii_app
from tests.apps.pii_app import (
    CARD,
    EMAIL,
    IBAN,
    OTHER_IBAN,
    CustomerDto,
    LookupTool,
    MessageWorkflow,
    PiiApplication,
    PiiRecorder,
    RefundAgent,
    RefundReplyInterpreter,
    RefundTool,
    RefundWorkflow,
    StrictMessageWorkflow,
    TextAgent,
)
from tests.apps.recorded import recording
from tests.stores import store_url
from tests.waiting import eventually

CUSTOMER = CustomerDto(order_id="o-7", iban=IBAN, note="")
DONE = reply_with(WorkflowFinishTextDto, text="done")


pytestmark = pytest.mark.application.with_args(PiiApplication)


def sent(requests: list[Any]) -> str:
    """Everything the model was sent: each message's text and each tool call's arguments."""
    parts = []
    for request in requests:
        assert isinstance(request, ChatRequest)
        for message in request.messages:
            parts.append(message.content)
            parts += [call.arguments for call in message.tool_calls]
    return "\n".join(parts)


# ---- what models see ---------------------------------------------------------------------


async def test_a_marked_field_reaches_the_model_as_a_token_and_the_tool_gets_the_real_value(
    env: TestEnv,
    recorded: PiiRecorder,
) -> None:
    script = env.mock_llm(RefundAgent).then_return(
        call_tools(tool_call(LookupTool, order_id="o-7", iban="<IBAN_1>")), DONE
    )
    result = await env.app.execute(RefundWorkflow, CUSTOMER, owner_id="u")
    assert result.status is ExecutionStatus.COMPLETED
    assert [f"lookup o-7 {IBAN}"] == recorded.runs  # revealed before validation
    text = sent(script.requests)
    assert IBAN not in text
    assert "<IBAN_1>" in text
    # The tool's result holds another IBAN, in a marked field: the model reads a new token.
    [tool_message] = [
        m.content
        for m in script.requests[1].messages
        if m.role is MessageRole.TOOL  # type: ignore[union-attr]
    ]
    assert OTHER_IBAN not in tool_message
    assert "<IBAN_2>" in tool_message


async def test_free_text_is_searched_by_the_detectors_of_the_rules_in_force(env: TestEnv) -> None:
    script = env.mock_llm(TextAgent).then_return(DONE)
    grouped = " ".join(IBAN[start : start + 4] for start in range(0, len(IBAN), 4))
    message = f"Refund to {grouped}, mail {EMAIL}"
    await env.app.execute(MessageWorkflow, {"text": message}, owner_id="u")
    text = sent(script.requests)
    assert EMAIL not in text
    assert "****.org" in text  # mask(): the last four characters
    assert "<IBAN_1>" in text
    assert "DE89 3704" not in text


async def test_a_value_a_refusal_rule_covers_never_reaches_a_model(env: TestEnv) -> None:
    script = env.mock_llm(TextAgent).then_return(DONE)
    with pytest.raises(PiiRefusedError) as refused:
        await env.app.execute(MessageWorkflow, {"text": f"my card is {CARD}"}, owner_id="u")
    assert refused.value.code == "pii.refused"
    assert script.requests == []  # the model was never called


async def test_a_workflows_rule_replaces_the_applications_for_its_executions(
    env: TestEnv,
) -> None:
    env.mock_llm(TextAgent).then_return(DONE)
    with pytest.raises(PiiRefusedError):  # the application masks e-mails; this workflow refuses
        await env.app.execute(StrictMessageWorkflow, {"text": f"mail {EMAIL}"}, owner_id="u")
    done = await env.app.execute(MessageWorkflow, {"text": f"mail {EMAIL}"}, owner_id="u")
    assert done.status is ExecutionStatus.COMPLETED


async def test_a_token_nobody_issued_is_a_tool_error_and_the_tool_never_runs(
    env: TestEnv,
    recorded: PiiRecorder,
) -> None:
    script = env.mock_llm(RefundAgent).then_return(
        call_tools(tool_call(LookupTool, order_id="o-7", iban="<IBAN_9>")), DONE
    )
    await env.app.execute(RefundWorkflow, CUSTOMER, owner_id="u")
    assert recorded.runs == []
    [tool_message] = [
        m.content
        for m in script.requests[1].messages
        if m.role is MessageRole.TOOL  # type: ignore[union-attr]
    ]
    assert "<IBAN_9>, a token nobody issued" in tool_message


async def test_a_token_survives_a_pause_and_a_restart(
    kind: str, tmp_path: Path, recorded: PiiRecorder
) -> None:
    recorded = PiiRecorder()
    async with store_url(kind, tmp_path) as url:
        async with test_with(PiiApplication, store=url, dependencies=recording(recorded)) as first:
            first.mock_llm(RefundAgent).then_return(
                call_tools(tool_call(RefundTool, order_id="o-7", iban="<IBAN_1>")), DONE
            )
            paused = await first.app.execute(RefundWorkflow, CUSTOMER, owner_id="u")
        [pause] = paused.pending
        assert pause.pause_id is not None
        async with test_with(  # a new process
            PiiApplication, store=url, dependencies=recording(recorded)
        ) as second:
            # The journaled turn is replayed here: its token is read back from the store.
            second.mock_llm(RefundAgent).then_return(DONE)
            done = await second.app.resume(
                pause.pause_id, decision={"approved": True}, owner_id="u"
            )
    assert done.status is ExecutionStatus.COMPLETED
    assert [f"refund o-7 to {IBAN}"] == recorded.runs


# ---- what leaves the process ---------------------------------------------------------------


async def test_the_inbox_shows_what_was_asked_masked(env: TestEnv) -> None:
    env.mock_llm(RefundAgent).then_return(
        call_tools(tool_call(RefundTool, order_id="o-7", iban="<IBAN_1>")), DONE
    )
    await env.app.execute(RefundWorkflow, CUSTOMER, owner_id="u")
    [entry] = (await env.app.pending(owner_id="u")).entries
    assert entry.request == {"order_id": "o-7", "iban": "****3000", "note": "", "name": ""}


async def refund_paused(env: TestEnv) -> str:
    """The id of the refund's pause, its call made with the customer's IBAN as a token."""
    env.mock_llm(RefundAgent).then_return(
        call_tools(tool_call(RefundTool, order_id="o-7", iban="<IBAN_1>")), DONE
    )
    paused = await env.app.execute(RefundWorkflow, CUSTOMER, owner_id="u")
    [pause] = paused.pending
    assert pause.pause_id is not None
    return pause.pause_id


async def test_an_answers_receipt_shows_the_decision_masked_and_the_tool_gets_it_real(
    env: TestEnv,
    recorded: PiiRecorder,
) -> None:
    pause_id = await refund_paused(env)
    override = {"order_id": "o-7", "iban": OTHER_IBAN}
    receipt = await env.app.answer(
        pause_id, decision={"approved": True, "override_arguments": override}, owner_id="u"
    )
    assert receipt.decision.override_arguments == {"order_id": "o-7", "iban": "****5432"}
    await eventually(lambda: bool(recorded.runs), "the refund")
    assert [f"refund o-7 to {OTHER_IBAN}"] == recorded.runs


async def test_pending_events_channels_and_records_show_the_value_masked(
    env: TestEnv, recorded: PiiRecorder
) -> None:
    env.mock_llm(RefundAgent).then_return(
        call_tools(tool_call(RefundTool, order_id="o-7", iban="<IBAN_1>")), DONE
    )
    paused = await env.app.execute(RefundWorkflow, CUSTOMER, owner_id="u", record=True)
    [pause] = paused.pending
    assert pause.ask.arguments == {"order_id": "o-7", "iban": "****3000"}
    [asked] = recorded.asked
    assert asked.value.arguments.iban == "****3000"  # the channel is shown the mask
    [event] = recorded.events
    assert event.pending[0].ask.arguments["iban"] == "****3000"
    assert pause.pause_id is not None
    done = await env.app.resume(
        pause.pause_id,
        decision=ToolCallApprovalDecisionDto(
            approved=True, override_arguments={"order_id": "o-7", "iban": OTHER_IBAN}
        ),
        owner_id="u",
        record=True,
    )
    assert [f"refund o-7 to {OTHER_IBAN}"] == recorded.runs  # the tool got the real override
    assert done.record is not None
    shown = done.record.model_dump_json()
    assert IBAN not in shown
    assert OTHER_IBAN not in shown
    [entry] = done.record.pauses
    assert entry.decision is not None
    assert entry.decision.override_arguments == {"order_id": "o-7", "iban": "****5432"}
    # What the engine stores for its own replay keeps the real value.
    stored = await env.app.store.pauses.find_by_tenant_id_and_pause_id("default", pause.pause_id)
    assert stored is not None
    assert stored.ask.arguments["iban"] == IBAN


async def test_a_custom_kinds_value_quoted_in_a_reason_or_a_reply_is_masked_wherever_shown(
    env: TestEnv, tmp_path: Path
) -> None:
    name = "Zebulon Quartermaine"  # marked in the request, in no call's arguments
    customer = CustomerDto(order_id="o-7", iban=IBAN, name=name)
    env.mock_llm(RefundAgent).then_return(
        call_tools(tool_call(RefundTool, order_id="o-7", iban="<IBAN_1>")),
        call_tools(tool_call(RefundTool, order_id="o-8", iban="<IBAN_1>")),
        DONE,
    )
    paused = await env.app.execute(RefundWorkflow, customer, owner_id="u")
    [first] = paused.pending
    assert first.pause_id is not None
    receipt = await env.app.answer(
        first.pause_id,
        decision={"approved": False, "reason": f"{name} asked us to wait"},
        owner_id="u",
    )
    described = await env.app.describe_pause(first.pause_id)
    waiting: list[Any] = []

    async def asked_again() -> bool:  # its pass rested on it (sent is not yet rested)
        found = await env.app.get(paused.execution_id)
        waiting[:] = found.pending if found.status is ExecutionStatus.PAUSED else []
        return len(waiting) == 1

    await eventually(asked_again, "the agent's next call asked, and the tree rested on it")
    [then] = waiting
    assert then.pause_id is not None
    env.mock_llm(RefundReplyInterpreter).then_return(
        reply_with(ToolCallApprovalDecisionDto, approved=False, reason=f"no, {name} says")
    )
    worded = await env.app.answer(then.pause_id, reply=f"no: {name} said so", owner_id="u")

    async def finished() -> bool:
        found = await env.app.get(paused.execution_id)
        return found.status is ExecutionStatus.COMPLETED

    await eventually(finished, "the tree finished")
    done = await env.app.get(paused.execution_id, record=True)
    assert done.record is not None
    # The model read it masked; outside, it is masked as a built-in kind would be.
    assert name not in sent(env.mock_llm(RefundAgent).requests)
    for shown in (receipt, described, worded, done.record.pauses, done.record.steps):
        assert name not in str(shown), shown
    assert "asked us to wait" in str(receipt.decision.reason)  # the rest is as written


async def test_an_interpreters_model_reads_the_ask_with_tokens_and_a_stray_token_declines(
    env: TestEnv,
    recorded: PiiRecorder,
) -> None:
    pause_id = await refund_paused(env)
    reader = env.mock_llm(RefundReplyInterpreter).then_return(
        reply_with(
            ToolCallApprovalDecisionDto,
            approved=True,
            override_arguments={"order_id": "o-7", "iban": "<IBAN_5>"},
        ),
        reply_with(
            ToolCallApprovalDecisionDto,
            approved=True,
            override_arguments={"order_id": "o-7", "iban": "<IBAN_1>"},
        ),
    )
    with pytest.raises(UninterpretableReplyError, match="a token nobody issued"):
        await env.app.resume(pause_id, reply=f"yes, and mail {EMAIL}", owner_id="u")
    text = sent(reader.requests)
    assert IBAN not in text
    assert EMAIL not in text
    assert "<IBAN_1>" in text
    done = await env.app.resume(pause_id, reply="yes", owner_id="u")
    assert done.status is ExecutionStatus.COMPLETED
    assert [f"refund o-7 to {IBAN}"] == recorded.runs  # the model's token is the real value again


async def test_a_refused_value_in_a_reply_keeps_the_pause_waiting(env: TestEnv) -> None:
    env.mock_llm(RefundAgent).then_return(
        call_tools(tool_call(RefundTool, order_id="o-7", iban="<IBAN_1>")), DONE
    )
    paused = await env.app.execute(RefundWorkflow, CUSTOMER, owner_id="u")
    [pause] = paused.pending
    assert pause.pause_id is not None
    reader = env.mock_llm(RefundReplyInterpreter)
    with pytest.raises(PiiRefusedError):
        await env.app.resume(pause.pause_id, reply=f"pay with {CARD}", owner_id="u")
    assert reader.requests == []
    still = await env.app.get(paused.execution_id)
    assert [p.pause_id for p in still.pending] == [pause.pause_id]


# ---- rules and detectors -------------------------------------------------------------------


@application(
    name="bad-pii-application",
    workflows=[RefundWorkflow],
    channels=[pii_app.DeskRefundApprovalChannel],
    dependencies=[provide(pii_app.PiiRecorder)],
    pii=[
        PiiRule(PiiKind.IBAN, mask()),
        PiiRule(PiiKind.IBAN, replace_with_token()),
        "iban",  # type: ignore[list-item]
    ],
)
class BadPiiApplication: ...


async def test_pii_rules_are_checked_at_assembly() -> None:
    with pytest.raises(AssemblyError) as caught:
        async with test_with(BadPiiApplication):
            pass
    assert {(v.rule, v.component) for v in caught.value.violations} == {
        ("pii.duplicate-kind", "bad-pii-application"),
        ("pii.not-a-rule", "bad-pii-application"),
    }


@pytest.mark.parametrize(
    ("kind", "text", "found"),
    [
        (PiiKind.CARD_NUMBER, "card 4111-1111-1111-1111 ok", "4111-1111-1111-1111"),
        (PiiKind.CARD_NUMBER, "order 4111111111111112 ok", None),  # Luhn digit wrong
        (PiiKind.IBAN, f"to {IBAN} NOW", IBAN),
        (PiiKind.IBAN, "to DE00370400440532013000 now", None),  # check digits wrong
        (PiiKind.EMAIL, f"write to {EMAIL}.", EMAIL),
        (PiiKind.PHONE, "call +44 20 7946 0958 today", "+44 20 7946 0958"),
        (PiiKind.PHONE, "ticket 12345", None),
    ],
)
def test_detectors_find_only_values_that_pass_their_kinds_check(
    kind: str, text: str, found: str | None
) -> None:
    spans = DETECTORS[kind](text)
    assert [text[a:b] for a, b in spans] == ([] if found is None else [found])


@pytest.mark.parametrize(
    "text",
    [
        "refund order 7 for ada7@example.org, call +44 20 7946 0007 if needed",
        "ticket 12345 from 2024-05-01: (+44 20 7946 0958) or +1 650-253-0000 ext. 12",
        "+33 1 42 68 53 00 then 555 0100 and [+49 30 901820] at last",
        "no number here, only +5 points and 42",
        "IDs 4411 2020 7946 0958 before +44 20 7946 0958",
    ],
)
def test_phone_numbers_are_found_as_the_parser_finds_them_in_the_whole_text(text: str) -> None:
    whole = phonenumbers.PhoneNumberMatcher(text, None, phonenumbers.Leniency.VALID)
    assert DETECTORS[PiiKind.PHONE](text) == [(match.start, match.end) for match in whole]


def test_a_phone_number_glued_to_a_word_is_found_too() -> None:
    text = "callme+44 20 7946 0958"
    assert [text[a:b] for a, b in DETECTORS[PiiKind.PHONE](text)] == ["+44 20 7946 0958"]


def test_a_pii_marker_needs_a_kind() -> None:
    with pytest.raises(Exception, match="needs a kind"):
        Pii(kind="")
    assert json.dumps(PiiKind.IBAN) == '"iban"'


async def test_an_override_that_hands_back_a_masked_value_as_shown_keeps_the_real_one(
    env: TestEnv,
    recorded: PiiRecorder,
) -> None:
    env.mock_llm(RefundAgent).then_return(
        call_tools(tool_call(RefundTool, order_id="o-7", iban="<IBAN_1>")), DONE
    )
    paused = await env.app.execute(RefundWorkflow, CUSTOMER, owner_id="u")
    [pause] = paused.pending
    assert pause.pause_id is not None
    changed = {**pause.ask.arguments, "order_id": "o-8"}  # the iban as shown: ****3000
    await env.app.resume(
        pause.pause_id,
        decision={"approved": True, "override_arguments": changed},
        owner_id="u",
    )
    assert [f"refund o-8 to {IBAN}"] == recorded.runs


# ---- no marked value ever leaves: a property over generated values -----------------------

_SECRET = st.text(
    alphabet=st.characters(whitelist_categories=("Lu", "Ll", "Nd")), min_size=10, max_size=24
).map(lambda text: "S3cr3t" + text)
"""A marked field's value: long enough to be masked, unlike any other text of the run."""


@settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(iban=_SECRET, other=_SECRET, note=st.text(max_size=30))
def test_no_marked_value_reaches_a_model_a_pending_entry_a_record_a_span_or_a_log(
    iban: str, other: str, note: str, caplog: pytest.LogCaptureFixture
) -> None:
    asyncio.run(_leak_check(iban, other, note, caplog))


async def _leak_check(iban: str, other: str, note: str, caplog: pytest.LogCaptureFixture) -> None:
    from tests.test_tracing import _EXPORTER

    assume(other not in iban and iban not in other)
    recorded = PiiRecorder(on_file=other)
    _EXPORTER.clear()
    caplog.clear()
    customer = CustomerDto(order_id="o-1", iban=iban, note=note)
    with caplog.at_level(logging.DEBUG):
        async with test_with(PiiApplication, dependencies=recording(recorded)) as env:
            script = env.mock_llm(RefundAgent).then_return(
                call_tools(tool_call(LookupTool, order_id="o-1", iban="<IBAN_1>")),
                call_tools(tool_call(RefundTool, order_id="o-1", iban="<IBAN_2>")),
                DONE,
            )
            paused = await env.app.execute(RefundWorkflow, customer, owner_id="u", record=True)
            [pause] = paused.pending
            assert pause.pause_id is not None
            done = await env.app.resume(
                pause.pause_id, decision={"approved": True}, owner_id="u", record=True
            )
    assert [
        f"lookup o-1 {iban}",
        f"refund o-1 to {other}",
    ] == recorded.runs  # tools get real values
    seen = [
        sent(script.requests),
        repr(paused),
        repr(recorded.asked),
        repr(recorded.events),
        done.record.model_dump_json() if done.record else "",
        repr(done.pending),
        json.dumps(
            [
                [dict(s.attributes or {}), [dict(e.attributes or {}) for e in s.events]]
                for s in _EXPORTER.get_finished_spans()
            ],
            default=str,
        ),
        "\n".join(record.getMessage() for record in caplog.records),
    ]
    for where, text in enumerate(seen):
        assert iban not in text, where
        assert other not in text, where


async def test_a_reminder_shows_the_channel_the_masked_question_and_its_failure_is_logged_masked(
    env: TestEnv, caplog: pytest.LogCaptureFixture
) -> None:
    env.mock_llm(RefundAgent).then_return(
        call_tools(tool_call(RefundTool, order_id="o-7", iban="<IBAN_1>")), DONE
    )
    await env.app.execute(RefundWorkflow, CUSTOMER, owner_id="u")
    seen: list[Any] = []

    def failing(reminder: Any) -> None:
        seen.append(reminder)
        raise RuntimeError(f"could not remind of the refund to {IBAN}")

    env.mock_of(pii_app.DeskRefundApprovalChannel).remind.side_effect = failing
    with caplog.at_level(logging.WARNING):
        await env.clock.advance(pii_app.REMIND)
    [reminded] = seen
    assert reminded.value.arguments.iban == "****3000"
    assert reminded.reminder == 1
    [line] = [r.getMessage() for r in caplog.records if "remind-failed" in r.getMessage()]
    assert IBAN not in line
    assert "****3000" in line


async def test_a_channels_error_is_logged_with_its_personal_data_masked(
    env: TestEnv, caplog: pytest.LogCaptureFixture
) -> None:
    env.mock_llm(RefundAgent).then_return(
        call_tools(tool_call(RefundTool, order_id="o-7", iban="<IBAN_1>")), DONE
    )
    paused = await env.app.execute(RefundWorkflow, CUSTOMER, owner_id="u")
    env.mock_of(pii_app.DeskRefundApprovalChannel).withdraw.side_effect = RuntimeError(
        f"could not take back the refund to {IBAN}"
    )
    with caplog.at_level(logging.WARNING):
        await env.app.cancel(paused.thread_id)
    [line] = [r.getMessage() for r in caplog.records if "withdraw-failed" in r.getMessage()]
    assert IBAN not in line
    assert "****3000" in line
