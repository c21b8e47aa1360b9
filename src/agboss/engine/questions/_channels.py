"""Calling a pause's channel — its ``send`` and its ``withdraw`` — written once.

Both run the channel's instance in the pause's execution frame, hand it the question as it may
leave the process (the tool's arguments masked by the PII policies; the tool gets them as they
are), trace the call with the pause's id redacted, and bound it by the tool's timeout on the
application's Clock.
"""

from __future__ import annotations

from collections.abc import Awaitable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from opentelemetry.trace import Span
from pydantic import BaseModel

from agboss.assembly import ToolChannel
from agboss.components import ApprovalAsk, ChannelHandler, ToolSpec
from agboss.context import ExecutionContext
from agboss.engine.instance import Runtime
from agboss.engine.trees import execution_context, maybe_await, run_within, step_context
from agboss.enums import PauseKind
from agboss.errors import DefinitionChangedError, VersionNotServedError
from agboss.mcp import McpInputRequest
from agboss.mcp.client import answer_model
from agboss.observability import ExecutionEvent, ExecutionEventKind, emit, span
from agboss.records import PauseRecord, PendingPause, secret_of, shown_pause_id
from agboss.store import redacted
from agboss.store.protocol import ExecutionRow

__all__ = [
    "TOOL_INPUT",
    "TOOL_INTERRUPTED",
    "ChannelCall",
    "asked_arguments",
    "emit_pause_event",
    "handed_to",
    "handoffs_of",
    "lacking",
    "not_served",
    "pause_kind",
    "question_spec",
    "shown_error",
    "shows_answers",
    "tool_of",
    "warn_failed",
]


TOOL_INPUT = "tool-input"
"""The kind of the step record of a question a tool asked mid-call, and of its pause."""

TOOL_INTERRUPTED = "tool-interrupted"
"""The kind of the step record of the question whether to run again a call that may have
run (``OnInterrupted.ASK``), and of its pause."""

_PAUSE_KINDS = {TOOL_INPUT: PauseKind.TOOL_INPUT, TOOL_INTERRUPTED: PauseKind.INTERRUPTED}


def pause_kind(step_kind: str) -> PauseKind:
    """What a pause asked at a step of ``step_kind`` asks."""
    return _PAUSE_KINDS.get(step_kind, PauseKind.APPROVAL)


def tool_of(runtime: Runtime, pause: PauseRecord) -> tuple[ToolSpec, ToolChannel]:
    """The spec and the channel of the tool whose call a pause waits on.

    For a question the tool asked mid-call (an MCP elicitation), the spec is the question's:
    what it asks is an `McpInputRequest`, and its input — what ``override_arguments`` must
    be — is the answer the question's schema describes.
    """
    tool_spec, channel = _named(runtime, pause)
    if pause.step.kind == TOOL_INPUT:
        question = McpInputRequest.model_validate(pause.ask.arguments)
        tool_spec = question_spec(tool_spec, question)
    return tool_spec, channel.asking(pause.channel)


def handed_to(runtime: Runtime, pause: PauseRecord, role: type[Any] | str) -> ToolChannel | None:
    """The channel ``pause``'s question is asked through when handed to ``role`` (the
    role's class or name: its tool's own channel, or one of its ``handoffs``)."""
    return _named(runtime, pause)[1].handed_to(role)


def handoffs_of(runtime: Runtime, pause: PauseRecord | PendingPause) -> tuple[str, ...]:
    """The roles ``pause``'s question may be handed to (`App.reassign`), by name: the other
    roles of the application that approve its tool's calls; none for a tool this build no
    longer has."""
    assembly = runtime.assembly
    found = assembly.tool_named(pause.agent, pause.ask.tool)
    named = None if found is None else assembly.tool_channels.get(found[0])
    if named is None:
        return ()
    return tuple(
        channel.name for channel in (named, *named.handoffs) if channel.name != pause.channel
    )


def _named(runtime: Runtime, pause: PauseRecord) -> tuple[ToolSpec, ToolChannel]:
    """The spec of a pause's tool and the channel the tool names."""
    assembly = runtime.assembly
    found = assembly.tool_named(pause.agent, pause.ask.tool)
    channel = None if found is None else assembly.tool_channels.get(found[0])
    if found is None or channel is None:
        raise lacking(
            pause.root_execution_id,
            f"the tool {pause.ask.tool!r} of the agent {pause.agent!r}, asking through a channel",
        )
    return found[1], channel


def lacking(root_execution_id: str, what: str) -> DefinitionChangedError:
    """The error of a tree that needs ``what``, which this build does not declare."""
    return DefinitionChangedError(
        f"execution tree {root_execution_id} waits on {what}, which this build of the "
        "application does not declare (renamed or removed since the tree began)"
    )


def not_served(row: ExecutionRow) -> VersionNotServedError:
    """The error of a tree whose root's version this build does not serve."""
    return VersionNotServedError(
        f"execution tree {row.root_execution_id} began under version "
        f"{row.workflow_version} of {row.workflow}, which this build neither runs nor "
        "continues"
    )


def shows_answers(channel: ToolChannel) -> bool:
    """Whether a channel shows its questions' answers (overrides ``answered``): a sent
    question's answer then owes it that word, durably."""
    answered = getattr(channel.implementation, "answered", None)
    return answered is not None and answered is not ChannelHandler.answered


