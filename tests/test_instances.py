"""Several instances answer pauses of one tree at once: separate processes on one store."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agboss import App, ExecutionOutput, ExecutionStatus, FunctionProvider, NotPausedError
from agboss.testing import test_with
from tests.apps.multi_app import CountDto, ItemDto, ItemsApplication, ItemsDto, ItemsWorkflow, model
from tests.stores import STORE_KINDS, store_url
from tests.waiting import eventually

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the test application's tool writes a line each time it runs."""
    path = tmp_path / "runs.txt"
    monkeypatch.setenv("AGBOSS_TEST_RUNS", str(path))
    return path


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_two_processes_answer_the_pauses_of_one_tree_and_each_decision_is_taken_once(
    kind: str, tmp_path: Path, runs: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        await _two_processes(url, runs)


async def _two_processes(url: str, runs: Path) -> None:
    app = await App.create(ItemsApplication, store=url, providers=[FunctionProvider(model)])
    try:
        items = ItemsDto(items=[ItemDto(item_id=f"i{index}") for index in range(8)])
        paused = await app.execute(ItemsWorkflow, items, owner_id="u")
        ids = [pause.pause_id for pause in paused.pending]
        assert len(ids) == 8
        workers = [
            await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "tests.answer_worker",
                url,
                ",".join(str(pause_id) for pause_id in half),
                cwd=ROOT,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            for half in (ids[0::2], ids[1::2])
        ]
        outputs = [await worker.communicate() for worker in workers]
        assert all(worker.returncode == 0 for worker in workers), outputs
        final = await app.get(paused.execution_id)
    finally:
        await app.close()
    assert final.status is ExecutionStatus.COMPLETED
    lines = runs.read_text().splitlines()
    tools = sorted(line.split()[1] for line in lines if line.startswith("tool"))
    assert tools == sorted(f"i{index}" for index in range(8))  # each ran once
    assert sum(line.startswith("join") for line in lines) == 1
    statuses = " ".join(out.decode() for out, _ in outputs).split()
    assert "completed" in statuses


@settings(max_examples=15, deadline=None)
@given(
    decisions=st.lists(st.booleans(), min_size=1, max_size=6),
    order=st.randoms(use_true_random=False),
    batch=st.integers(min_value=1, max_value=3),
)
def test_any_order_of_answers_from_two_instances_takes_each_decision_once(
    decisions: list[bool], order: Any, batch: int
) -> None:
    asyncio.run(_answer_in_order(decisions, order, batch))


async def _answer_in_order(decisions: list[bool], order: Any, batch: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        runs = Path(folder) / "runs.txt"
        os.environ["AGBOSS_TEST_RUNS"] = str(runs)
        async with test_with(
            ItemsApplication, instances=2, providers=[FunctionProvider(model)]
        ) as env:
            items = ItemsDto(items=[ItemDto(item_id=f"i{i}") for i in range(len(decisions))])
            paused = await env.app.execute(ItemsWorkflow, items, owner_id="u")
            by_item = {p.ask.arguments["item_id"]: p.pause_id for p in paused.pending}
            answers = list(enumerate(decisions))
            order.shuffle(answers)
            for start in range(0, len(answers), batch):  # a batch is answered at once
                await asyncio.gather(
                    *(
                        env.apps[index % 2].resume(
                            str(by_item[f"i{index}"]), decision={"approved": approved}, owner_id="u"
                        )
                        for index, approved in answers[start : start + batch]
                    )
                )
            final = await env.app.get(paused.execution_id, record=True)
        assert final.status is ExecutionStatus.COMPLETED
        lines = runs.read_text().splitlines() if runs.exists() else []
        ran = sorted(line.split()[1] for line in lines if line.startswith("tool"))
        assert ran == sorted(f"i{i}" for i, approved in enumerate(decisions) if approved)
        assert sum(line.startswith("join") for line in lines) == 1
        assert final.record is not None
        assert len(final.record.pauses) == len(decisions)
        assert final.output == CountDto(done=len(decisions))


@asynccontextmanager
async def _one_pause_on_two_instances(
    kind: str, tmp_path: Path
) -> AsyncIterator[tuple[list[App], ExecutionOutput, str]]:
    """Two instances on one store, and a tree paused on one approval: its output and id."""
    async with store_url(kind, tmp_path) as url:
        apps = [
            await App.create(ItemsApplication, store=url, providers=[FunctionProvider(model)])
            for _ in range(2)
        ]
        try:
            items = ItemsDto(items=[ItemDto(item_id="i0")])
            paused = await apps[0].execute(ItemsWorkflow, items, owner_id="u")
            [pending] = paused.pending
            yield apps, paused, str(pending.pause_id)
        finally:
            for app in apps:
                await app.close()


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_many_answers_to_one_pause_at_once_record_one_decision_and_one_audit_entry(
    kind: str, tmp_path: Path, runs: Path
) -> None:
    async with _one_pause_on_two_instances(kind, tmp_path) as (apps, paused, pause_id):
        outcomes = await asyncio.gather(
            *(
                apps[index % 2].resume(
                    pause_id, decision={"approved": index % 3 != 0}, owner_id="u"
                )
                for index in range(16)
            ),
            return_exceptions=True,
        )
        final = await apps[1].get(paused.execution_id, record=True)
    won = [o for o in outcomes if not isinstance(o, BaseException)]
    assert len(won) == 1, outcomes
    assert all(isinstance(o, NotPausedError) for o in outcomes if o not in won), outcomes
    assert final.record is not None
    [entry] = final.record.pauses  # one audit entry, the winner's
    assert entry.decision is not None
    approved = entry.decision.approved
    lines = runs.read_text().splitlines() if runs.exists() else []
    assert sum(line.startswith("tool") for line in lines) == (1 if approved else 0)
    assert final.status is ExecutionStatus.COMPLETED


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_webhook_retried_many_times_at_once_records_its_answer_once(
    kind: str, tmp_path: Path, runs: Path
) -> None:
    async with _one_pause_on_two_instances(kind, tmp_path) as (apps, paused, pause_id):
        receipts = await asyncio.gather(
            *(
                apps[index % 2].answer(pause_id, decision={"approved": True}, owner_id="u")
                for index in range(16)
            )
        )
        assert sum(not receipt.repeated for receipt in receipts) == 1

        async def finished() -> bool:
            output = await apps[1].get(paused.execution_id)
            return output.status is ExecutionStatus.COMPLETED

        await eventually(finished, "the tree's finish")
        final = await apps[1].get(paused.execution_id, record=True)
    assert final.record is not None
    assert len(final.record.pauses) == 1
    lines = runs.read_text().splitlines()
    assert sum(line.startswith("tool") for line in lines) == 1


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_question_answered_by_another_instance_is_refused_by_the_one_that_asked_it(
    kind: str, tmp_path: Path, runs: Path
) -> None:
    # The asking instance checks an answer against the question as it stored it, without a
    # read: the answer's write, which finds it answered, decides, and nothing more is recorded.
    async with _one_pause_on_two_instances(kind, tmp_path) as (apps, paused, pause_id):
        asker, other = apps
        first = await other.resume(pause_id, decision={"approved": True}, owner_id="u")
        assert first.status is ExecutionStatus.COMPLETED
        with pytest.raises(NotPausedError) as refused:
            await asker.resume(pause_id, decision={"approved": False}, owner_id="u")
        assert "taken" in refused.value.message  # as a read would have said
        final = await asker.get(paused.execution_id, record=True)
    assert final.record is not None
    [entry] = final.record.pauses
    assert entry.decision is not None
    assert entry.decision.approved
    assert _tools_run(runs) == 1


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_webhook_retried_on_the_asking_instance_after_another_recorded_it_is_a_repeat(
    kind: str, tmp_path: Path, runs: Path
) -> None:
    async with _one_pause_on_two_instances(kind, tmp_path) as (apps, _, pause_id):
        asker, other = apps
        first = await other.answer(pause_id, decision={"approved": True}, owner_id="u")
        again = await asker.answer(pause_id, decision={"approved": True}, owner_id="u")
    assert not first.repeated
    assert again.repeated
    assert again.decision == first.decision


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_question_withdrawn_by_another_instance_is_refused_by_the_one_that_asked_it(
    kind: str, tmp_path: Path, runs: Path
) -> None:
    async with _one_pause_on_two_instances(kind, tmp_path) as (apps, paused, pause_id):
        asker, other = apps
        await other.cancel(paused.thread_id)
        with pytest.raises(NotPausedError):
            await asker.resume(pause_id, decision={"approved": True}, owner_id="u")
        final = await asker.get(paused.execution_id)
    assert final.status is ExecutionStatus.CANCELLED
    assert _tools_run(runs) == 0


def _tools_run(runs: Path) -> int:
    """How many times the test application's tool ran (the lines it wrote)."""
    lines = runs.read_text().splitlines() if runs.exists() else []
    return sum(line.startswith("tool") for line in lines)
