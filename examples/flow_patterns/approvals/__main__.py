"""Two approvals at once, answered in the terminal: ``python -m examples.flow_patterns.approvals``.

The agent calls both tools in one turn; both calls pause. Each is answered on its own, by its
pause id, the way a webhook would: ``y`` approves, ``n <reason>`` rejects (the model reads the
reason), ``y amount=6.25`` approves with other arguments. The expense also takes the owner's
own words (``ok, but only half``), read by its role's reply interpreter. Answers may be piped
in::

    printf 'y\\nn not this month\\n' | python -m examples.flow_patterns.approvals

``--web`` answers on the approvals page of `agboss.web` instead, served on 127.0.0.1 (``--port``,
8765 by default; 0 for any free port): open the link it prints.

``--slack`` asks the expense in Slack (`agboss.slack`): a fake Slack on loopback whose
buttons you click in the terminal, or your workspace when its settings are set
(``examples/flow_patterns/approvals/slack.py``, docs/slack.md).

``--parallel`` runs the parallel variant: a deposit desk and an expense desk, two agents
launched at once on the same request, each pausing on its own approval, joined at the end.

With ``AGBOSS_MODEL_BASE_URL`` (and ``AGBOSS_MODEL_API_KEY``, ``AGBOSS_MODEL_NAME``) set, the
agent runs on that OpenAI-compatible provider; otherwise a scripted model stands in.

The pauses are durable: stop it (Ctrl-C, or the end of piped answers) and it prints the pause
ids with the ``agboss resume`` command that answers each; the next run answers what still
waits (from the inbox) before it takes a new request.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import threading
from pathlib import Path
from typing import Any

from agboss import (
    AgbossError,
    App,
    DtoValidationError,
    ExecutionOutput,
    ExecutionStatus,
    PendingPause,
    ReplyInterpreterMissingError,
    ToolCallApprovalDecisionDto,
    UninterpretableReplyError,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
)
from agboss.models import ModelProvider
from agboss.models.openai import OpenAIProvider
from examples.flow_patterns.approvals.components import (
    OfficeApplication,
    OfficeWorkflow,
    ParallelOfficeWorkflow,
)
from examples.flow_patterns.desk_model import scripted_provider

DEFAULT_SLACK_REQUEST = "Book the taxi to the airport, 12.50 euros."
DEFAULT_REQUEST = (
    "Return L-7's deposit to DE89 3704 0044 0532 0130 00 and book the taxi, 12.50 euros."
)
OWNER = "user-1"
APPLICATION = "examples.flow_patterns.approvals.components:OfficeApplication"


class Lines:
    """The terminal's lines, read on a daemon thread: a blocking ``readline`` on the event
    loop's thread would hold Ctrl-C until Enter, and would keep the process alive after."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._lines: asyncio.Queue[str] = asyncio.Queue()
        threading.Thread(target=self._read, daemon=True, name="terminal").start()

    def _read(self) -> None:
        while True:
            line = sys.stdin.readline()
            self._loop.call_soon_threadsafe(self._lines.put_nowait, line)
            if not line:
                return

    async def next(self) -> str:
        """The next line; ``""`` at the end of the input."""
        return await self._lines.get()


def provider() -> tuple[ModelProvider, str]:
    """The real provider when one is configured, else the scripted model."""
    real = OpenAIProvider.from_env()
    if real is None:
        return scripted_provider(), "a scripted model (set AGBOSS_MODEL_BASE_URL for a real one)"
    return real, os.environ["AGBOSS_MODEL_BASE_URL"]


def parse_answer(text: str, arguments: dict[str, Any]) -> ToolCallApprovalDecisionDto | None:
    """``y``, ``n <reason>`` or ``y key=value …`` as a decision; ``None`` if it is none of them.

    ``key=value`` pairs change those arguments of the call and keep the others.
    """
    word, _, rest = text.strip().partition(" ")
    if word.lower() in ("y", "yes"):
        overrides: dict[str, Any] = {}
        for pair in rest.split():
            key, _, value = pair.partition("=")
            try:
                overrides[key] = json.loads(value)
            except ValueError:
                overrides[key] = value
        return ToolCallApprovalDecisionDto(
            approved=True, override_arguments={**arguments, **overrides} if overrides else None
        )
    if word.lower() in ("n", "no"):
        return ToolCallApprovalDecisionDto(approved=False, reason=rest.strip() or None)
    return None


