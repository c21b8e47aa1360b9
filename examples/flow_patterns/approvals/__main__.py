"""Two approvals at once, answered in the terminal: ``python -m examples.flow_patterns.approvals``.

The agent calls both tools in one turn; both calls pause. Each is answered on its own, by its
pause id, the way a webhook would: ``y`` approves, ``n <reason>`` rejects (the model reads the
reason), ``y amount=6.25`` approves with other arguments. Answers may be piped in::

    printf 'y\\nn not this month\\n' | python -m examples.flow_patterns.approvals

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
    ToolCallApprovalDecisionDto,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
)
from agboss.models import ModelProvider
from examples.flow_patterns.approvals.components import OfficeApplication, OfficeWorkflow
from examples.flow_patterns.desk_model import scripted_provider

DEFAULT_REQUEST = "Return L-7's deposit and book the taxi, 12.50 euros."
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


async def answer_all(app: App, result: ExecutionOutput) -> ExecutionOutput:
    """Asks in the terminal for each pending pause, and resumes each by its id."""
    while result.status is ExecutionStatus.PAUSED:
        pause = result.pending[0]
        assert pause.pause_id is not None  # thread-owner pauses list their id
        while True:
            print(f"approve {show(pause)}?  [y | n <reason> | y key=value …] ", end="", flush=True)
            line = sys.stdin.readline()
            if not line:
                print("\nno more answers: the execution stays paused; its pauses are durable.")
                return result
            if not sys.stdin.isatty():
                print(line.rstrip())  # echo piped answers, so the transcript reads like a session
            decision = parse_answer(line, pause.ask.arguments)
            if decision is None:
                print("  please answer y, n <reason>, or y key=value …")
                continue
            try:
                result = await app.resume(
                    pause.pause_id, decision=decision, owner_id=OWNER, record=True
                )
            except DtoValidationError as error:  # the pause keeps waiting: ask again
                print(f"  {error.message}")
                continue
            break
        verdict = "approved" if decision.approved else "rejected"
        print(f"  {verdict}; {len(result.pending)} answer(s) still open")
    return result


async def main(request: str) -> None:
    """Runs one request, answering its approvals in the terminal."""
    model_provider, label = provider()
    print(f"office desk with approvals — model: {label}")
    print(f"request: {request}")
    async with await App.create(OfficeApplication, providers=[model_provider]) as app:
        result = await app.execute(
            OfficeWorkflow, WorkflowStartTextDto(text=request), owner_id=OWNER
        )
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
    asyncio.run(main(" ".join(sys.argv[1:]) or DEFAULT_REQUEST))
