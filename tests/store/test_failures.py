"""Failures are stored as data: what is read back matches by class and cause chain, and nothing
stored can make an instance run code."""

from __future__ import annotations

import json
import pickle

from agboss import AgentFailedError, ExecutionFailedError, RecordedError
from agboss.engine.runs._launch import _matches
from agboss.store._failures import decode_failure, encode_failure, failure_names


class PaymentDeclinedError(Exception):
    def __init__(self, order: str, *, amount: float) -> None:
        super().__init__(f"order {order} declined")
        self.order = order
        self.amount = amount


class CardExpiredError(PaymentDeclinedError):
    pass


def test_an_agboss_error_comes_back_as_itself_with_its_fields_and_cause() -> None:
    error = AgentFailedError("it failed", agent="a", node_id="1:a", hint="fix it")
    error.__cause__ = ValueError("deep")
    back = decode_failure(encode_failure(error))
    assert isinstance(back, AgentFailedError)
    assert (back.code, back.message, back.hint) == (error.code, error.message, "fix it")
    assert str(back) == str(error)
    assert isinstance(back.__cause__, RecordedError)
    assert back.__cause__.type_name == "builtins.ValueError"


def test_a_class_the_process_does_not_name_comes_back_recorded_and_still_matches() -> None:
    error = AgentFailedError("branch failed", agent="a", node_id="n")
    error.__cause__ = CardExpiredError("o-1", amount=9.5)
    back = decode_failure(encode_failure(error))
    cause = back.__cause__
    assert isinstance(cause, RecordedError)
    assert "tests.store.test_failures.PaymentDeclinedError" in failure_names(cause)
    assert _matches(back, PaymentDeclinedError)
    assert _matches(back, CardExpiredError)
    assert not _matches(back, KeyError)


def test_a_class_the_application_names_is_rebuilt_without_running_its_constructor() -> None:
    back = decode_failure(
        encode_failure(CardExpiredError("o-2", amount=3.0)), known=[CardExpiredError]
    )
    assert isinstance(back, CardExpiredError)
    assert (back.order, back.amount, str(back)) == ("o-2", 3.0, "order o-2 declined")


def test_stored_text_never_runs_code() -> None:
    evil = pickle.dumps(ExecutionFailedError("x"))  # what 0.1.0 stored: never read as a pickle
    back = decode_failure(evil.decode("latin-1"))
    assert isinstance(back, ExecutionFailedError)
    crafted = json.dumps({"type": "os.system", "types": ["os.system"], "args": ["echo hi"]})
    assert isinstance(decode_failure(crafted), RecordedError)


def test_a_cause_chain_with_a_cycle_is_cut() -> None:
    first, second = ValueError("a"), ValueError("b")
    first.__cause__, second.__cause__ = second, first
    back = decode_failure(encode_failure(first))
    depth = 0
    while back.__cause__ is not None:
        back, depth = back.__cause__, depth + 1
    assert depth <= 16