def show(pause: PendingPause) -> str:
    """A pending pause, as a person reads it."""
    shown = ", ".join(f"{key}={value!r}" for key, value in pause.ask.arguments.items())
    return f"{pause.ask.tool}({shown})"


def verdict_of(result: ExecutionOutput, pause: PendingPause) -> str:
    """How the pause was decided, read back from the audit trail."""
    assert result.record is not None
    for entry in result.record.pauses:
        call = entry.step.tool_call
        same = call is not None and (call.tool, call.call_id) == (pause.ask.tool, pause.ask.call_id)
        if same and entry.decision is not None and entry.step.item_index == pause.item_index:
            decision = entry.decision
            if not decision.approved:
                return f"rejected{f' ({decision.reason})' if decision.reason else ''}"
            if decision.override_arguments:
                return f"approved with {decision.override_arguments}"
            return "approved"
    return "answered"


def agboss_command() -> str:
    """The ``agboss`` command as it runs from here: the virtual environment's, when this runs
    in one that is not on the PATH (``make demo``'s ``.venv``)."""
    beside = Path(sys.executable).parent / "agboss"
    if not beside.exists() or shutil.which("agboss") == str(beside):
        return "agboss"
    try:
        return str(beside.relative_to(Path.cwd()))
    except ValueError:
        return str(beside)


def how_to_answer_later(pending: list[PendingPause]) -> None:
    """The waiting pauses, and the commands that answer them from any terminal."""
    print("the execution stays paused; its pauses are durable. Answer them later with")
    command = agboss_command()
    for pause in pending:
        print(f"  {show(pause)}:")
        answer = f"resume {pause.pause_id} --app {APPLICATION} --owner {OWNER} --approve"
        print(f"    {command} {answer}")
    print("  (or --reject --reason '…'), then `make demo` again to see the tree finish;")
    print("  or just `make demo` again: it answers what still waits first.")


async def answer_all(app: App, result: ExecutionOutput, lines: Lines) -> ExecutionOutput:
    """Asks in the terminal for each pending pause, and resumes each by its id."""
    while result.status is ExecutionStatus.PAUSED:
        pause = result.pending[0]
        assert pause.pause_id is not None  # thread-owner pauses list their id
        words = " | your words" if app.accepts_reply(pause) else ""
        while True:
            print(f"approve {show(pause)}?  [y | n <reason> | y key=value{words}] ", end="")
            sys.stdout.flush()
            try:
                line = await lines.next()
            except asyncio.CancelledError:  # Ctrl-C
                print("\ninterrupted.")
                how_to_answer_later(result.pending)
                raise
            if not line:
                print("\nno more answers.")
                how_to_answer_later(result.pending)
                return result
            if not sys.stdin.isatty():
                print(line.rstrip())  # echo piped answers, so the transcript reads like a session
            decision = parse_answer(line, pause.ask.arguments)
            if decision is None and not words:
                print("  answer y, n <reason>, or y key=value …")
                continue
            try:
                if decision is not None:
                    result = await app.resume(
                        pause.pause_id, decision=decision, owner_id=OWNER, record=True
                    )
                else:  # the owner's own words, read by the role's reply interpreter
                    result = await app.resume(
                        pause.pause_id, reply=line.strip(), owner_id=OWNER, record=True
                    )
            except (DtoValidationError, ReplyInterpreterMissingError) as error:
                print(f"  {error.message} — answer y, n <reason>, or y key=value …")
                continue
            except UninterpretableReplyError as error:  # the pause keeps waiting: ask again
                print(f"  could not read that ({error.reason}); please say it differently")
                continue
            break
        print(f"  {verdict_of(result, pause)}; {len(result.pending)} answer(s) still open")
    return result


def report(result: ExecutionOutput) -> None:
    """The finished execution's audit trail and answer."""
    if result.status is ExecutionStatus.COMPLETED:
        assert result.record is not None
        for entry in result.record.pauses:
            tool = entry.step.tool_call.tool if entry.step.tool_call else "?"
            verdict = "approved" if entry.decision and entry.decision.approved else "rejected"
            how = f"in words: {entry.reply!r}" if entry.reply is not None else "a decision"
            print(f"  audit: {tool} {verdict} by {entry.responder} ({how})")
        print(f"answer: {result.output_as(WorkflowFinishTextDto).text}")
        # The questions above masked the IBAN; this is the application's answer to its own
        # caller, who gave it: not masked (docs/pii.md, "What is not masked").
        print("  (your own answer, with the values you gave: not masked, as the questions were)")
    print(f"status: {result.status.value}")


