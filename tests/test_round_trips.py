"""What a pause cycle asks of its store: the reads and transactions it makes, counted at the
store's driver (and, on PostgreSQL, the queries sent to the server). Each read the engine can
take from a transaction it makes anyway is one round trip fewer to a remote database."""

from __future__ import annotations

from pathlib import Path

import pytest

from agboss import (
    AgentFailedError,
    ExecutionOutput,
    ExecutionStatus,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
)
from agboss.testing import TestEnv, call_tools, reply_with, tool_call
from tests.apps.desk import (
    BookExpenseTool,
    OfficeAgent,
    OfficeApplication,
    OfficeWorkflow,
    ReturnDepositTool,
)
from tests.calls import Calls
from tests.stores import STORE_KINDS, env_on, store_url

ASK = call_tools(tool_call(BookExpenseTool, purpose="taxi", amount=12.5))
DONE = reply_with(WorkflowFinishTextDto, text="Booked.")


pytestmark = pytest.mark.application.with_args(OfficeApplication)


async def _paused(env: TestEnv) -> ExecutionOutput:
    result = await env.app.execute(
        OfficeWorkflow, WorkflowStartTextDto(text="Book the taxi"), owner_id="user-1"
    )
    assert result.status is ExecutionStatus.PAUSED
    return result


async def _warm(env: TestEnv) -> None:
    """Cycles before counting: a PostgreSQL connection prepares what it sends often."""
    for _ in range(3):
        paused = await _paused(env)
        pause_id = paused.pending[0].pause_id
        assert pause_id is not None
        await env.app.resume(pause_id, decision={"approved": True}, owner_id="user-1")


