"""Bad input gets a clear AgbossError and changes nothing: identifiers, decisions, replies,
limits, unknown threads — and thousands of generated bad answers against real pauses."""

from __future__ import annotations

import asyncio
import math
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agboss import (
    AgbossError,
    App,
    ConfigurationError,
    DtoValidationError,
    ExecutionStatus,
    FunctionProvider,
    InputLimits,
    PauseAnswerer,
    PauseStatus,
    StoreError,
    UnknownThreadError,
    UnknownWorkflowError,
    application,
    provide,
)
from agboss.models import ChatResponse
from agboss.testing import TestEnv, test_with
from tests.apps.desk import (
    ButtonExpenseApprovalChannel,
    DeskDepositApprovalChannel,
    DeskRecorder,
    OfficeAgent,
    OfficeApplication,
)
from tests.apps.desk import OfficeWorkflow as DeskWorkflow
from tests.apps.recorded import recording
from tests.stores import STORE_KINDS, store_url
from tests.test_pauses import BOTH, DONE, REQUEST

pytestmark = pytest.mark.application.with_args(OfficeApplication)


class Paused:
    """An execution waiting on the desk's channel pause and the owner's pause."""

    def __init__(self, env: TestEnv, recorded: DeskRecorder) -> None:
        self.env = env
        self.recorded = recorded
        self.execution_id = ""
        self.channel_id = ""
        self.owner_id = ""

    async def start(self) -> Paused:
        env = self.env
        env.mock_llm(OfficeAgent).then_return(BOTH, DONE)
        desk_channel = env.mock_of(DeskDepositApprovalChannel)
        result = await env.app.execute(DeskWorkflow, REQUEST, tenant_id="acme", owner_id="user-1")
        self.execution_id = result.execution_id
        self.channel_id = desk_channel.send.call_args.args[0].pause_id
        [owner] = [p for p in result.pending if p.answered_by is PauseAnswerer.THREAD_OWNER]
        assert owner.pause_id is not None
        self.owner_id = owner.pause_id
        return self

    async def state(self) -> tuple[Any, ...]:
        """The pauses' statuses and answers, and the audit trail: what must not change."""
        store = self.env.app.store
        pauses = [
            await store.pauses.find_by_tenant_id_and_pause_id("acme", pause_id)
            for pause_id in (self.channel_id, self.owner_id)
        ]
        trail = await store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
            "acme", self.execution_id
        )
        return tuple((p.status, p.answer) for p in pauses if p is not None), tuple(trail)


async def refused(env: TestEnv, paused: Paused, **answer: Any) -> AgbossError:
    before = await paused.state()
    with pytest.raises(AgbossError) as caught:
        await env.app.resume(**answer)
    assert await paused.state() == before
    assert paused.recorded.runs == []
    return caught.value


async def owner_refused(env: TestEnv, paused: Paused, **answer: Any) -> AgbossError:
    """`refused` for an answer to the owner's pause, with its right identifiers."""
    return await refused(
        env, paused, pause_id=paused.owner_id, tenant_id="acme", owner_id="user-1", **answer
    )


# ---- identifiers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (b"pz-1", "must be a string, not bytes"),
        (7, "must be a string, not int"),
        ("", "is blank"),
        ("   ", "is blank"),
        ("pz-\x00", "holds a NUL character or a lone surrogate"),
        ("pz-\ud800", "holds a NUL character or a lone surrogate"),
        ("p" * 257, "is 257 characters long, over the limit of 256"),
    ],
)
async def test_an_identifier_that_is_no_storable_text_is_dto_validation_error(
    env: TestEnv, value: object, says: str, recorded: DeskRecorder
) -> None:
    paused = await Paused(env, recorded).start()
    for name in ("pause_id", "tenant_id", "owner_id"):
        answer: dict[str, Any] = {
            "pause_id": paused.owner_id,
            "tenant_id": "acme",
            "owner_id": "user-1",
            "decision": {"approved": True},
            name: value,
        }
        error = await refused(env, paused, **answer)
        assert isinstance(error, DtoValidationError)
        assert error.message.startswith(f"{name} {says}")


