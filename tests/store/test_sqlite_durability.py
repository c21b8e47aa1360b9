"""What a SQLite store's commits survive (`Durability`): by default the commits that
acknowledge something wait for the disk, and survive a power loss; ``process-crash`` trades
that for speed. Counted at the system calls, with ``strace``, in a process of its own."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agboss import StoreError
from agboss.store.sqlite import Durability, SqliteStore
from agboss.testing import test_with

ROOT = Path(__file__).resolve().parent.parent.parent

CYCLES = 20
"""Pause cycles per run: each commits four or five times."""


def _disk_waits(url: str, folder: Path) -> int:
    """How many times a process running ``CYCLES`` pause cycles on ``url`` waited for the
    disk (``fsync`` / ``fdatasync``)."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed: the disk's waits cannot be counted")
    trace = folder / "strace.txt"
    strace = ["strace", "-f", "-qq", "-e", "trace=fsync,fdatasync", "-o", str(trace)]
    child = [sys.executable, "-m", "tests.durability_child", url, str(CYCLES)]
    done = subprocess.run(
        [*strace, *child],
        cwd=ROOT,
        capture_output=True,
        timeout=100,  # under the test's own limit (120 s): a hang fails the test itself
        check=False,
    )
    if done.returncode != 0 and b"ptrace" in done.stderr:
        pytest.skip(f"strace cannot trace here: {done.stderr.decode()[-200:]}")
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return sum("sync(" in line for line in trace.read_text().splitlines())


def test_by_default_each_commit_that_acknowledges_something_waits_for_the_disk(
    tmp_path: Path,
) -> None:
    power_loss = _disk_waits(f"sqlite:///{tmp_path / 'a.db'}", tmp_path)
    process_crash = _disk_waits(f"sqlite:///{tmp_path / 'b.db'}?durability=process-crash", tmp_path)
    # An execution that pauses and the answer that finishes it commit at least three times
    # that acknowledge something (the pause before its send, the answer, the end).
    print(f"disk waits in {CYCLES} cycles: {power_loss} by default, {process_crash} without")
    assert power_loss >= 3 * CYCLES, (power_loss, process_crash)
    # Without: only opening the file and the checkpoints (every 100 commits) wait.
    assert process_crash < CYCLES, (power_loss, process_crash)


def test_the_durability_is_chosen_by_the_store_url_or_the_store() -> None:
    from agboss.store._url import store_from

    default = store_from("sqlite:///some/agboss.db")
    assert isinstance(default, SqliteStore)
    assert default.durability is Durability.POWER_LOSS
    assert default.path == Path("some/agboss.db")
    faster = store_from("sqlite:///some/agboss.db?durability=process-crash")
    assert isinstance(faster, SqliteStore)
    assert faster.durability is Durability.PROCESS_CRASH
    assert faster.path == Path("some/agboss.db")
    assert SqliteStore("x.db", durability=Durability.PROCESS_CRASH).durability is (
        Durability.PROCESS_CRASH
    )


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("sqlite:///a.db?durability=eventually", "durability='eventually'"),
        ("sqlite:///a.db?synchronous=off", "options a SQLite store does not take: synchronous"),
    ],
)
async def test_a_durability_the_store_does_not_know_is_a_clear_error(url: str, said: str) -> None:
    from tests.apps.desk import OfficeApplication

    with pytest.raises(StoreError) as caught:
        async with test_with(OfficeApplication, store=url):
            pass
    assert said in caught.value.message
    assert caught.value.code == "store.invalid"
    assert "power-loss" in (caught.value.hint or "")
