"""The pause cycle of two versions of agboss, each in processes of its own, in turn.

A change to the hot path moves the cycle by a few per cent, less than this machine moves from
one minute to the next; two runs of `pause_resume.py` one after the other cannot tell it. Here
each version runs in two processes (one placed first, one last: the first-placed process of a
run measured 3–4 % slow), every process over the same store, ten cycles at a time in turn, the
order reversed every round; the medians per version and their ratio to the first are printed.

    python bench/versions.py OLD_CHECKOUT NEW_CHECKOUT [...] [--rounds 60] [--postgres URL]

Each checkout is a folder with agboss's ``src`` and ``bench`` (a ``git worktree`` or clone).
Without ``--postgres`` (or ``AGBOSS_TEST_POSTGRES_URL``) each process uses a SQLite file of its
own.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

BLOCK = 10
"""Cycles a process runs each time it is its turn."""


async def _child(store: str, block: int) -> None:
    """A process of one version: warms up, then runs ``block`` cycles each time a line comes on
    its standard input and prints their mean wall time and CPU time (ms); ends on an empty
    line."""
    from bench.pause_resume import agboss_cycle, drop_schema  # the checkout's own

    loop = asyncio.get_running_loop()
    async with agboss_cycle(store) as (cycle, _):
        for _ in range(30):
            await cycle()
        print("ready", flush=True)
        while (await loop.run_in_executor(None, sys.stdin.readline)).strip():
            began, cpu = time.perf_counter(), time.process_time()
            for _ in range(block):
                await cycle()
            wall = (time.perf_counter() - began) / block * 1000
            print(f"{wall:.4f} {(time.process_time() - cpu) / block * 1000:.4f}", flush=True)
    url, _, query = store.partition("?schema=")
    if query:
        await drop_schema(url, query)


@dataclass
class _Side:
    checkout: Path
    process: subprocess.Popen[str]
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def turn(self) -> None:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()
        wall, cpu = self.process.stdout.readline().split()
        self.wall.append(float(wall))
        self.cpu.append(float(cpu))

    def end(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        self.process.wait(timeout=60)


def _start(checkout: Path, store: str) -> _Side:
    env = dict(os.environ, PYTHONPATH=f"{checkout / 'src'}{os.pathsep}{checkout}")
    process = subprocess.Popen(
        [sys.executable, __file__, "--child", store],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=checkout,
    )
    assert process.stdout is not None
    if process.stdout.readline().strip() != "ready":
        raise SystemExit(f"{checkout}: the cycle did not start")
    return _Side(checkout, process)


def _store(postgres: str | None, folder: Path) -> str:
    if postgres is not None:
        return f"{postgres}?schema=versions_{uuid.uuid4().hex[:8]}"
    return f"sqlite:///{folder / uuid.uuid4().hex[:8]}.db"


def main(checkouts: list[Path], rounds: int, postgres: str | None) -> None:
    with tempfile.TemporaryDirectory(prefix="agboss-versions-") as name:
        folder = Path(name)
        # Each version twice, the second set in the reverse order: A B … B A.
        order = [*checkouts, *reversed(checkouts)]
        sides = [_start(checkout, _store(postgres, folder)) for checkout in order]
        try:
            for index in range(rounds):
                for side in sides if index % 2 == 0 else reversed(sides):
                    side.turn()
        finally:
            for side in sides:
                side.end()
    store = "PostgreSQL" if postgres is not None else "SQLite"
    print(f"the pause cycle, {rounds} rounds of {BLOCK} cycles a process, on {store}")
    base: tuple[float, float] | None = None
    for checkout in checkouts:
        mine = [side for side in sides if side.checkout == checkout]
        wall = statistics.mean(statistics.median(side.wall) for side in mine)
        cpu = statistics.mean(statistics.median(side.cpu) for side in mine)
        base = base or (wall, cpu)
        print(
            f"{checkout}: wall {wall:.3f} ms ({wall / base[0]:.3f}), "
            f"client CPU {cpu:.3f} ms ({cpu / base[1]:.3f}) — medians "
            + ", ".join(f"{statistics.median(side.wall):.3f}" for side in mine)
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("checkouts", nargs="*", type=Path)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--postgres", default=os.environ.get("AGBOSS_TEST_POSTGRES_URL"))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child is not None:
        asyncio.run(_child(arguments.child, BLOCK))
    elif len(arguments.checkouts) < 2:
        parser.error("give two checkouts or more")
    else:
        main([path.resolve() for path in arguments.checkouts], arguments.rounds, arguments.postgres)
