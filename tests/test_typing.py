"""What the type checker says about the public API: mypy --strict on small snippets."""

from __future__ import annotations

from pathlib import Path

from mypy import api

SNIPPET = """
from agboss import App, ToolCallApprovalDecisionDto

async def webhook(app: App) -> None:
    await app.resume("id", decision=ToolCallApprovalDecisionDto(approved=True), answered_by="m")
    await app.resume("id", decision={"approved": True}, owner_id="u")
    await app.resume("id", reply="ok, but only half", answered_by="m")
    await app.resume("id", decision={"approved": True}, reply="yes", answered_by="m")  # line 8
    await app.resume("id", answered_by="m")  # line 9
"""


def test_resume_takes_a_decision_or_a_reply_and_a_checker_rejects_both_or_neither(
    tmp_path: Path,
) -> None:
    source = tmp_path / "snippet.py"
    source.write_text(SNIPPET)
    out, _, status = api.run(
        ["--strict", "--no-incremental", "--cache-dir", str(tmp_path / "cache"), str(source)]
    )
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert status == 1
    assert {line.split(":")[1] for line in errors} == {"8", "9"}
    assert all("No overload variant" in line for line in errors)
