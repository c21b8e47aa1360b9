"""The examples run as a newcomer runs them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def example_env(dropped: str = "AGBOSS_MODEL", **extra: str) -> dict[str, str]:
    """The environment an example runs in: this checkout importable, no model configured
    (the scripted one runs) unless ``extra`` sets one."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    return {**env, "PYTHONPATH": str(ROOT), **extra}


def test_the_office_example_runs_end_to_end_on_the_scripted_model(tmp_path: Path) -> None:
    env = example_env()
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


def run_approvals(tmp_path: Path, answers: str, *options: str) -> str:
    env = example_env()
    done = subprocess.run(
        [sys.executable, "-m", "examples.flow_patterns.approvals", *options],
        cwd=tmp_path,
        env=env,
        input=answers,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def test_the_approvals_example_pauses_on_both_calls_and_takes_piped_answers(
    tmp_path: Path,
) -> None:
    out = run_approvals(tmp_path, "maybe\ny\nn not this month\n")
    # The IBAN is personal data: the terminal shows it masked, the tool gets the real one.
    assert "? office-agent asks to run return-deposit-tool(lease_id='L-7', iban='****3000')" in out
    assert "? office-agent asks to book taxi for 12.50 EUR" in out
    assert "… the desk waits for 2 answer(s)" in out
    assert "  answer y, n <reason>, or y key=value …" in out  # the deposit takes no words
    assert (
        "answer: returned the deposit of L-7 to DE89 3704 0044 0532 0130 00; the call was "
        "rejected by user-1: not this month" in out
    )
    assert "audit: book-expense-tool rejected by user-1 (a decision)" in out
    assert out.rstrip().endswith("status: completed")


def test_the_approvals_example_approves_with_other_arguments(tmp_path: Path) -> None:
    out = run_approvals(tmp_path, "y\ny amount=lots\ny amount=6.25\n")
    assert "override_arguments is not a valid input of book-expense-tool" in out
    assert (
        "answer: returned the deposit of L-7 to DE89 3704 0044 0532 0130 00; booked taxi (6.25 EUR)"
        in out
    )


def test_the_approvals_example_leaves_the_execution_paused_when_answers_run_out(
    tmp_path: Path,
) -> None:
    out = run_approvals(tmp_path, "y\n")
    assert "the execution stays paused; its pauses are durable" in out
    assert out.rstrip().endswith("status: paused")


def test_the_approvals_example_reads_the_owners_own_words_with_a_reply_interpreter(
    tmp_path: Path,
) -> None:
    out = run_approvals(tmp_path, "fine\ny\nhmm\nwell, ok, but only half\n")
    # The deposit's role has no reply interpreter: its prompt does not offer words.
    assert "iban='****3000')?  [y | n <reason> | y key=value] " in out
    assert "amount=12.5)?  [y | n <reason> | y key=value | your words] " in out
    assert "could not read that (expense-reply-interpreter's model gave no answer)" in out
    assert "approved with {'purpose': 'taxi', 'amount': 6.25}" in out
    assert (
        "answer: returned the deposit of L-7 to DE89 3704 0044 0532 0130 00; booked taxi (6.25 EUR)"
        in out
    )
    assert (
        "audit: book-expense-tool approved by user-1 (in words: 'well, ok, but only half')" in out
    )


def test_the_approvals_example_shows_how_to_answer_later_and_answers_them_on_the_next_run(
    tmp_path: Path,
) -> None:
    out = run_approvals(tmp_path, "y\n")
    [command] = [line.strip() for line in out.splitlines() if " resume " in line]
    program, _, pause_id, *rest = command.split()
    assert Path(program).name == "agboss"
    assert " ".join(rest) == (
        "--app examples.flow_patterns.approvals.components:OfficeApplication --owner user-1 "
        "--approve"
    )
    assert len(pause_id) == 32
    again = run_approvals(tmp_path, "n not this month\n")
    assert "an earlier run waits on 1 answer(s): answering those first" in again
    assert "rejected by user-1: not this month" in again
    earlier, _, then = again.partition("request: ")
    assert earlier.rstrip().endswith("status: completed")  # the earlier run, finished
    assert then.rstrip().endswith("status: paused")  # then this run's own, left waiting


def test_a_parallel_run_after_one_left_waiting_answers_it_then_runs_its_two_desks(
    tmp_path: Path,
) -> None:
    run_approvals(tmp_path, "y\n")  # leaves the expense waiting
    out = run_approvals(tmp_path, "y\ny\ny\n", "--parallel")
    earlier, _, then = out.partition("request: ")
    assert "an earlier run waits on 1 answer(s)" in earlier
    assert earlier.rstrip().endswith("status: completed")
    assert "deposit-desk-agent asks" in then
    assert "expense-desk-agent asks" in then
    assert then.rstrip().endswith("status: completed")
    # What waits is said once, when it is asked — not again after each answer.
    assert then.count("… the desk waits for") == 1


def test_the_resume_command_the_example_shows_answers_the_pause(tmp_path: Path) -> None:
    out = run_approvals(tmp_path, "y\n")
    [command] = [line.strip() for line in out.splitlines() if " resume " in line]
    env = example_env("AGBOSS_")
    # Pasted as printed: the command runs from the example's folder, venv or not on the PATH.
    subprocess.run(command.split(), cwd=tmp_path, env=env, check=True, capture_output=True)
    again = run_approvals(tmp_path, "")
    assert "an earlier run's answers were recorded meanwhile; it finished:" in again
    assert "audit: book-expense-tool approved by user-1 (a decision)" in again


def _sigint_by_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_at_a_prompt_stops_the_example_at_once_without_a_traceback(
    tmp_path: Path,
) -> None:
    env = example_env()
    with subprocess.Popen(
        [sys.executable, "-u", "-m", "examples.flow_patterns.approvals"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # As a terminal starts it. A process inherits an ignored SIGINT (a suite run in the
        # background of a shell without job control), and Python keeps ignoring it: Ctrl-C
        # would do nothing, and the closed input end the example with 0, not 130.
        preexec_fn=_sigint_by_default,
    ) as running:
        assert running.stdout is not None
        seen = ""
        while "approve " not in seen:  # the first prompt: the example waits for a line
            seen += running.stdout.read(1)
        running.send_signal(signal.SIGINT)  # once: the prompt must not swallow it
        out, err = running.communicate(timeout=30)
    assert running.returncode == 130
    assert "Traceback" not in err
    assert "interrupted." in out
    assert "agboss resume" in out  # the venv's agboss, by its path


def test_an_unreachable_model_is_one_error_with_a_hint_not_a_traceback(tmp_path: Path) -> None:
    env = example_env(AGBOSS_MODEL_BASE_URL="http://127.0.0.1:9/v1")
    done = subprocess.run(
        [sys.executable, "-m", "examples.flow_patterns.approvals"],
        cwd=tmp_path,
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=100,  # under the test's own limit (120 s): a hang fails the test itself
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "[agent.failed]" in done.stderr
    assert "hint: check the provider's base URL" in done.stderr
    assert len(done.stderr.strip().splitlines()) <= 3


def test_the_parallel_variant_pauses_two_desks_at_once_and_joins_their_answers(
    tmp_path: Path,
) -> None:
    env = example_env()
    out = subprocess.run(
        [sys.executable, "-m", "examples.flow_patterns.approvals", "--parallel"],
        cwd=tmp_path,
        env=env,
        input="y\nok, but only half\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert (
        "? deposit-desk-agent asks to run return-deposit-tool(lease_id='L-7', iban='****3000')"
        in out
    )
    assert "? expense-desk-agent asks to book taxi for 12.50 EUR" in out
    assert "… the desk waits for 2 answer(s)" in out
    assert "approved with {'purpose': 'taxi', 'amount': 6.25}" in out
    deposit = "returned the deposit of L-7 to DE89 3704 0044 0532 0130 00"
    assert f"answer: {deposit} | booked taxi (6.25 EUR)" in out


def test_the_approvals_example_runs_on_an_openai_compatible_provider_when_one_is_set(
    tmp_path: Path,
) -> None:
    from tests.loopback import completion, loopback_server

    with loopback_server() as server:
        server.replies.extend(
            [
                completion(
                    tool_calls=[
                        {
                            "name": "return-deposit-tool",
                            "arguments": {"lease_id": "L-7", "iban": "<IBAN_1>"},
                        },
                        {
                            "name": "book-expense-tool",
                            "arguments": {"purpose": "taxi", "amount": 12.5},
                        },
                    ]
                ),
                completion(
                    tool_calls=[{"name": "final_answer", "arguments": {"text": "All done."}}]
                ),
            ]
        )
        env = example_env(AGBOSS_MODEL_BASE_URL=server.base_url, AGBOSS_MODEL_API_KEY="sk-loopback")
        out = subprocess.run(
            [sys.executable, "-m", "examples.flow_patterns.approvals"],
            cwd=tmp_path,
            env=env,
            input="y\nn not today\n",
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    assert f"model: {server.base_url}" in out
    assert "answer: All done." in out
    assert server.headers[0]["authorization"] == "Bearer sk-loopback"
    first = json.dumps(server.requests[0])
    assert "DE89" not in first  # the provider is sent the token, never the IBAN
    assert "<IBAN_1>" in first
    tools = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert tools[1]["content"] == "Tool error: the call was rejected by user-1: not today"


def test_the_approvals_example_asks_in_a_fake_slack_and_takes_clicks_from_the_terminal(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in example_env().items() if "SLACK" not in k}  # the fake, not yours
    done = subprocess.run(
        [sys.executable, "-m", "examples.flow_patterns.approvals", "--slack"],
        cwd=tmp_path,
        env=env,
        input="e amount=lots\ne amount=6.25\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    out = done.stdout
    assert "Slack: a fake Slack on loopback; interactions at http://127.0.0.1:" in out
    assert "  │ office-agent asks to run book-expense-tool" in out
    assert "  │ [Approve] [Reject] [Reject with reason] [Edit] [Answer in words]" in out
    assert "  the modal says: 'lots' is not a number" in out  # refused on the modal's field
    assert "  │ Approved by @U0DEMOOWNER · " in out
    assert "  │ Changed amount: 12.5 → 6.25" in out
    assert "audit: book-expense-tool approved by user-1 (a decision)" in out
    assert "answer: booked taxi (6.25 EUR)" in out
    assert out.rstrip().endswith("status: completed")
    assert not (tmp_path / ".agboss").exists()  # the fake's run leaves no store behind
