"""Several instances answer pauses of one tree at once: separate processes on one store."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from agboss import App, ExecutionStatus, FunctionProvider
from tests.multi_app import ItemDto, ItemsApplication, ItemsDto, ItemsWorkflow, model

ROOT = Path(__file__).resolve().parent.parent


async def test_two_processes_answer_the_pauses_of_one_tree_and_each_decision_is_taken_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, runs = tmp_path / "store.db", tmp_path / "runs.txt"
    monkeypatch.setenv("AGBOSS_TEST_RUNS", str(runs))
    app = await App.create(ItemsApplication, store=db, providers=[FunctionProvider(model)])
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
                str(db),
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
