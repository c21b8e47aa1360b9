"""What waits is one value, joined where the calls of a turn and the branches of a launch join:
the earliest time each says it moves by itself, and every resting step's branch
(`agboss.engine.trees._waiting`; the passes that rest on it are in `tests/test_woken_reads.py`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agboss.engine.trees import WAITING, Waiting

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_joined_the_earliest_time_wins_and_every_resting_branch_is_kept() -> None:
    question = Waiting.on_question(NOW + timedelta(days=2), NOW + timedelta(hours=4))
    first = Waiting.resting(NOW + timedelta(hours=1)).at("1:a#0@3")
    later = Waiting.resting(NOW + timedelta(hours=2)).at("1:a#0@7")
    joined = Waiting.joined([question, later, WAITING, first])
    assert joined.wake_at == NOW + timedelta(hours=1)
    assert joined.resting_until == NOW + timedelta(hours=1)
    assert joined.resting_paths == {"1:a#0@3", "1:a#0@7"}


def test_a_question_alone_says_no_resting_branch_and_an_answer_alone_no_time() -> None:
    question = Waiting.on_question(None, NOW + timedelta(hours=4)).at("1:a#0@1")
    assert (question.wake_at, question.resting_until) == (NOW + timedelta(hours=4), None)
    assert question.resting_paths == frozenset()  # only a resting step is placed
    assert Waiting.joined([WAITING, WAITING]) == WAITING
