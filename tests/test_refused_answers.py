"""An error from `resume` / `answer` means nothing was recorded — or says, with its own code,
that it was or may have been (issue 37, item 5).

Once, with the disk full, `resume` raised `StoreUnavailableError` although its answer was
recorded (the pass that moved the tree failed after), and the caller's retry got
`NotPausedError`. Here the store fails, through a fault-injecting wrapper of its writes, at
each point: the answer's commit reached the database but its caller heard of a failure (the
outcome unknown), it did not reach it, and the pass after a recorded answer failed.

The office's tool has a channel, so a call that may have run is asked about (``ASK``, issue
38): its intent is committed with the answer, so a tree the answer's call did not move — even
one whose tool never began — rests on that question once the sweep takes it over.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest

from agboss import (
    AnswerNotMovedError,
    ExecutionOutput,
    ExecutionStatus,
    NotPausedError,
    PauseKind,
    PauseStatus,
    StoreError,
    StoreOutcomeUnknownError,
    StoreUnavailableError,
    WorkflowStartTextDto,
)
from agboss.store.writes import ResolvePause
from agboss.testing import TestEnv
from tests.apps.desk import DeskRecorder, OfficeAgent, OfficeApplication, OfficeWorkflow
from tests.test_round_trips import ASK, DONE

pytestmark = pytest.mark.application.with_args(OfficeApplication)


@pytest.fixture(autouse=True)
def scripted(env: TestEnv) -> None:
    # A second DONE: the model call after the tool is made while the tool's row commits,
    # so a store that refuses that row leaves the call to be made again.
    env.mock_llm(OfficeAgent).then_return(ASK, DONE, DONE)


class Faults:
    """Wraps a store's writes and reads to fail as a test says."""

    def __init__(self, env: TestEnv, monkeypatch: pytest.MonkeyPatch) -> None:
        store = env.app.store
        self.write, self.read = store.write, store.pauses.find_by_tenant_id_and_pause_id
        self.answer_commits_then_fails = False
        self.answer_fails_before_commit = False
        self.passes_fail = False
        self.reads_fail = False
        monkeypatch.setattr(store, "write", self.faulty_write)
        monkeypatch.setattr(store.pauses, "find_by_tenant_id_and_pause_id", self.faulty_read)

    async def faulty_write(self, writes: Sequence[Any], *, fence: Any = None) -> Any:
        answering = any(isinstance(write, ResolvePause) for write in writes)
        if answering and self.answer_fails_before_commit:
            raise StoreOutcomeUnknownError("the connection was lost before COMMIT arrived")
        if fence is not None and self.passes_fail:
            raise StoreUnavailableError("database or disk is full")
        done = await self.write(writes, fence=fence)
        if answering and self.answer_commits_then_fails:
            raise StoreOutcomeUnknownError("the connection was lost after COMMIT was sent")
        return done

    async def faulty_read(self, tenant_id: str, pause_id: str) -> Any:
        if self.reads_fail:
            raise StoreUnavailableError("the server went away")
        return await self.read(tenant_id, pause_id)


async def paused(env: TestEnv) -> tuple[ExecutionOutput, str]:
    result = await env.app.execute(
        OfficeWorkflow, WorkflowStartTextDto(text="Book the taxi"), owner_id="user-1"
    )
    [pending] = result.pending
    assert pending.pause_id is not None
    return result, pending.pause_id


async def asked_again(env: TestEnv, root: str, *, approved: bool) -> ExecutionOutput:
    """The tree the sweep took over rests on the question whether to run the call again (its
    intent was committed, its result not): answered."""
    rested = await env.app.get(root)
    assert rested.status is ExecutionStatus.PAUSED
    [question] = rested.pending
    assert question.ask.kind is PauseKind.INTERRUPTED
    assert question.pause_id is not None
    decision = {"approved": approved, "reason": "checked with the expense system"}
    return await env.app.resume(question.pause_id, decision=decision, owner_id="user-1")


async def status(env: TestEnv, pause_id: str) -> PauseStatus:
    pause = await env.app.store.pauses.find_by_tenant_id_and_pause_id("default", pause_id)
    assert pause is not None
    return pause.status