def question_spec(tool: ToolSpec, question: McpInputRequest) -> ToolSpec:
    """A tool's spec as a question it asked is answered: its input is the answer."""
    return replace(tool, input=answer_model(f"{tool.name}:answer", question.requested_schema))


def asked_arguments(tool: ToolSpec, pause: PauseRecord) -> BaseModel:
    """What a pause asks, read back: the call's arguments, or the question the tool asked."""
    if pause.step.kind == TOOL_INPUT:
        return McpInputRequest.model_validate(pause.ask.arguments)
    return tool.input.model_validate(pause.ask.arguments)


def shown_error(runtime: Runtime, workflow: str, pause: PauseRecord, error: BaseException) -> str:
    """A channel's error as a log line shows it: a channel pause's id and personal data
    masked."""
    return runtime.assembly.pii_policy(workflow).outside(repr(redacted(error, secret_of(pause))))


def warn_failed(
    runtime: Runtime,
    row: ExecutionRow,
    pause: PauseRecord,
    channel: str,
    method: str,
    error: BaseException,
) -> None:
    """The one warning of a best-effort call of a channel (``withdraw``, ``remind``) that
    raised or ran past its timeout: ``channel.<method>-failed``, the error masked."""
    runtime.logger.warning(
        "channel.%s-failed: %s failed on a question of execution %s: %s",
        method,
        channel,
        row.execution_id,
        shown_error(runtime, row.workflow, pause, error),
        extra={
            "event": f"channel.{method}-failed",
            "execution_id": row.execution_id,
            "tenant_id": row.tenant_id,
            "channel": channel,
        },
    )


def emit_pause_event(
    kind: ExecutionEventKind,
    pause: PauseRecord,
    at: datetime,
    *,
    answered_by: str | None = None,
    approved: bool | None = None,
) -> None:
    """An event about a pause (asked, answered, voted on, reminded, escalated, expired): its
    call, its id unless it is a channel's, and who answered what."""
    emit(
        lambda: ExecutionEvent(
            kind,
            pause.execution_id,
            at,
            agent=pause.agent,
            tool=pause.ask.tool,
            call_id=pause.ask.call_id,
            pause_id=shown_pause_id(pause.pause_id, pause.answered_by),
            answered_by=answered_by,
            approved=approved,
        )
    )


@dataclass(frozen=True, slots=True)
class ChannelCall:
    """One call of a pause's channel: its instance in the pause's frame, and the question.

    Attributes:
        runtime: The instance's services.
        row: The execution the pause waits in.
        pause: The pause.
        tool: The spec of the tool whose call waits.
        channel: The tool's channel.
        handler: The channel's instance, made in the pause's frame.
        context: That frame (`ExecutionContext`), at the waiting step; its signal fires at
            the tool's timeout.
        ask: The question as it may leave the process (its arguments masked).
    """

    runtime: Runtime
    row: ExecutionRow
    pause: PauseRecord
    tool: ToolSpec
    channel: ToolChannel
    handler: Any
    context: ExecutionContext
    ask: ApprovalAsk[Any]

    @classmethod
    def of(
        cls,
        runtime: Runtime,
        row: ExecutionRow,
        pause: PauseRecord,
        kind: str,
        *,
        tool: ToolSpec,
        channel: ToolChannel,
        args: BaseModel | None = None,
    ) -> ChannelCall:
        """The call of ``pause``'s channel (``tool_of`` the pause) for a step of ``kind``
        (``channel-send``, …), with the tool's arguments (``args``: as validated; else read
        back from the pause)."""
        assembly = runtime.assembly
        context = execution_context(row, step_context(pause.step, kind))
        handler = assembly.container.create(
            channel.implementation, assembly.components[channel.implementation].deps, context
        )
        if args is None:
            args = asked_arguments(tool, pause)
        ask = ApprovalAsk(
            tool=tool.name,
            call_id=pause.ask.call_id,
            arguments=assembly.pii_outside.dto(args, assembly.pii_policy(row.workflow)),
            kind=pause.ask.kind,
            digest=pause.ask.digest,
        )
        return cls(runtime, row, pause, tool, channel, handler, context, ask)

    def traced(self, name: str, **attributes: str) -> AbstractContextManager[Span]:
        """The span of the call: the pause's id redacted from what it records."""
        return span(
            name,
            redact=secret_of(self.pause),
            channel=self.channel.name,
            tool=self.tool.name,
            execution_id=self.pause.execution_id,
            root_execution_id=self.pause.root_execution_id,
            **attributes,
        )

    def bounded(self, result: object, method: str) -> Awaitable[object]:
        """What the channel's ``method`` returned (awaited if it is awaitable), cut off at the
        tool's timeout on the application's Clock (its signal fired)."""
        return run_within(
            self.runtime.clock,
            maybe_await(result),
            self.tool.timeout,
            self.context.signal,
            f"{self.channel.name}.{method}",
        )

    def shown(self, error: BaseException) -> str:
        """The channel's error as a log line shows it."""
        return shown_error(self.runtime, self.row.workflow, self.pause, error)
