"""The `agboss` command line, over a real store of each kind."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agboss import WorkflowStartTextDto
from agboss.cli._main import cli
from agboss.testing import test_with
from tests.apps.desk import (
    DeskDepositApprovalChannel,
    DeskRecorder,
    OfficeAgent,
    OfficeApplication,
    OfficeWorkflow,
)
from tests.interrupting import cut_off_in_tool
from tests.stores import STORE_KINDS, command_url
from tests.test_pauses import BOTH, REQUEST
from tests.test_round_trips import ASK, DONE

APP = "tests.apps.desk:OfficeApplication"


async def _paused(url: str) -> str:
    async with test_with(OfficeApplication, store=url) as env:
        env.mock_llm(OfficeAgent).then_return(BOTH)
        env.mock_of(DeskDepositApprovalChannel)
        result = await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
        return result.execution_id


@pytest.fixture(params=STORE_KINDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A store URL the commands open themselves (each in its own event loop)."""
    with command_url(request.param, tmp_path) as made:
        yield made


def test_migrate_list_resume_and_cancel_from_the_command_line(url: str) -> None:
    runner = CliRunner()
    migrated = runner.invoke(cli, ["migrate", "--store", url])
    assert migrated.exit_code == 0, migrated.output
    assert "schema version" in migrated.output
    execution_id = asyncio.run(_paused(url))
    listed = runner.invoke(cli, ["pauses", "list", "--app", APP, "--store", url, "--json"])
    assert listed.exit_code == 0, listed.output
    entries = [json.loads(line) for line in listed.output.splitlines()]
    assert {e["execution_id"] for e in entries} == {execution_id}
    [owner] = [e for e in entries if e["pause_id"] is not None]
    assert [e["pause_id"] for e in entries if e["answered_by"] == "channel"] == [None]
    shown = runner.invoke(cli, ["pauses", "show", owner["pause_id"], "--app", APP, "--store", url])
    assert shown.exit_code == 0, shown.output
    assert "pending" in shown.output

    def resume(*answer: str) -> Any:
        command = ["resume", owner["pause_id"], "--app", APP, "--store", url, "--owner", "user-1"]
        return runner.invoke(cli, [*command, *answer])

    answered = resume("--reject", "--reason", "not now", "--json")
    assert answered.exit_code == 0, answered.output
    assert json.loads(answered.output)["approved"] is False
    retried = resume("--reject", "--reason", "not now")
    assert retried.exit_code == 0, retried.output
    assert "already rejected by user-1 (not now): nothing new recorded" in retried.output
    again = resume("--approve")
    assert again.exit_code == 1
    assert "run.not-paused" in again.output
    show = ["pauses", "show", owner["pause_id"], "--app", APP, "--store", url, "--json"]
    answered_shown = json.loads(runner.invoke(cli, show).output)
    assert answered_shown["status"] == "resolved"  # recorded; the tree moves with a pass
    assert answered_shown["responder"] == "user-1"
    assert answered_shown["resolved_at"] is not None
    # Recorded against the question it decided: the digest the question shows.
    assert len(answered_shown["digest"]) == 64
    assert answered_shown["decision"] == {
        "approved": False,
        "reason": "not now",
        "digest": answered_shown["digest"],
    }
    cancelled = runner.invoke(cli, ["cancel", "th-typo", "--app", APP, "--store", url])
    assert cancelled.exit_code == 1
    assert "thread.unknown" in cancelled.output


def _owner_pause(runner: CliRunner, url: str) -> dict[str, Any]:
    """A paused desk execution's thread-owner pause, as `pauses list --json` lists it."""
    asyncio.run(_paused(url))
    listed = runner.invoke(cli, ["pauses", "list", "--app", APP, "--store", url, "--json"])
    [owner] = [e for e in map(json.loads, listed.output.splitlines()) if e["pause_id"]]
    return owner


def test_the_table_shows_whole_pause_ids_and_data_as_it_is_not_as_markup(url: str) -> None:
    runner = CliRunner()
    owner = _owner_pause(runner, url)
    table = runner.invoke(cli, ["pauses", "list", "--app", APP, "--store", url])
    assert table.exit_code == 0, table.output
    assert owner["pause_id"] in table.output.replace("│", "").replace("\n", "").replace(" ", "")
    command = ["resume", owner["pause_id"], "--app", APP, "--store", url, "--owner", "user-1"]
    reason = "[VIP] customer [red]angry[/red]"
    answered = runner.invoke(cli, [*command, "--reject", "--reason", reason])
    assert answered.exit_code == 0, answered.output
    assert f"({reason})" in answered.output


def test_a_hint_names_the_commands_flags_not_python_arguments(url: str) -> None:
    runner = CliRunner()
    owner = _owner_pause(runner, url)
    command = ["resume", owner["pause_id"], "--app", APP, "--store", url, "--approve"]
    refused = runner.invoke(cli, [*command, "--answered-by", "clerk-3"])
    assert refused.exit_code == 1
    assert "pause.wrong-answerer" in refused.output
    assert "--owner" in refused.output
    assert "owner_id=" not in refused.output


def test_an_answer_with_other_arguments_says_what_was_decided(url: str) -> None:
    runner = CliRunner()
    owner = _owner_pause(runner, url)
    command = ["resume", owner["pause_id"], "--app", APP, "--store", url, "--owner", "user-1"]
    button = '{"approved": true, "override_arguments": {"purpose": "taxi", "amount": 6.25}}'
    answered = runner.invoke(cli, [*command, "--reply", button])
    assert answered.exit_code == 0, answered.output
    assert "approved by user-1 with" in answered.output
    assert "6.25" in answered.output


