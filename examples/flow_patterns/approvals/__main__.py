"""Two approvals at once, answered in the terminal: ``python -m examples.flow_patterns.approvals``.

The agent calls both tools in one turn; both calls pause. Each is answered on its own, by its
pause id, the way a webhook would: ``y`` approves, ``n <reason>`` rejects (the model reads the
reason), ``y amount=6.25`` approves with other arguments. The expense also takes the owner's
own words (``ok, but only half``), read by its role's reply interpreter. Answers may be piped
in::

    printf 'y\\nn not this month\\n' | python -m examples.flow_patterns.approvals

``--parallel`` runs the parallel variant: a deposit desk and an expense desk, two agents
launched at once on the same request, each pausing on its own approval, joined at the end.

With ``AGBOSS_MODEL_BASE_URL`` (and ``AGBOSS_MODEL_API_KEY``, ``AGBOSS_MODEL_NAME``) set, the
agent runs on that OpenAI-compatible provider; otherwise a scripted model stands in.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from agboss import (
    App,
    DtoValidationError,
    ExecutionOutput,
    ExecutionStatus,
    OpenAICompatibleProvider,
    PendingPause,
    ReplyInterpreterMissingError,
    ToolCallApprovalDecisionDto,
    UninterpretableReplyError,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
)
from agboss.models import ModelProvider
from examples.flow_patterns.approvals.components import (
    OfficeApplication,
    OfficeWorkflow,
    ParallelOfficeWorkflow,
)
from examples.flow_patterns.desk_model import scripted_provider

DEFAULT_REQUEST = (
    "Return L-7's deposit to DE89 3704 0044 0532 0130 00 and book the taxi, 12.50 euros."
)
OWNER = "user-1"


def provider() -> tuple[ModelProvider, str]:
    """The real provider when one is configured, else the scripted model."""
    real = OpenAICompatibleProvider.from_env()
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


async def answer_all(app: App, result: ExecutionOutput) -> ExecutionOutput:
    """Asks in the terminal for each pending pause, and resumes each by its id."""
    while result.status is ExecutionStatus.PAUSED:
        pause = result.pending[0]
        assert pause.pause_id is not None  # thread-owner pauses list their id
        while True:
            print(f"approve {show(pause)}?  [y | n <reason> | y key=value | your words] ", end="")
            sys.stdout.flush()
            line = sys.stdin.readline()
            if not line:
                print("\nno more answers: the execution stays paused; its pauses are durable.")
                return result
            if not sys.stdin.isatty():
                print(line.rstrip())  # echo piped answers, so the transcript reads like a session
            decision = parse_answer(line, pause.ask.arguments)
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


async def main(request: str, *, parallel: bool = False) -> None:
    """Runs one request, answering its approvals in the terminal."""
    model_provider, label = provider()
    workflow = ParallelOfficeWorkflow if parallel else OfficeWorkflow
    shape = "two desks in parallel" if parallel else "one desk"
    print(f"office desk with approvals ({shape}) — model: {label}")
    print(f"request: {request}")
    async with await App.create(OfficeApplication, providers=[model_provider]) as app:
        result = await app.execute(workflow, WorkflowStartTextDto(text=request), owner_id=OWNER)
        result = await answer_all(app, result)
        if result.status is ExecutionStatus.COMPLETED:
            assert result.record is not None
            for entry in result.record.pauses:
                tool = entry.step.tool_call.tool if entry.step.tool_call else "?"
                verdict = "approved" if entry.decision and entry.decision.approved else "rejected"
                print(f"  audit: {tool} {verdict} by {entry.responder} ({entry.resolution.value})")
            print(f"answer: {result.output_as(WorkflowFinishTextDto).text}")
        print(f"status: {result.status.value}")
    await model_provider.aclose()


if __name__ == "__main__":
    words = [word for word in sys.argv[1:] if word != "--parallel"]
    asyncio.run(main(" ".join(words) or DEFAULT_REQUEST, parallel="--parallel" in sys.argv[1:]))