async def earlier(app: App) -> ExecutionOutput | None:
    """An execution of an earlier run that still waits for this owner, if any (the inbox),
    after moving any answer recorded meanwhile (``agboss resume`` only records it)."""
    for moved in await app.recover():
        if moved.status is ExecutionStatus.COMPLETED:
            print("an earlier run's answers were recorded meanwhile; it finished:")
            report(await app.get(moved.execution_id, record=True))
    page = await app.pending(owner_id=OWNER, limit=1)
    if not page.entries:
        return None
    return await app.get(page.entries[0].execution_id, record=True)


async def main(
    request: str,
    *,
    parallel: bool = False,
    web: bool = False,
    slack: bool = False,
    port: int = 8765,
) -> None:
    """Answers what an earlier run left waiting, else runs one request, answering its
    approvals in the terminal (or on the approvals page, with ``web``; in Slack, with
    ``slack``)."""
    model_provider, label = provider()
    if slack:
        from examples.flow_patterns.approvals.slack import slack_demo  # needs slack_sdk

        print(f"office desk with approvals in Slack — model: {label}")
        terminal = Lines()
        try:
            await slack_demo(request, model_provider, OWNER, terminal.next, report, port=port)
        finally:
            await model_provider.aclose()
        return
    workflow = ParallelOfficeWorkflow if parallel else OfficeWorkflow
    shape = "two desks in parallel" if parallel else "one desk"
    print(f"office desk with approvals ({shape}) — model: {label}")
    lines = None if web else Lines()
    try:
        async with await App.create(OfficeApplication, providers=[model_provider]) as app:
            left = await earlier(app)
            if left is not None:
                waiting = len(left.pending)
                print(f"an earlier run waits on {waiting} answer(s): answering those first")
                if await answered(app, left, lines, port) is not ExecutionStatus.COMPLETED:
                    return  # still waiting: the answers ran out before this run's own
            print(f"request: {request}")
            result = await app.execute(workflow, WorkflowStartTextDto(text=request), owner_id=OWNER)
            await answered(app, result, lines, port)
    finally:
        await model_provider.aclose()


async def answered(
    app: App, result: ExecutionOutput, lines: Lines | None, port: int
) -> ExecutionStatus:
    """Answers an execution's questions — in the terminal, or on the page when ``lines`` is
    ``None`` — and reports it; where it stands then."""
    if lines is not None:
        done = await answer_all(app, result, lines)
        report(done)
        return done.status
    from examples.flow_patterns.approvals.web import serve_page  # needs uvicorn

    try:
        done = await serve_page(app, result, owner=OWNER, port=port, report=report)
    except asyncio.CancelledError:  # Ctrl-C
        print("\ninterrupted.")
        how_to_answer_later((await app.get(result.execution_id)).pending)
        raise
    return done.status


def run(argv: list[str]) -> int:
    """The command: its exit status, with an error shown as one sentence and a hint."""
    parser = argparse.ArgumentParser(prog="python -m examples.flow_patterns.approvals")
    parser.add_argument("request", nargs="*", help="what the office is asked to do")
    parser.add_argument("--parallel", action="store_true", help="two desks at once")
    parser.add_argument("--web", action="store_true", help="answer on the approvals page")
    parser.add_argument("--slack", action="store_true", help="answer in (a fake) Slack")
    parser.add_argument("--port", type=int, default=8765, help="the page's port (0: any)")
    options = parser.parse_args(argv)
    default = DEFAULT_SLACK_REQUEST if options.slack else DEFAULT_REQUEST
    request = " ".join(options.request) or default
    try:
        asyncio.run(
            main(
                request,
                parallel=options.parallel,
                web=options.web,
                slack=options.slack,
                port=options.port,
            )
        )
    except KeyboardInterrupt:
        return 130
    except AgbossError as error:
        print(f"\nerror: {error}", file=sys.stderr)
        cause = error.__cause__
        if error.hint is None and isinstance(cause, AgbossError) and cause.hint:
            print(f"  hint: {cause.hint}", file=sys.stderr)  # the model's, under the agent's
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