def test_recover_refuses_to_run_passes_without_the_applications_models(url: str) -> None:
    done = CliRunner().invoke(cli, ["recover", "--app", APP, "--store", url])
    assert done.exit_code != 0
    assert "AGBOSS_MODEL_BASE_URL" in done.output


@pytest.mark.parametrize(
    "flags",
    [["--approve", "--reject"], ["--reject", "--approve"], ["--approve", "--reply", "ok"], []],
)
def test_contradictory_answers_are_a_usage_error_and_record_nothing(
    url: str, flags: list[str]
) -> None:
    runner = CliRunner()
    owner = _owner_pause(runner, url)
    command = ["resume", owner["pause_id"], "--app", APP, "--store", url, "--owner", "user-1"]
    refused = runner.invoke(cli, [*command, *flags])
    assert refused.exit_code == 2, refused.output
    named = [flag for flag in flags if flag.startswith("--")]
    for flag in named:
        assert flag in refused.output
    if named:
        assert "contradict" in refused.output
    listed = runner.invoke(cli, ["pauses", "list", "--app", APP, "--store", url, "--json"])
    assert owner["pause_id"] in listed.output  # still waiting: nothing was recorded


def test_off_a_terminal_the_table_shows_every_column_whole(url: str) -> None:
    runner = CliRunner()  # its output is not a terminal, as a pipe or a log
    owner = _owner_pause(runner, url)
    table = runner.invoke(cli, ["pauses", "list", "--app", APP, "--store", url])
    assert table.exit_code == 0, table.output
    lines = table.output.splitlines()
    [header] = [line for line in lines if "pause id" in line]
    for column in ("asked", "owner", "agent", "channel", "tool call"):
        assert column in header, column
    [row] = [line for line in lines if owner["pause_id"] in line]  # one line, id whole
    arguments = ", ".join(f"{k}={v!r}" for k, v in owner["arguments"].items())
    assert f"{owner['tool']}({arguments})" in row


def test_a_question_whether_to_run_a_call_again_is_listed_with_its_kind(url: str) -> None:
    async def interrupted() -> str:
        async with test_with(OfficeApplication, store=url) as env:
            env.mock_llm(OfficeAgent).then_return(ASK, DONE)
            result = await env.app.execute(
                OfficeWorkflow, WorkflowStartTextDto(text="Book the taxi"), owner_id="user-1"
            )
            [approval] = result.pending
            assert approval.pause_id is not None
            question = await cut_off_in_tool(
                env, approval.pause_id, DeskRecorder(), owner_id="user-1"
            )
            assert question.pause_id is not None
            return question.pause_id

    pause_id = asyncio.run(interrupted())
    runner = CliRunner()
    listed = runner.invoke(cli, ["pauses", "list", "--app", APP, "--store", url, "--json"])
    assert listed.exit_code == 0, listed.output
    [entry] = [json.loads(line) for line in listed.output.splitlines()]
    assert (entry["pause_id"], entry["kind"]) == (pause_id, "interrupted")
    assert entry["arguments"] == {"purpose": "taxi", "amount": 12.5}  # as it was approved
    table = runner.invoke(cli, ["pauses", "list", "--app", APP, "--store", url])
    assert "interrupted" in table.output
    show = ["pauses", "show", pause_id, "--app", APP, "--store", url, "--json"]
    assert json.loads(runner.invoke(cli, show).output)["kind"] == "interrupted"


def test_a_duration_past_a_hundred_years_or_in_other_digits_is_a_usage_error(
    tmp_path: Path,
) -> None:
    runner = CliRunner()
    store = f"sqlite:///{tmp_path / 'agboss.db'}"
    for given in ("99999999999999999999h", "999999999d", "٣h", "36501d"):
        for option in ("--older-than", "--expiring-within"):
            command = ["pauses", "list", "--app", APP, "--store", store, option, given]
            result = runner.invoke(cli, command)
            assert result.exit_code == 2, (given, result.output)
            assert "Traceback" not in result.output
            assert "Error: Invalid value" in result.output
            assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_hint_names_commands_and_flags_that_exist_here(tmp_path: Path) -> None:
    runner = CliRunner()
    store = f"sqlite:///{tmp_path / 'agboss.db'}"
    assert runner.invoke(cli, ["migrate", "--store", store]).exit_code == 0
    revoke = ["standing", "revoke", "sd-nope", "--app", APP, "--store", store, "--by", "ops"]
    unknown = runner.invoke(cli, revoke)
    assert unknown.exit_code == 1
    assert "agboss standing list" in unknown.output
    assert "app.standing()" not in unknown.output
    listed = runner.invoke(cli, ["pauses", "list", "--app", APP, "--store", store, "--limit", "0"])
    assert listed.exit_code == 1
    assert "--limit" in listed.output
    assert "after=" not in listed.output


def test_a_command_that_only_reads_never_makes_a_store(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = tmp_path / "nosuchdir" / "x.db"
    for command in (["pauses", "list"], ["executions", "failed"], ["standing", "list"]):
        result = runner.invoke(cli, [*command, "--app", APP, "--store", f"sqlite:///{missing}"])
        assert result.exit_code == 1, (command, result.output)
        assert "store.unavailable" in result.output
        assert "agboss migrate" in result.output
    assert not missing.exists()
    assert not missing.parent.exists()
