"""A tool's call cut off mid-run is known to be in doubt, and its ``on_interrupted`` says what
happens (issue 38): before the handler of a tool that must not run twice is called, the call's
intent is committed; a process killed after that and before the result leaves an attempt with
no result, which the instance
that recovers the tree finds — ``FAIL`` fails the step with `ToolInterruptedError` and runs
nothing; ``RERUN`` (the default without a channel, which needs no intent) runs the tool again
with the same idempotency key; ``ASK`` (the default with a channel) asks the tool's channel
whether to run it again, with a pause of its own.

Each trial runs the app in a child process (`tests.apps.interrupted_app`) that dies with SIGKILL
inside the tool, then recovers the tree in this one, on both stores."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from starlette.requests import Request

from agboss import (
    AgentFailedError,
    App,
    AssemblyError,
    DtoValidationError,
    ExecutionStatus,
    FinalFailureError,
    NotPausedError,
    OnInterrupted,
    PauseKind,
    ToolHandler,
    ToolInterruptedError,
    WorkflowFinishTextDto,
    agent,
    application,
    tool,
    workflow,
)
from agboss.cli._main import cli
from agboss.components import spec_of
from agboss.enums import Outcome
from agboss.web import Caller, pause_router
from tests.apps.interrupted_app import (
    AskedPayTool,
    InterruptedRecorder,
    PaidDto,
    PayAgainTool,
    PaymentDto,
    open_app,
)
from tests.apps.office_parts import office_flow
from tests.apps.recorded import recording
from tests.stores import STORE_KINDS, store_url
from tests.test_web import serve

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "runs.jsonl"
    monkeypatch.setenv("AGBOSS_TEST_RUNS", str(path))
    return path


def ran(runs: Path) -> list[dict[str, Any]]:
    if not runs.exists():
        return []
    return [json.loads(line) for line in runs.read_text().splitlines()]


def spawn(url: str, *args: str, **env: str) -> subprocess.Popen[bytes]:
    """The app in a child process (`tests.apps.interrupted_app`), with ``env`` besides ours."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.apps.interrupted_app", url, *args],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


async def in_child(url: str, *args: str, die: bool) -> int:
    """Runs the app in a child process; its exit code (``-SIGKILL`` when it died in the
    tool)."""
    child = spawn(url, *args, AGBOSS_DIE_IN_TOOL="1" if die else "0")
    for _ in range(6000):
        code = child.poll()
        if code is not None:
            if code not in (0, -signal.SIGKILL):
                raise AssertionError(child.stderr.read() if child.stderr else code)
            return code
        await asyncio.sleep(0.01)
    child.kill()
    raise AssertionError("the child process did not finish within 60 s")


async def recovered(url: str, recorded: InterruptedRecorder | None = None) -> tuple[App, str]:
    """A new instance, once the dead holder's lease expired, that recovered the tree (recording
    into ``recorded`` when given)."""
    await asyncio.sleep(0.7)  # the child's lease (0.6 s) expires
    app = await open_app(url, dependencies=recording(recorded))
    [root] = await app.store.executions.find_roots("default", "t-1")  # running: cut off
    await app.recover()
    return app, root.execution_id


async def killed_in(url: str, tool_name: str) -> tuple[App, str]:
    """The payment with ``tool_name`` run in a child process killed inside the tool, then its
    tree recovered here: the app and the root."""
    assert await in_child(url, tool_name, die=True) == -signal.SIGKILL
    return await recovered(url)


