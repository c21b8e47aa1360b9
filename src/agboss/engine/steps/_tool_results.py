"""A tool's call as a journaled step: what it runs (`ToolStep`), where it is made (`CallSite`),
how the step machine runs it (`tool_policy`), and what it journals — the text the model reads,
and whether it is a tool error (`ToolResult`), a refusal among them (`journal_refusal`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from agboss.components import ToolSpec
from agboss.context import StepContext
from agboss.engine.steps._steps import RUN_ONCE, Step, StepPolicy, run_once
from agboss.engine.trees import ExecutionFrame
from agboss.records import StepRecord
from agboss.store.writes import TakePause

__all__ = [
    "CallSite",
    "ToolRaised",
    "ToolResult",
    "ToolStep",
    "journal_refusal",
    "tool_policy",
    "tool_raised",
]


@dataclass(frozen=True, slots=True)
class CallSite:
    """Where a tool's call is made: what the rules around a call (one in doubt, questions it
    asks mid-call) need of the agent that makes it.

    Attributes:
        frame: The execution frame of the agent's visit.
        agent: The agent's name.
        node_id: Its node in the flow.
        path: The branch path its questions wait under.
    """

    frame: ExecutionFrame
    agent: str
    node_id: str
    path: str


@dataclass(frozen=True, slots=True)
class ToolStep:
    """One call of a tool, as the step that runs it.

    Attributes:
        key: The step's key in its execution (its idempotency key's last part).
        record: Its step record (the arguments as approved).
        tool_cls: The tool's class.
        spec: Its spec.
        args: The arguments it runs with.
        step: Its `StepContext`.
        taken: The resolved pauses its journal row takes (its approval), if any.
    """

    key: str
    record: StepRecord
    tool_cls: type[Any]
    spec: ToolSpec
    args: BaseModel
    step: StepContext
    taken: tuple[TakePause, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool call's outcome as the model reads it.

    Attributes:
        content: The tool's output DTO as JSON, or ``Tool error: …``.
        error: Whether it is a tool error.
    """

    content: str
    error: bool

    def encode(self) -> str:
        """As journal text."""
        return json.dumps({"content": self.content, "error": self.error})

    @staticmethod
    def decode(text: str) -> ToolResult:
        """From journal text."""
        data = json.loads(text)
        return ToolResult(str(data["content"]), bool(data["error"]))


class ToolRaised(Exception):
    """What a tool's run raised (not a refusal the model reads), on its way to the step's
    attempts: tried again if the tool's `RetryPolicy` names it, else the step's failure. It
    never leaves the step."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def tool_raised(error: Exception) -> BaseException | None:
    """A tool's attempt failed with what its run raised (``None``: not a failure of the run,
    such as an MCP tool's questions, which go on as they are)."""
    return error.error if isinstance(error, ToolRaised) else None


def tool_policy(spec: ToolSpec) -> StepPolicy:
    """How the step machine runs a tool's call: what came before is committed, and its row at
    once after it; tried again under the tool's `RetryPolicy`; its ``on_interrupted`` says
    whether it writes an intent and what happens to a call in doubt."""
    return StepPolicy(
        commit=True,
        retry=spec.retry_policy or RUN_ONCE,
        failure_of=tool_raised,
        on_interrupted=spec.on_interrupted,
    )


async def journal_refusal(
    frame: ExecutionFrame,
    key: str,
    record: StepRecord,
    why: str,
    taken: tuple[TakePause, ...],
    *,
    as_error: bool = True,
) -> ToolResult:
    """Journals a call that does not run — the model reads ``Tool error: <why>`` (or ``why``
    itself, when it is no error: a call a person said ran) — with the pauses it took."""
    refused = ToolResult(f"Tool error: {why}" if as_error else why, as_error)

    async def refuse(_: int) -> ToolResult:
        return refused

    return await run_once(
        frame,
        Step(
            key,
            record,
            refuse,
            encode=ToolResult.encode,
            decode=ToolResult.decode,
            record_of=lambda done: (
                record.model_copy(update={"error": done.content}) if as_error else record
            ),
            implies=taken,
        ),
    )
