"""Every error is an AgbossError with a stable code, readable, and picklable."""

from __future__ import annotations

import pickle

import pytest

import agboss
import agboss.slack
import agboss.web
from agboss import (
    AgbossError,
    AgentFailedError,
    AssemblyError,
    AssemblyViolation,
    DtoValidationError,
    NotPausedError,
    UninterpretableReplyError,
    UnknownPauseError,
)

ERROR_CLASSES = [
    value
    for module in (agboss, agboss.web, agboss.slack)
    for name in module.__all__
    if isinstance(value := getattr(module, name), type) and issubclass(value, AgbossError)
]


def test_every_public_error_has_its_own_stable_code() -> None:
    codes = [cls.code for cls in ERROR_CLASSES]
    assert len(codes) == len(set(codes))
    assert all("." in code for code in codes)


def test_the_spec_codes_are_kept() -> None:
    assert UnknownPauseError().code == "pause.unknown"
    assert NotPausedError("taken").code == "run.not-paused"
    assert agboss.PauseAnswererError("x").code == "pause.wrong-answerer"
    assert agboss.ReplyInterpreterMissingError("x").code == "pause.no-reply-interpreter"
    assert UninterpretableReplyError("x").code == "pause.uninterpretable-reply"


@pytest.mark.parametrize(
    "error",
    [
        UnknownPauseError(),
        NotPausedError("taken"),
        DtoValidationError("bad", errors=["a: missing"]),
        AgentFailedError("gave up", agent="office-agent", node_id="1:office-agent"),
        UninterpretableReplyError("not a button"),
        AssemblyError("x-application", [AssemblyViolation("name.kind-suffix", "X", "fix it")]),
    ],
)
def test_errors_survive_pickling_with_their_fields(error: AgbossError) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert copy.__dict__ == error.__dict__


def test_an_error_renders_its_code_message_and_hint() -> None:
    text = str(UnknownPauseError())
    assert text.startswith("[pause.unknown] no pause with this id is known for this tenant")
    assert "\n  hint: " in text


@pytest.mark.parametrize(
    "error_class", [c for c in ERROR_CLASSES if c is not AssemblyError], ids=lambda c: c.__name__
)
def test_every_error_can_be_made_without_arguments_and_says_what_it_is(
    error_class: type[AgbossError],
) -> None:
    error = error_class()
    assert str(error).startswith(f"[{error_class.code}] ")
    assert pickle.loads(pickle.dumps(error)).message == error.message


def test_errors_that_stop_a_pass_share_one_class_which_the_engine_catches() -> None:
    from pathlib import Path

    from agboss.errors import LeaseLostError, PassStoppingError, StoreError

    assert issubclass(StoreError, PassStoppingError)
    assert issubclass(LeaseLostError, PassStoppingError)
    assert PassStoppingError().code == "run.stopped"
    engine = Path(__file__).resolve().parent.parent / "src" / "agboss" / "engine"
    for path in engine.glob("*.py"):  # one class caught, not its members one by one
        text = path.read_text()
        assert "(LeaseLostError, StoreError)" not in text, path.name
        assert "LeaseLostError | StoreError" not in text, path.name