async def test_a_paused_result_lists_its_pauses_without_a_read_of_its_own(
    env: TestEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    env.mock_llm(OfficeAgent).then_return(*[ASK, DONE] * 4)
    await _warm(env)
    calls = Calls()
    calls.watch(env.app.store, monkeypatch)
    paused = await _paused(env)
    assert [pause.ask.tool for pause in paused.pending] == ["book-expense-tool"]
    # The tree begun with the model's call journaled and the pause, then the tree rested: the
    # ids it lists are read by the commit that rests it, the pause is the one just asked.
    assert calls.reads == []
    assert calls.transactions == 2
    if calls.postgres:  # one query each
        assert calls.queries == 2


async def test_a_resume_of_a_question_this_instance_asked_reads_nothing_of_its_own(
    env: TestEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    env.mock_llm(OfficeAgent).then_return(*[ASK, DONE] * 4)
    await _warm(env)
    paused = await _paused(env)
    pause_id = paused.pending[0].pause_id
    assert pause_id is not None
    calls = Calls()
    calls.watch(env.app.store, monkeypatch)
    done = await env.app.resume(pause_id, decision={"approved": True}, owner_id="user-1")
    assert done.status is ExecutionStatus.COMPLETED
    assert done.output == WorkflowFinishTextDto(text="Booked.")
    # The question is checked as this instance stored it, and its answer's write says whether
    # it still waits; the pass replays the steps read with its lease, in the answer's commit;
    # the tree ends without reading which pauses it closes (none waited when it was taken).
    assert calls.reads == []
    assert calls.transactions == 3  # the answer with the lease, the tool ran, the end
    if calls.postgres:  # one query each
        assert calls.queries == 3


async def test_a_resume_of_a_question_older_than_those_kept_reads_it(
    env: TestEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agboss.engine.instance import _asked

    monkeypatch.setattr(_asked, "KEPT", 1)  # the instance keeps its last question only
    env.mock_llm(OfficeAgent).then_return(*[ASK, DONE] * 3, ASK, ASK, DONE, DONE)
    await _warm(env)
    older = (await _paused(env)).pending[0].pause_id
    newer = (await _paused(env)).pending[0].pause_id
    assert older is not None
    assert newer is not None
    calls = Calls()
    calls.watch(env.app.store, monkeypatch)
    await env.app.resume(older, decision={"approved": True}, owner_id="user-1")
    assert calls.reads == ["pauses"]
    calls.clear()
    await env.app.resume(newer, decision={"approved": True}, owner_id="user-1")
    assert calls.reads == []


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_resume_of_a_question_another_instance_asked_reads_only_that_pause(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with env_on(kind, tmp_path, OfficeApplication, instances=2) as env:
        env.mock_llm(OfficeAgent).then_return(*[ASK, DONE] * 4)
        asker, answerer = env.apps
        for _ in range(3):  # the answering instance's connection prepares what it sends often
            paused = await asker.execute(
                OfficeWorkflow, WorkflowStartTextDto(text="Book the taxi"), owner_id="user-1"
            )
            pause_id = paused.pending[0].pause_id
            assert pause_id is not None
            await answerer.resume(pause_id, decision={"approved": True}, owner_id="user-1")
        paused = await asker.execute(
            OfficeWorkflow, WorkflowStartTextDto(text="Book the taxi"), owner_id="user-1"
        )
        pause_id = paused.pending[0].pause_id
        assert pause_id is not None
        calls = Calls()
        calls.watch(answerer.store, monkeypatch)
        done = await answerer.resume(pause_id, decision={"approved": True}, owner_id="user-1")
        assert done.status is ExecutionStatus.COMPLETED
        assert calls.reads == ["pauses"]
        assert calls.transactions == 3
        if calls.postgres:
            assert calls.queries == 4


async def test_a_tree_that_ends_with_a_question_asked_by_an_earlier_pass_closes_it(
    env: TestEnv,
) -> None:
    # Two questions asked by the first pass; the pass that moves the first answer ends the
    # tree (its tool fails): the question still waiting, asked before that pass's lease was
    # taken, is closed by the commit that ends the tree.
    env.mock_llm(OfficeAgent).then_return(
        call_tools(
            tool_call(BookExpenseTool, purpose="taxi", amount=12.5),
            tool_call(ReturnDepositTool, lease_id="L-7"),
        ),
        DONE,
    )
    env.mock_of(BookExpenseTool).run.side_effect = RuntimeError("the ledger is gone")
    paused = await _paused(env)
    assert len(paused.pending) == 2
    [owners] = [pause for pause in paused.pending if pause.pause_id is not None]
    assert owners.pause_id is not None
    with pytest.raises(AgentFailedError):
        await env.app.resume(owners.pause_id, decision={"approved": True}, owner_id="user-1")
    waiting = await env.app.store.pauses.list_pending(paused.execution_id)
    assert waiting == []
    trail = await env.app.store.records.find_pause_answers_by_tenant_id_and_root_execution_id(
        "default", paused.execution_id
    )
    assert sorted(entry.resolution.value for entry in trail) == ["cancelled", "replied"]


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_resume_of_a_call_that_must_not_run_twice_journals_its_intent_with_the_answer(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The tool declares on_interrupted=FAIL: its intent is written by the answer's commit,
    # which takes the lease — the pass runs it with no commit of its own before it.
    from tests.apps.interrupted_app import open_app

    monkeypatch.setenv("AGBOSS_TEST_RUNS", str(tmp_path / "runs.jsonl"))
    async with store_url(kind, tmp_path) as url:
        app = await open_app(url)
        try:
            workflow = app.assembly.workflows_by_name["payment-workflow"].cls
            for thread in ("t-warm", "t-1"):
                paused = await app.execute(
                    workflow, {"text": "approved-pay-tool"}, owner_id="u-1", thread_id=thread
                )
                [pending] = paused.pending
                assert pending.pause_id is not None
                calls = Calls()
                calls.watch(app.store, monkeypatch)
                done = await app.resume(
                    pending.pause_id, decision={"approved": True}, owner_id="u-1"
                )
                assert done.status is ExecutionStatus.COMPLETED
                assert calls.transactions == 3  # the answer (lease, intent), the tool ran, the end
                monkeypatch.undo()
                monkeypatch.setenv("AGBOSS_TEST_RUNS", str(tmp_path / "runs.jsonl"))
            record = await app.get(done.execution_id, record=True)
            assert record.record is not None
            assert [s.kind for s in record.record.steps] == [
                "model-call",
                "tool-run",
                "model-call",
            ]
            steps = await app.store.journal.load(done.execution_id)
            assert [k for k in steps if k.endswith("/attempt-1")] != []  # it was journaled
        finally:
            await app.close()
