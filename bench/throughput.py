"""Resumes per second: many paused executions answered at once, by one or more processes.

Each execution of the pause cycle's application (``bench/pause_resume.py``) waits on one
approval; every process resumes its share of the pauses, eight at a time, and the rate is the
pauses answered over the wall time from the first start to the last finish. SQLite with one
instance; PostgreSQL (``--postgres``, or ``AGBOSS_TEST_POSTGRES_URL``) with 1, 2 and 4 processes.

    python bench/throughput.py [--executions 400] [--postgres postgresql://…]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import tempfile
import time
import uuid
from pathlib import Path

from agboss import App, ExecutionStatus, FunctionProvider
from bench.pause_resume import RefundApplication, RefundWorkflow, drop_schema, scripted

IN_FLIGHT = 8
"""How many resumes each process keeps going at once."""


async def _pause_all(store: str, count: int) -> list[str]:
    app = await App.create(RefundApplication, store=store, providers=[FunctionProvider(scripted)])
    try:
        ids = []
        for _ in range(count):
            paused = await app.execute(RefundWorkflow, {"text": "refund 7"}, owner_id="u")
            assert paused.pending[0].pause_id is not None
            ids.append(paused.pending[0].pause_id)
        return ids
    finally:
        await app.close()


async def _resume_all(store: str, ids: list[str]) -> tuple[float, float]:
    app = await App.create(RefundApplication, store=store, providers=[FunctionProvider(scripted)])
    slots = asyncio.Semaphore(IN_FLIGHT)

    async def resume(pause_id: str) -> None:
        async with slots:
            done = await app.resume(pause_id, decision={"approved": True}, owner_id="u")
            assert done.status is ExecutionStatus.COMPLETED

    try:
        began = time.perf_counter()
        await asyncio.gather(*(resume(pause_id) for pause_id in ids))
        return began, time.perf_counter()
    finally:
        await app.close()


def _worker(
    store: str, ids: list[str], results: multiprocessing.Queue[tuple[float, float]]
) -> None:
    results.put(asyncio.run(_resume_all(store, ids)))


def _rate(store: str, count: int, processes: int) -> float:
    ids = asyncio.run(_pause_all(store, count))
    context = multiprocessing.get_context("spawn")
    results: multiprocessing.Queue[tuple[float, float]] = context.Queue()
    workers = [
        context.Process(target=_worker, args=(store, ids[index::processes], results))
        for index in range(processes)
    ]
    for worker in workers:
        worker.start()
    spans = [results.get() for _ in workers]
    for worker in workers:
        worker.join()
    # perf_counter is system-wide monotonic on Linux: the processes' times compare.
    return count / (max(end for _, end in spans) - min(start for start, _ in spans))


def main(count: int, postgres: str | None) -> None:
    print(f"resumes per second, {count} paused executions, {IN_FLIGHT} in flight per process")
    with tempfile.TemporaryDirectory(prefix="agboss-bench-") as name:
        rate = _rate(f"sqlite:///{Path(name) / 'agboss.db'}", count, 1)
        print(f"SQLite, 1 instance: {rate:7.0f} resumes/s")
    if postgres is None:
        print("(no PostgreSQL: pass --postgres or set AGBOSS_TEST_POSTGRES_URL)")
        return
    for processes in (1, 2, 4):
        schema = f"bench_{uuid.uuid4().hex[:8]}"
        join = "&" if "?" in postgres else "?"  # e.g. ?prepared_statements=false given
        rate = _rate(f"{postgres}{join}schema={schema}", count, processes)
        asyncio.run(drop_schema(postgres.partition("?")[0], schema))
        print(
            f"PostgreSQL, {processes} process{'es' if processes > 1 else ''}: {rate:7.0f} resumes/s"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--executions", type=int, default=400)
    parser.add_argument("--postgres", default=os.environ.get("AGBOSS_TEST_POSTGRES_URL"))
    arguments = parser.parse_args()
    main(arguments.executions, arguments.postgres)
