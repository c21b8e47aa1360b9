"""Child processes for tests, forked from one process that loaded the libraries once.

A test that needs a real process to kill, stop or run beside it used to start a fresh
``python -m`` each time: 0.6–0.7 s of imports on this machine before its first line, hundreds
of times a run. `start` forks it instead from multiprocessing's fork server, which imported
the heavy modules (`PRELOADED`) once for the whole run; the child runs its module as
``python -m`` would (``runpy``, as ``__main__``), with the environment and arguments it is
given, its output in a file. The server is a clean single-threaded process of its own, so a
fork of it is safe where a fork of the test process (threads, an event loop) would not be.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import runpy
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["PRELOADED", "Child", "start"]

PRELOADED = (
    "agboss",
    "agboss.store.postgres",
    "tests.crash.worker",
)
"""What the fork server imports once (a module missing from the environment is skipped)."""

_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(list(PRELOADED))


def _run(module: str, argv: Sequence[str], environment: Mapping[str, str], output: str) -> None:
    """In the child: the environment, arguments and output of ``python -m module argv``."""
    os.environ.clear()
    os.environ.update(environment)
    descriptor = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(descriptor, 1)
    os.dup2(descriptor, 2)
    os.close(descriptor)
    # The server's default handlers, not what its parent (the test run) had set.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.argv = [module, *argv]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


class Child:
    """A started child: its pid, whether it ended, and what it wrote."""

    def __init__(self, process: multiprocessing.process.BaseProcess, output: Path) -> None:
        self._process = process
        self.output = output

    @property
    def pid(self) -> int:
        """The child's process id."""
        assert self._process.pid is not None
        return self._process.pid

    def poll(self) -> int | None:
        """Its exit code once it ended (``-N``: killed by signal N), else ``None``."""
        return self._process.exitcode

    def kill(self) -> None:
        """Kills it (SIGKILL) and waits for it."""
        self._process.kill()
        self._process.join(10)

    def said(self) -> str:
        """What it wrote to its standard output and error."""
        return self.output.read_text() if self.output.exists() else ""

    async def exited(self, seconds: float = 60) -> int:
        """Its exit code, once it ends; it is killed, and the test fails, after ``seconds``."""
        for _ in range(int(seconds / 0.01)):
            code = self.poll()
            if code is not None:
                return code
            await asyncio.sleep(0.01)
        self.kill()
        raise AssertionError(f"the child did not end within {seconds} s: {self.said()}")


def start(
    module: str,
    *argv: str,
    output: Path,
    environment: Mapping[str, str] | None = None,
) -> Child:
    """Starts ``python -m module argv`` as a fork of the preloaded server.

    Args:
        module: The module run as ``__main__``.
        argv: Its arguments.
        output: The file its standard output and error go to.
        environment: Its environment; this process's, as it is now, by default.

    Returns:
        The started `Child`.
    """
    process = _CONTEXT.Process(
        target=_run,
        args=(module, list(argv), dict(os.environ if environment is None else environment)),
        kwargs={"output": str(output)},
        daemon=True,
    )
    process.start()
    return Child(process, output)
