"""The examples run as a newcomer runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_office_example_runs_end_to_end_on_the_scripted_model(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGBOSS_MODEL")}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-m", "examples.flow_patterns.office"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "ran return-deposit-tool {'lease_id': 'L-7'}" in done.stdout
    assert "ran book-expense-tool {'purpose': 'taxi', 'amount': 12.5}" in done.stdout
    assert "answer: returned the deposit of L-7; booked taxi (12.50 EUR)" in done.stdout
    assert (tmp_path / ".agboss" / "agboss.db").exists()