async def test_an_answered_by_that_is_bytes_or_blank_is_refused_before_it_is_recorded(
    env: TestEnv,
    recorded: DeskRecorder,
) -> None:
    paused = await Paused(env, recorded).start()
    for value in (b"clerk", "   ", "c" * 300):
        error = await refused(
            env,
            paused,
            pause_id=paused.channel_id,
            tenant_id="acme",
            answered_by=value,
            decision={"approved": True},
        )
        assert error.code == "dto.invalid"
        assert "answered_by" in error.message


async def test_an_empty_tenant_id_is_not_the_default_tenant(
    env: TestEnv, recorded: DeskRecorder
) -> None:
    paused = await Paused(env, recorded).start()
    error = await refused(
        env, paused, pause_id=paused.owner_id, tenant_id="", owner_id="user-1", decision={}
    )
    assert error.message == "tenant_id is blank"


# ---- decisions ---------------------------------------------------------------------------


@pytest.mark.parametrize("approved", ["yes", "true", 0, 1, None, 1.0, [True]])
async def test_approved_is_a_boolean_never_coerced(
    env: TestEnv, approved: object, recorded: DeskRecorder
) -> None:
    paused = await Paused(env, recorded).start()
    error = await owner_refused(
        env,
        paused,
        decision={"approved": approved},
    )
    assert isinstance(error, DtoValidationError)
    assert "approved" in " ".join(error.errors)


async def test_override_arguments_may_only_name_the_tools_input_fields(
    env: TestEnv, recorded: DeskRecorder
) -> None:
    paused = await Paused(env, recorded).start()
    error = await owner_refused(
        env,
        paused,
        decision={
            "approved": True,
            "override_arguments": {"purpose": "taxi", "amount": 3, "iban": "XX"},
        },
    )
    assert error.message == "override_arguments has fields ExpenseDto does not have: iban"


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf, "nan", "inf"])
async def test_override_arguments_hold_finite_numbers_only(
    env: TestEnv, number: object, recorded: DeskRecorder
) -> None:
    paused = await Paused(env, recorded).start()
    error = await owner_refused(
        env,
        paused,
        decision={"approved": True, "override_arguments": {"purpose": "taxi", "amount": number}},
    )
    assert error.code == "dto.invalid"


async def test_the_audit_trail_records_the_arguments_the_tool_got_not_the_raw_mapping(
    env: TestEnv,
    recorded: DeskRecorder,
) -> None:
    paused = await Paused(env, recorded).start()
    await env.app.resume(
        paused.owner_id,
        tenant_id="acme",
        owner_id="user-1",
        decision={"approved": True, "override_arguments": {"purpose": "bus", "amount": "4.5"}},
    )
    trail = await env.app.store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
        "acme", paused.execution_id
    )
    [entry] = [e for e in trail if e.decision is not None and e.decision.override_arguments]
    assert entry.decision is not None
    assert entry.decision.override_arguments == {"purpose": "bus", "amount": 4.5}
    assert "book-expense bus 4.5" in recorded.runs


# ---- replies and limits ------------------------------------------------------------------


@pytest.mark.parametrize("reply", [42, b"ok", ["ok"], "\ud83d"])
async def test_a_reply_that_is_not_storable_text_is_dto_validation_error(
    env: TestEnv, reply: object, recorded: DeskRecorder
) -> None:
    paused = await Paused(env, recorded).start()
    error = await refused(
        env, paused, pause_id=paused.owner_id, tenant_id="acme", owner_id="user-1", reply=reply
    )
    assert isinstance(error, DtoValidationError)
    assert error.message.startswith("reply ")


async def test_a_reply_or_a_reason_over_its_limit_names_the_limit(
    env: TestEnv, recorded: DeskRecorder
) -> None:
    paused = await Paused(env, recorded).start()
    long_reply = await owner_refused(
        env,
        paused,
        reply="x" * 8_001,
    )
    assert "InputLimits.reply_length" in long_reply.message
    long_reason = await owner_refused(
        env,
        paused,
        decision={"approved": False, "reason": "no" * 1_001},
    )
    assert "InputLimits.reason_length" in long_reason.message