async def test_an_answer_committed_before_the_store_went_away_is_said_to_be_recorded(
    env: TestEnv, monkeypatch: pytest.MonkeyPatch, recorded: DeskRecorder
) -> None:
    result, pause_id = await paused(env)
    faults = Faults(env, monkeypatch)
    faults.answer_commits_then_fails = True
    # The store was asked once more: the answer was recorded — and the tree's lease maybe
    # taken with it, so the tree is left to the sweep, not moved by this call.
    with pytest.raises(AnswerNotMovedError) as not_moved:
        await env.app.resume(pause_id, decision={"approved": True}, owner_id="user-1")
    assert not_moved.value.execution_id == result.execution_id
    assert await status(env, pause_id) is PauseStatus.RESOLVED
    faults.answer_commits_then_fails = False
    await env.clock.advance(timedelta(minutes=2))  # past the lease the lost commit took
    await asked_again(env, result.execution_id, approved=True)
    done = await env.app.get(result.execution_id, record=True)
    assert done.status is ExecutionStatus.COMPLETED
    assert recorded.runs == ["book-expense taxi 12.5"]
    assert done.record is not None
    assert [p.kind for p in done.record.pauses] == [PauseKind.APPROVAL, PauseKind.INTERRUPTED]


async def test_app_answer_with_an_outcome_found_recorded_returns_its_receipt(
    env: TestEnv, monkeypatch: pytest.MonkeyPatch, recorded: DeskRecorder
) -> None:
    result, pause_id = await paused(env)
    faults = Faults(env, monkeypatch)
    faults.answer_commits_then_fails = True
    receipt = await env.app.answer(pause_id, decision={"approved": True}, owner_id="user-1")
    assert receipt.execution_id == result.execution_id
    assert not receipt.repeated
    faults.answer_commits_then_fails = False
    await env.clock.advance(timedelta(minutes=2))
    assert (await asked_again(env, result.execution_id, approved=True)).status is (
        ExecutionStatus.COMPLETED
    )
    assert recorded.runs == ["book-expense taxi 12.5"]


async def test_an_answer_that_never_reached_the_store_is_refused_and_the_pause_waits(
    env: TestEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, pause_id = await paused(env)
    faults = Faults(env, monkeypatch)
    faults.answer_fails_before_commit = True
    with pytest.raises(StoreUnavailableError) as refused:
        await env.app.resume(pause_id, decision={"approved": True}, owner_id="user-1")
    assert not isinstance(refused.value, StoreOutcomeUnknownError)  # known: nothing recorded
    assert "nothing was recorded" in refused.value.hint
    assert await status(env, pause_id) is PauseStatus.PENDING
    faults.answer_fails_before_commit = False
    done = await env.app.resume(pause_id, decision={"approved": True}, owner_id="user-1")
    assert done.status is ExecutionStatus.COMPLETED  # the retry is an answer like the first


async def test_an_outcome_the_store_cannot_tell_has_its_own_code_and_a_safe_retry(
    env: TestEnv, monkeypatch: pytest.MonkeyPatch, recorded: DeskRecorder
) -> None:
    result, pause_id = await paused(env)
    faults = Faults(env, monkeypatch)
    faults.answer_commits_then_fails = faults.reads_fail = True
    with pytest.raises(StoreOutcomeUnknownError) as unknown:
        await env.app.resume(pause_id, decision={"approved": True}, owner_id="user-1")
    assert unknown.value.code == "store.outcome-unknown"
    assert "app.answer" in unknown.value.hint
    faults.answer_commits_then_fails = faults.reads_fail = False
    # The retry its hint names takes the recorded answer as this one, not NotPausedError...
    receipt = await env.app.answer(pause_id, decision={"approved": True}, owner_id="user-1")
    assert receipt.repeated
    # ...and the recorded answer is moved by the sweep: the tool runs once.
    await env.clock.advance(timedelta(minutes=2))
    done = await asked_again(env, result.execution_id, approved=True)
    assert done.status is ExecutionStatus.COMPLETED
    assert recorded.runs == ["book-expense taxi 12.5"]


async def test_a_store_that_fails_after_the_answer_was_recorded_says_it_was_recorded(
    env: TestEnv, monkeypatch: pytest.MonkeyPatch, recorded: DeskRecorder
) -> None:
    result, pause_id = await paused(env)
    faults = Faults(env, monkeypatch)
    faults.passes_fail = True  # the disk fills after the answer's commit
    with pytest.raises(AnswerNotMovedError) as not_moved:
        await env.app.resume(pause_id, decision={"approved": True}, owner_id="user-1")
    assert not isinstance(not_moved.value, StoreError)  # not "refused": a retry is not needed
    assert not_moved.value.code == "run.not-moved"
    assert not_moved.value.execution_id == result.execution_id
    assert await status(env, pause_id) is PauseStatus.RESOLVED
    with pytest.raises(NotPausedError):  # it was answered: by this very call
        await env.app.resume(pause_id, decision={"approved": False}, owner_id="user-1")
    faults.passes_fail = False
    await env.clock.advance(timedelta(seconds=31))  # the sweep takes the recorded answer
    # The tool ran before the journal's commit failed: the person says so, and it is not
    # paid twice.
    done = await asked_again(env, result.execution_id, approved=False)
    assert done.status is ExecutionStatus.COMPLETED
    assert recorded.runs == ["book-expense taxi 12.5"]
