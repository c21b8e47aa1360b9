"""Shared test setup: the one ``env`` fixture (the test application of a module, on each store);
the applications themselves live in ``tests/apps/``."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

from agboss.testing import TestEnv, test_with
from tests.apps.recorded import recorder_for, recording
from tests.stores import NO_POSTGRES, STORE_KINDS, store_url

ROOT = Path(__file__).resolve().parent.parent

# Tests write only under temporary folders: no example database, and hypothesis's own cache
# (of the constants it finds in the code) in a folder of the run's, not in the checkout.
set_hypothesis_home_dir(tempfile.mkdtemp(prefix="agboss-hypothesis-"))
settings.register_profile("agboss", database=None)
settings.load_profile("agboss")

# What Python and the tools write for themselves; anything else new in the checkout is a test's.
_TOOLING = ("__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".venv", ".egg-info")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "application(cls, **options): the application the env fixture runs, with "
        "test_with's options; it records into the test's own `recorded` (tests/apps/recorded.py)",
    )
    config.addinivalue_line(
        "markers",
        "alone: changes what every other test shares (it restarts the PostgreSQL server): "
        "`make test` runs it by itself, after the others",
    )


@pytest.fixture(params=STORE_KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    """The store kind a test runs on: each of them in turn."""
    return str(request.param)


@pytest.fixture
def instances(request: pytest.FixtureRequest) -> int:
    """How many instances the env fixture starts: its marker's ``instances``, else one (a module
    overrides it with ``params`` to run its tests on one and on several)."""
    marker = request.node.get_closest_marker("application")
    count = marker.kwargs.get("instances", 1) if marker is not None else 1
    return int(count)


@pytest.fixture
async def env_store(kind: str, tmp_path: Path) -> AsyncIterator[str]:
    """The store the env fixture opens: a fresh one of the kind (a module overrides it with a
    store of its own making — a file in a folder it deletes, a server behind a proxy)."""
    async with store_url(kind, tmp_path) as url:
        yield url


def _marked(request: pytest.FixtureRequest) -> pytest.Mark:
    marker = request.node.get_closest_marker("application")
    if marker is None:
        pytest.fail("the env fixture needs pytest.mark.application.with_args(TheApplication)")
    return marker


@pytest.fixture
def recorded(request: pytest.FixtureRequest) -> Any:
    """What the test's application records (`tests.apps.recorded`): a fresh recorder of the
    type the application registers, which the env fixture gives every instance; ``None`` for
    an application that registers none."""
    return recorder_for(_marked(request).args[0])


@pytest.fixture
async def env(
    request: pytest.FixtureRequest, env_store: str, instances: int, recorded: Any
) -> AsyncIterator[TestEnv]:
    """The test application named by ``pytest.mark.application.with_args(TheApplication)``
    (on the test or its module: ``with_args``, since a mark given a class alone decorates it),
    on a fresh store of each kind (`env_store`), recording into the test's own `recorded`."""
    marker = _marked(request)
    application, *_ = marker.args
    options = dict(marker.kwargs)
    options["instances"] = instances
    options["dependencies"] = [*options.get("dependencies", ()), *recording(recorded)]
    async with test_with(application, store=env_store, **options) as made:
        yield made


def _untracked() -> set[str] | None:
    """The checkout's untracked and ignored paths (folders collapsed); ``None`` outside git."""
    try:
        done = subprocess.run(
            ["git", "status", "--porcelain", "--ignored", "--untracked-files=normal"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    paths = {line[3:] for line in done.stdout.splitlines() if line[:2] in ("??", "!!")}
    return {path for path in paths if not any(part in path for part in _TOOLING)}


_BEFORE: set[str] | None = None


def pytest_sessionstart(session: pytest.Session) -> None:
    global _BEFORE
    _BEFORE = _untracked()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fails the run when a test wrote into the checkout (issue 14: stores were once committed
    under folders named ``sqlite:``)."""
    after = _untracked()
    if _BEFORE is None or after is None:
        return
    strays = sorted(after - _BEFORE)
    if strays:
        print(f"\nthe tests wrote into the checkout, outside their temporary folders: {strays}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Says in one line why the PostgreSQL tests did not run, and how to run them."""
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if isinstance(report.longrepr, tuple) and report.longrepr[2] == f"Skipped: {NO_POSTGRES}"
    ]
    if skipped:
        terminalreporter.write_line(
            f"{len(skipped)} PostgreSQL tests skipped: no server is configured. Run them with "
            "`source .ci/postgres.sh && make test` (it starts a local server).",
            yellow=True,
        )