@application(
    name="strict-office-application",
    workflows=[DeskWorkflow],
    channels=[DeskDepositApprovalChannel, ButtonExpenseApprovalChannel],
    limits=InputLimits(reason_length=10, id_length=64),
    dependencies=[provide(DeskRecorder)],
)
class StrictOfficeApplication: ...


@pytest.mark.application.with_args(StrictOfficeApplication)
async def test_the_limits_are_set_on_the_application(env: TestEnv, recorded: DeskRecorder) -> None:
    paused = await Paused(env, recorded).start()
    error = await owner_refused(
        env,
        paused,
        decision={"approved": False, "reason": "far too long a reason"},
    )
    assert "over the limit of 10 (InputLimits.reason_length)" in error.message
    with pytest.raises(DtoValidationError, match=r"InputLimits\.id_length"):
        await env.app.execute(DeskWorkflow, REQUEST, owner_id="o" * 65)


def test_a_limit_must_be_positive() -> None:
    with pytest.raises(AgbossError, match="whole number of 1 or more"):
        InputLimits(reply_length=0)


# ---- executions and threads --------------------------------------------------------------


@pytest.mark.parametrize("text", ["\ud800 lone", "fine"])
async def test_an_input_that_cannot_be_stored_is_refused_before_anything_is_written(
    env: TestEnv, text: str
) -> None:
    env.mock_llm(OfficeAgent).then_return(DONE)
    if text == "fine":
        done = await env.app.execute(DeskWorkflow, {"text": text}, owner_id="u")
        assert done.status is ExecutionStatus.COMPLETED
        return
    with pytest.raises(DtoValidationError, match="cannot be stored"):
        await env.app.execute(DeskWorkflow, {"text": text}, owner_id="u", thread_id="th-1")
    with pytest.raises(UnknownThreadError):  # nothing was written: not even the thread
        await env.app.cancel("th-1")


async def test_cancelling_a_thread_that_does_not_exist_is_unknown_thread_error(
    env: TestEnv,
) -> None:
    with pytest.raises(UnknownThreadError) as caught:
        await env.app.cancel("th-typo")
    assert caught.value.code == "thread.unknown"


async def test_cancelling_a_thread_with_nothing_left_to_cancel_returns_none(env: TestEnv) -> None:
    env.mock_llm(OfficeAgent).then_return(DONE)
    done = await env.app.execute(DeskWorkflow, REQUEST, owner_id="u", thread_id="th-mine")
    assert done.status is ExecutionStatus.COMPLETED
    assert await env.app.cancel("th-mine") is None


async def test_a_new_thread_id_a_caller_brings_opens_that_thread(env: TestEnv) -> None:
    env.mock_llm(OfficeAgent).then_return(DONE)
    done = await env.app.execute(DeskWorkflow, REQUEST, owner_id="u", thread_id="slack-C1-17")
    assert done.thread_id == "slack-C1-17"


async def test_every_method_checks_its_identifiers(env: TestEnv) -> None:
    calls = [
        env.app.execute(DeskWorkflow, REQUEST, owner_id=None),  # type: ignore[arg-type]
        env.app.execute(DeskWorkflow, REQUEST, owner_id="u", thread_id=3),  # type: ignore[arg-type]
        env.app.get(b"ex-1"),  # type: ignore[arg-type]
        env.app.get("ex-1", record="yes"),  # type: ignore[arg-type]
        env.app.cancel("\x00"),
        env.app.cancel("th-1", owner_id=""),
    ]
    for call in calls:
        with pytest.raises(DtoValidationError):
            await call
    with pytest.raises(UnknownWorkflowError):
        await env.app.execute([DeskWorkflow], REQUEST, owner_id="u")  # type: ignore[arg-type]