async def cut_off_after_approval(
    url: str, tool_name: str, recorded: InterruptedRecorder | None = None
) -> tuple[App, str, str]:
    """The call approved (``tool_name``), cut off in the tool in a child process, and the tree
    recovered here (recording into ``recorded`` when given); the app, the root and the
    approval's pause id."""
    app = await open_app(url)
    try:
        paused = await app.execute(
            _workflow(app), {"text": tool_name}, owner_id="u-1", thread_id="t-1"
        )
        [approval] = paused.pending
        assert approval.pause_id is not None
    finally:
        await app.close()
    assert await in_child(url, tool_name, approval.pause_id, die=True) == -signal.SIGKILL
    app, root = await recovered(url, recorded)
    return app, root, approval.pause_id


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_rerun_tool_cut_off_mid_call_runs_again_with_the_same_key(
    kind: str, tmp_path: Path, runs: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        app, root = await killed_in(url, "pay-again-tool")
        try:
            done = await app.get(root)
            assert done.status is ExecutionStatus.COMPLETED
            assert isinstance(done.output, WorkflowFinishTextDto)
            assert "paid inv-7" in done.output.text
            again = await app.get(root, record=True)
            assert again.record is not None
            assert [s.kind for s in again.record.steps] == ["model-call", "tool-run", "model-call"]
        finally:
            await app.close()
    first, second = ran(runs)  # today's at-least-once, for a tool that deduplicates by key
    assert first["key"] == second["key"]
    assert first["pid"] != second["pid"]


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_fail_tool_cut_off_mid_call_fails_its_step_and_never_runs_again(
    kind: str, tmp_path: Path, runs: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        app, root = await killed_in(url, "pay-tool")
        try:
            with pytest.raises(ToolInterruptedError) as failed:
                await app.get(root)
            assert failed.value.code == "tool.interrupted"
            assert isinstance(failed.value, AgentFailedError)
            assert (failed.value.tool, failed.value.attempt) == ("pay-tool", 1)
            assert "pay-tool's call may have run" in failed.value.message
            await app.recover()  # a second recovery changes nothing
        finally:
            await app.close()
    assert len(ran(runs)) == 1


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_fail_tools_cut_off_call_said_to_have_run_goes_on_and_the_model_reads_it(
    kind: str, tmp_path: Path, runs: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    async with store_url(kind, tmp_path) as url:
        app, root = await killed_in(url, "pay-tool")
        try:
            with pytest.raises(FinalFailureError) as final:  # a plain retry: the same failure
                await app.retry(root, retried_by="ops-lead")
            assert "call_ran=True" in str(final.value.hint)
            done = await app.retry(
                root,
                retried_by="ops-lead",
                call_ran=True,
                call_result="inv-7 was paid at 09:14 (bank ref 7731)",
                record=True,
            )
            assert done.status is ExecutionStatus.COMPLETED
            assert done.record is not None
            [said] = done.record.pauses  # the audit trail: who said so, and what
            assert (said.kind, said.responder, said.role) == (
                PauseKind.INTERRUPTED,
                "ops-lead",
                "app.retry",
            )
            assert said.decision is not None
            assert said.decision.approved is False  # not run again: it ran
            assert said.decision.reason == "inv-7 was paid at 09:14 (bank ref 7731)"
            assert [r.retried_by for r in done.record.retries] == ["ops-lead"]
            # The decision log has it too: who said the call ran, and what it said.
            [logged] = (await app.decisions()).entries
            assert (logged.entry.kind, logged.entry.outcome, logged.entry.who) == (
                PauseKind.INTERRUPTED,
                Outcome.REJECTED,
                "ops-lead",
            )
            assert (await app.verify_decisions()).ok
        finally:
            await app.close()
    assert len(ran(runs)) == 1  # never run again
    # Recovery said it once, as a warning: a designed outcome, not an error with a trace.
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not [r for r in caplog.records if r.exc_info]


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_fail_tools_cut_off_call_said_not_to_have_run_runs_once_more_with_its_key(
    kind: str, tmp_path: Path, runs: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        app, root = await killed_in(url, "pay-tool")
        try:
            with pytest.raises(DtoValidationError):  # who says so is part of the record
                await app.retry(root, call_ran=False)
            with pytest.raises(DtoValidationError):
                await app.retry(root, retried_by="ops-lead", call_ran=False, call_result="x")
            done = await app.retry(root, retried_by="ops-lead", call_ran=False, record=True)
            assert done.status is ExecutionStatus.COMPLETED
            assert done.record is not None
            [said] = done.record.pauses
            assert said.decision is not None
            assert (said.decision.approved, said.responder) == (True, "ops-lead")
        finally:
            await app.close()
    first, second = ran(runs)
    assert first["key"] == second["key"]  # once more, with the same idempotency key


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_signed_in_owner_says_over_http_how_a_cut_off_call_went(
    kind: str, tmp_path: Path, runs: Path
) -> None:
    people = {"tok-u1": Caller(owner_id="u-1"), "tok-u2": Caller(owner_id="u-2")}

    async def bearer(request: Request) -> Caller | None:
        return people.get(request.headers.get("authorization", "").removeprefix("Bearer "))

    async with store_url(kind, tmp_path) as url:
        app, root = await killed_in(url, "pay-tool")
        server, task, port = await serve(pause_router(app, authenticate=bearer, page=False))
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:

                async def retry(token: str, **body: Any) -> httpx.Response:
                    return await http.post(
                        "/executions/retry",
                        json={"execution_id": root, **body},
                        headers={"Authorization": f"Bearer {token}"},
                    )

                theirs = await retry("tok-u2", call_ran=False)
                assert (theirs.status_code, theirs.json()["code"]) == (404, "run.unknown")
                plain = await retry("tok-u1")
                assert (plain.status_code, plain.json()["code"]) == (409, "run.failure-final")
                assert "call_ran" in plain.json()["hint"]
                said = await retry("tok-u1", call_ran=True, call_result="paid, ref 7731")
                assert said.status_code == 200, said.text
                assert said.json()["status"] == "completed"
            record = (await app.get(root, record=True)).record
            assert record is not None
            assert [entry.responder for entry in record.pauses] == ["u-1"]
        finally:
            server.should_exit = True
            await task
            await app.close()
    assert len(ran(runs)) == 1


async def payment_app() -> App:
    """``--app tests.test_interrupted:payment_app``: the payments, on the test's store."""
    return await open_app(os.environ["INTERRUPTED_TEST_STORE"])


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_agboss_retry_says_how_a_cut_off_call_went(
    kind: str, tmp_path: Path, runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with store_url(kind, tmp_path) as url:
        app, root = await killed_in(url, "pay-tool")
        await app.close()
        monkeypatch.setenv("INTERRUPTED_TEST_STORE", url)
        target = ["--app", "tests.test_interrupted:payment_app", "--store", url]
        invoke = functools.partial(asyncio.to_thread, CliRunner().invoke, cli)
        plain = await invoke(["retry", root, *target])
        assert plain.exit_code == 1
        assert "--call-ran" in plain.output  # the way forward, in the command's own words
        both = await invoke(["retry", root, *target, "--call-ran", "x", "--call-not-run"])
        assert both.exit_code == 2
        done = await invoke(["retry", root, *target, "--by", "ops", "--call-ran", "paid", "--json"])
        assert done.exit_code == 0, done.output
        assert json.loads(done.output)["status"] == "completed"
    assert len(ran(runs)) == 1


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_an_approved_fail_tool_cut_off_after_the_answer_is_not_paid_twice(
    kind: str, tmp_path: Path, runs: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        app, root, _ = await cut_off_after_approval(url, "approved-pay-tool")
        try:
            with pytest.raises(ToolInterruptedError):
                await app.get(root)
        finally:
            await app.close()
    assert len(ran(runs)) == 1


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_call_that_was_not_cut_off_is_not_in_doubt(
    kind: str, tmp_path: Path, runs: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        assert await in_child(url, "pay-tool", die=False) == 0
        app = await open_app(url)
        try:
            assert await app.store.executions.find_roots("default", "t-1") == []  # completed
            assert await app.recover() == []
        finally:
            await app.close()
    assert len(ran(runs)) == 1


def _workflow(app: App) -> type[Any]:
    return app.assembly.workflows_by_name["payment-workflow"].cls


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_holder_stalled_mid_call_and_taken_over_records_no_second_run(
    kind: str, tmp_path: Path, runs: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        child = spawn(url, "pay-tool", AGBOSS_STOP_IN_TOOL="1")
        try:
            for _ in range(3000):  # until it stopped itself inside the tool
                if ran(runs):
                    break
                await asyncio.sleep(0.01)
            assert len(ran(runs)) == 1
            app, root = await recovered(url)  # past its lease: taken over
            try:
                with pytest.raises(ToolInterruptedError):
                    await app.get(root)
                os.kill(child.pid, signal.SIGCONT)  # the old holder comes back
                for _ in range(3000):
                    if child.poll() is not None:
                        break
                    await asyncio.sleep(0.01)
                assert child.poll() is not None
                with pytest.raises(ToolInterruptedError):  # its late result was fenced off
                    await app.get(root)
            finally:
                await app.close()
        finally:
            if child.poll() is None:
                os.kill(child.pid, signal.SIGCONT)
                child.kill()
    assert len(ran(runs)) == 1


# ---- ASK: a person decides whether a call that may have run runs again -------------------


def test_a_tool_with_a_channel_is_asked_about_and_one_without_runs_again_by_default() -> None:
    asked, again = spec_of(AskedPayTool), spec_of(PayAgainTool)
    assert asked is not None
    assert again is not None
    assert asked.on_interrupted is OnInterrupted.ASK
    assert again.on_interrupted is OnInterrupted.RERUN


async def test_ask_on_a_tool_without_a_channel_is_a_wiring_error(tmp_path: Path) -> None:
    @tool(
        name="blind-pay-tool",
        description="Pays with nobody to ask",
        input=PaymentDto,
        output=PaidDto,
        on_interrupted=OnInterrupted.ASK,
    )
    class BlindPayTool(ToolHandler[PaymentDto, PaidDto]):
        def run(self, args: PaymentDto) -> PaidDto:
            return PaidDto(status="paid")

    @agent(
        name="blind-agent", description="Pays", prompt="Pay.", model="test/m", tools=[BlindPayTool]
    )
    class BlindAgent: ...

    @workflow(name="blind-workflow", version="1", flow=office_flow(BlindAgent))
    class BlindWorkflow: ...

    @application(name="blind-application", workflows=[BlindWorkflow])
    class BlindApplication: ...

    with pytest.raises(AssemblyError) as failed:
        await App.create(BlindApplication, store=f"sqlite:///{tmp_path / 'a.db'}")
    [violation] = [v for v in failed.value.violations if v.rule == "tool.ask-without-channel"]
    assert violation.component == "blind-pay-tool"
    assert "channel=" in violation.message


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_an_asked_tool_cut_off_mid_call_asks_and_runs_again_once_when_approved(
    kind: str, tmp_path: Path, runs: Path
) -> None:
    recorded = InterruptedRecorder()
    async with store_url(kind, tmp_path) as url:
        app, root, approval_id = await cut_off_after_approval(url, "asked-pay-tool", recorded)
        try:
            rested = await app.get(root)
            assert rested.status is ExecutionStatus.PAUSED
            [question] = rested.pending
            assert question.ask.kind is PauseKind.INTERRUPTED
            assert question.pause_id not in (None, approval_id)  # its own id
            assert question.ask.tool == "asked-pay-tool"
            assert question.ask.arguments == {"invoice": "inv-7", "amount": 120.0}
            assert (
                recorded.asked[-1].kind is PauseKind.INTERRUPTED
            )  # its channel was told what it asks
            assert recorded.asked[-1].arguments == PaymentDto(invoice="inv-7", amount=120.0)
            [entry] = (await app.pending(owner_id="u-1")).entries
            assert entry.pause.ask.kind is PauseKind.INTERRUPTED
            described = await app.describe_pause(str(question.pause_id))
            assert described.pause.ask.kind is PauseKind.INTERRUPTED
            assert app.arguments_schema(question) == {}  # nothing to edit: as it was, or not
            assert question.pause_id is not None
            with pytest.raises(DtoValidationError, match="runs again as it was"):
                await app.resume(
                    question.pause_id,
                    decision={"approved": True, "override_arguments": {"amount": 1.0}},
                    owner_id="u-1",
                )
            with pytest.raises(NotPausedError):  # the approval was answered and taken
                await app.resume(approval_id, decision={"approved": True}, owner_id="u-1")
            done = await app.resume(question.pause_id, decision={"approved": True}, owner_id="u-1")
            assert done.status is ExecutionStatus.COMPLETED
            assert isinstance(done.output, WorkflowFinishTextDto)
            assert "paid inv-7" in done.output.text
            record = (await app.get(root, record=True)).record
            assert record is not None
            assert [s.kind for s in record.steps] == ["model-call", "tool-run", "model-call"]
            assert [(p.kind, p.responder, p.step.kind) for p in record.pauses] == [
                (PauseKind.APPROVAL, "u-1", "tool-run"),
                (PauseKind.INTERRUPTED, "u-1", "tool-interrupted"),
            ]
            assert await app.recover() == []  # nothing left to move
        finally:
            await app.close()
    first, second = ran(runs)
    assert first["key"] == second["key"]  # the same call, run again
    assert (first["attempt"], second["attempt"]) == (1, 2)


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_an_asked_tool_whose_rerun_is_rejected_is_not_run_and_the_model_is_told(
    kind: str, tmp_path: Path, runs: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        app, root, _ = await cut_off_after_approval(url, "asked-pay-tool")
        try:
            [question] = (await app.get(root)).pending
            assert question.pause_id is not None
            done = await app.resume(
                question.pause_id,
                decision={"approved": False, "reason": "the bank shows it paid"},
                owner_id="u-1",
            )
            assert done.status is ExecutionStatus.COMPLETED
            assert isinstance(done.output, WorkflowFinishTextDto)
            told = done.output.text  # the scripted model says what the tool answered
            assert "asked-pay-tool's call may have run" in told
            assert "was not run again: u-1 declined: the bank shows it paid" in told
            record = (await app.get(root, record=True)).record
            assert record is not None
            [_, refused, _] = record.steps
            assert refused.kind == "tool-run"
            assert refused.error is not None
            [_, answered] = record.pauses
            assert answered.kind is PauseKind.INTERRUPTED
            assert answered.decision is not None
            assert not answered.decision.approved
        finally:
            await app.close()
    assert len(ran(runs)) == 1  # never run again


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_rerun_that_is_cut_off_too_asks_again_for_its_next_attempt(
    kind: str, tmp_path: Path, runs: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        app, root, _ = await cut_off_after_approval(url, "asked-pay-tool")
        try:
            [first] = (await app.get(root)).pending
            assert first.pause_id is not None
        finally:
            await app.close()
        assert await in_child(url, "asked-pay-tool", first.pause_id, die=True) == -signal.SIGKILL
        app, root = await recovered(url)
        try:
            [second] = (await app.get(root)).pending
            assert second.ask.kind is PauseKind.INTERRUPTED
            assert second.pause_id not in (None, first.pause_id)
            assert second.pause_id is not None
            done = await app.resume(second.pause_id, decision={"approved": True}, owner_id="u-1")
            assert done.status is ExecutionStatus.COMPLETED
            record = (await app.get(root, record=True)).record
            assert record is not None
            assert [p.kind for p in record.pauses] == [
                PauseKind.APPROVAL,
                PauseKind.INTERRUPTED,
                PauseKind.INTERRUPTED,
            ]
        finally:
            await app.close()
    assert [(r["attempt"], r["key"] == ran(runs)[0]["key"]) for r in ran(runs)] == [
        (1, True),
        (2, True),
        (3, True),
    ]
