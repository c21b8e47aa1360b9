"""The suite cannot hang: a test that never ends fails within the project's per-test limit,
naming itself and printing where it waited."""

from __future__ import annotations

import ast
import subprocess
import sys
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.conftest import ROOT

_HANGING = """
import asyncio
import threading


def test_waits_on_a_lock_forever() -> None:
    threading.Event().wait()


async def test_awaits_forever() -> None:
    await asyncio.Event().wait()


def test_passes() -> None:
    assert True
"""


def test_the_project_sets_a_per_test_limit_that_interrupts_where_a_test_waits() -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]
    limit = options["ini_options"]["timeout"]
    assert 0 < limit <= 300
    assert options["ini_options"]["timeout_method"] == "signal"


def test_a_hanging_test_fails_within_the_limit_and_names_itself(tmp_path: Path) -> None:
    (tmp_path / "test_hangs.py").write_text(_HANGING)
    started = time.monotonic()
    # The project's own configuration, its limit shortened so that the check takes seconds.
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-c",
            str(ROOT / "pyproject.toml"),
            "--rootdir",
            str(tmp_path),
            "-p",
            "no:cacheprovider",
            "-o",
            "timeout=2",
            str(tmp_path / "test_hangs.py"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    took = time.monotonic() - started
    assert done.returncode == 1, done.stdout + done.stderr
    assert "2 failed, 1 passed" in done.stdout, done.stdout
    assert "Timeout (>2.0s)" in done.stdout  # it says why
    assert "test_waits_on_a_lock_forever" in done.stdout
    assert "test_awaits_forever" in done.stdout
    assert "test_hangs.py:7: " in done.stdout  # where it waited
    assert took < 40


def test_every_postgresql_test_is_skipped_for_one_reason_the_last_line_counts() -> None:
    # The suite's last line counts the PostgreSQL tests it skipped by their reason: a test
    # skipped with another one (it once said 274 of 294) goes uncounted.
    from tests.stores import NO_POSTGRES

    own_marks = ("skipif(" + "POSTGRES_URL", NO_POSTGRES.split(" (")[0])
    elsewhere = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "tests").rglob("*.py")
        if path.name not in ("stores.py", Path(__file__).name)
        and any(mark in path.read_text() for mark in own_marks)
    ]
    assert elsewhere == [], f"use tests.stores.needs_postgres ({NO_POSTGRES!r}) in {elsewhere}"


def _limit_of(function: ast.FunctionDef | ast.AsyncFunctionDef, default: float) -> float:
    """A test's own limit: its ``@pytest.mark.timeout(n)``, else the project's."""
    for decorator in function.decorator_list:
        if (
            isinstance(decorator, ast.Call)
            and ast.unparse(decorator.func).endswith("mark.timeout")
            and decorator.args
            and isinstance(decorator.args[0], ast.Constant)
        ):
            return float(decorator.args[0].value)
    return default


def _parsed(path: Path) -> ast.Module:
    """A file's syntax tree, parsed on a thread of its own: CPython 3.11's parser checks its
    recursion against the calling thread's count, which a test run before in this worker can
    leave off ("AST constructor recursion depth mismatch"); a new thread starts at zero."""
    with ThreadPoolExecutor(max_workers=1) as parser:
        return parser.submit(ast.parse, path.read_text()).result()


def test_no_test_waits_on_anything_longer_than_its_own_limit() -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]
    default = float(options["ini_options"]["timeout"])
    over = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        for function in ast.walk(_parsed(path)):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if not function.name.startswith("test_"):
                continue
            limit = _limit_of(function, default)
            for call in ast.walk(function):
                if not isinstance(call, ast.Call):
                    continue
                # Playwright's expectations count in milliseconds.
                unit = 1000 if ast.unparse(call.func).rpartition(".")[2].startswith("to_") else 1
                for keyword in call.keywords:
                    value = keyword.value
                    if (
                        keyword.arg == "timeout"
                        and isinstance(value, ast.Constant)
                        and isinstance(value.value, int | float)
                        and value.value / unit >= limit
                    ):
                        seconds = value.value / unit
                        over.append(f"{path.name}::{function.name} waits {seconds} s")
    assert over == []  # a subprocess or wait that outlives the test hangs the run instead