@pytest.mark.parametrize("lease_ttl", [timedelta(0), 30, None])
async def test_app_create_refuses_a_lease_ttl_that_is_no_positive_timedelta(
    lease_ttl: object, tmp_path: Path
) -> None:
    with pytest.raises(ConfigurationError, match="must be a positive timedelta"):
        await App.create(
            OfficeApplication,
            store=f"sqlite:///{tmp_path / 'a.db'}",
            lease_ttl=lease_ttl,  # type: ignore[arg-type]
        )


# ---- thousands of generated bad answers ---------------------------------------------------

_TEXT = st.text(max_size=12)
_BAD_TEXT = st.one_of(
    st.just(""),
    st.just("   "),
    st.text(max_size=8).map(lambda t: t + "\x00"),
    st.text(max_size=8).map(lambda t: "\ud800" + t),
    st.integers().map(lambda n: "x" * (300 + n % 50)),
)
_NOT_TEXT = st.one_of(
    st.integers(), st.floats(), st.binary(max_size=8), st.lists(_TEXT, max_size=2), st.none()
)
_JUNK = st.one_of(_TEXT, _NOT_TEXT, st.booleans(), st.dictionaries(_TEXT, _TEXT, max_size=2))
_NOT_A_BOOL = st.one_of(
    st.integers(), st.floats(allow_nan=True), _TEXT, st.none(), st.lists(st.booleans())
)
_BAD_DECISION = st.one_of(
    st.fixed_dictionaries({"approved": _NOT_A_BOOL}),
    st.fixed_dictionaries({"approved": st.booleans(), "reason": st.one_of(_NOT_TEXT)}).filter(
        lambda d: d["reason"] is not None
    ),
    st.fixed_dictionaries(
        {"approved": st.booleans(), "reason": st.text(max_size=4).map(lambda t: t + "\udfff")}
    ),
    st.fixed_dictionaries(
        {"approved": st.booleans(), "reason": st.integers(0, 99).map(lambda n: "r" * (2001 + n))}
    ),
    st.fixed_dictionaries({"approved": st.booleans(), "extra": _JUNK}),
    st.fixed_dictionaries(
        {
            "approved": st.just(False),
            "override_arguments": st.just({"purpose": "taxi", "amount": 1.0}),
        }
    ),
    st.fixed_dictionaries(
        {
            "approved": st.just(True),
            "override_arguments": st.one_of(
                st.fixed_dictionaries(
                    {"purpose": st.just("taxi"), "amount": st.sampled_from([math.nan, math.inf])}
                ),
                st.fixed_dictionaries({"purpose": _NOT_TEXT, "amount": st.just(1.0)}),
                st.fixed_dictionaries(
                    {"purpose": st.just("taxi"), "amount": st.just(1.0), "iban": _JUNK}
                ),
                st.fixed_dictionaries({"purpose": st.text(max_size=4).map(lambda t: t + "\ud800")}),
                st.lists(_TEXT, max_size=2),
                _TEXT,
            ),
        }
    ),
    _NOT_TEXT.filter(lambda v: v is not None),
)


@st.composite
def bad_answers(draw: st.DrawFn, channel_id: str, owner_id: str) -> dict[str, Any]:
    """A resume whose every part is right but one, or several, of them."""
    on_channel = draw(st.booleans())
    answer: dict[str, Any] = {
        "pause_id": channel_id if on_channel else owner_id,
        "tenant_id": "acme",
        "decision": {"approved": True},
    }
    if on_channel:
        answer["answered_by"] = "clerk-9"
    else:
        answer["owner_id"] = "user-1"
    wrong = draw(
        st.sets(
            st.sampled_from(
                ["pause_id", "tenant_id", "who", "both", "decision", "reply", "neither"]
            ),
            min_size=1,
            max_size=2,
        )
    )
    if "pause_id" in wrong:
        another = st.from_regex(r"[0-9a-f]{32}", fullmatch=True).filter(
            lambda v: v not in (channel_id, owner_id)
        )
        answer["pause_id"] = draw(
            st.one_of(another, _BAD_TEXT, _NOT_TEXT.filter(lambda v: v is not None))
        )
    if "tenant_id" in wrong:
        another = st.sampled_from(["default", "ACME", "acme ", "globex"])
        answer["tenant_id"] = draw(
            st.one_of(another, _BAD_TEXT, _NOT_TEXT.filter(lambda v: v is not None))
        )
    if "who" in wrong:
        key = "answered_by" if on_channel else "owner_id"
        answer[key] = draw(st.one_of(_BAD_TEXT, _NOT_TEXT.filter(lambda v: v is not None)))
    if "both" in wrong:  # the other credential too: a pause takes only one kind
        answer["owner_id" if on_channel else "answered_by"] = draw(st.text(min_size=1))
    if "decision" in wrong:
        answer["decision"] = draw(_BAD_DECISION)
    if "reply" in wrong:
        answer["reply"] = draw(
            st.one_of(_TEXT, _NOT_TEXT.filter(lambda v: v is not None), _BAD_TEXT)
        )
        if draw(st.booleans()):
            answer.pop("decision")
    if "neither" in wrong:
        answer.pop("decision", None)
        answer.pop("reply", None)
    return answer


_CODES = {
    "dto.invalid",
    "pause.unknown",
    "pause.wrong-answerer",
    "thread.wrong-owner",
    "pause.no-reply-interpreter",
    "pause.uninterpretable-reply",
}


@pytest.mark.parametrize("kind", STORE_KINDS)
def test_thousands_of_bad_answers_each_get_an_agboss_error_and_change_nothing(
    kind: str, tmp_path: Path
) -> None:
    recorded = DeskRecorder()
    with asyncio.Runner() as runner:
        url_context = store_url(kind, tmp_path)
        url = runner.run(url_context.__aenter__())
        env_context = test_with(OfficeApplication, store=url, dependencies=recording(recorded))
        env = runner.run(env_context.__aenter__())
        try:
            paused = runner.run(Paused(env, recorded).start())
            before = runner.run(paused.state())
            codes: set[str] = set()

            @settings(
                max_examples=1_200,
                deadline=None,
                database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
            )
            @given(answer=bad_answers(paused.channel_id, paused.owner_id))
            def one_bad_answer(answer: dict[str, Any]) -> None:
                with pytest.raises(AgbossError) as caught:
                    runner.run(env.app.resume(**answer))
                assert caught.value.code in _CODES, (answer, caught.value)
                codes.add(caught.value.code)

            one_bad_answer()
            assert runner.run(paused.state()) == before
            assert recorded.runs == []
            assert codes >= {"dto.invalid", "pause.unknown", "pause.wrong-answerer"}
            # The pauses still take a good answer: the refusals were for the bad parts.
            runner.run(
                env.app.resume(
                    paused.owner_id,
                    tenant_id="acme",
                    owner_id="user-1",
                    decision={"approved": True},
                )
            )
            assert runner.run(paused.state()) != before
            assert [status for status, _ in runner.run(paused.state())[0]] == [
                PauseStatus.PENDING,
                PauseStatus.TAKEN,
            ]
        finally:
            runner.run(env_context.__aexit__(None, None, None))
            runner.run(url_context.__aexit__(None, None, None))


@pytest.mark.parametrize(
    ("setup", "error"),
    [
        ({"store": 123}, StoreError),
        ({"providers": "openai"}, ConfigurationError),
        ({"providers": [object()]}, ConfigurationError),
        ({"clock": "utc"}, ConfigurationError),
        ({"migrate": "no"}, ConfigurationError),
    ],
)
async def test_app_create_refuses_setup_it_cannot_use_with_an_agboss_error(
    setup: dict[str, Any], error: type[AgbossError], tmp_path: Path
) -> None:
    provider = FunctionProvider(lambda request: ChatResponse(content="x"))
    options: dict[str, Any] = {
        "store": f"sqlite:///{tmp_path / 'a.db'}",
        "providers": [provider],
        **setup,
    }
    with pytest.raises(error):
        await App.create(OfficeApplication, **options)
