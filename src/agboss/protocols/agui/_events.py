"""An execution's events as AG-UI events: text as it streams, the model's tool calls as it
makes them, the tools' runs and the questions asked and answered as agboss's own news, and the
end as a run's outcome.

What `App.stream` keeps out stays out: a tool's arguments and results and a channel pause's id
are never streamed; a question's arguments are shown in its interrupt, to the person who may
answer it (as their inbox shows them).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from ag_ui.core import (
    PROTOCOL_VERSION,
    BaseEvent,
    CustomEvent,
    Interrupt,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)

from agboss.agents import ANSWER_TOOL
from agboss.enums import ExecutionStatus
from agboss.errors import AgbossError
from agboss.observability import ExecutionEvent, ExecutionEventKind
from agboss.protocols._questions import ANSWER_SCHEMA, OpenQuestion
from agboss.records import ExecutionOutput

__all__ = ["Translation", "interrupt_of"]

_K = ExecutionEventKind

# A tool's run is agboss's (the model's call is AG-UI's TOOL_CALL_*): CUSTOM events too.
_TOOL_NEWS = frozenset({_K.TOOL_STARTED, _K.TOOL_DONE})

# The questions' news as CUSTOM events, named as `ExecutionEventKind` names them.
_PAUSE_NEWS = frozenset(
    {
        _K.PAUSE_ASKED,
        _K.PAUSE_ANSWERED,
        _K.PAUSE_VOTED,
        _K.PAUSE_EXPIRED,
        _K.PAUSE_REMINDED,
        _K.PAUSE_ESCALATED,
        _K.PAUSE_REASSIGNED,
    }
)


def interrupt_of(question: OpenQuestion) -> Interrupt:
    """A question the caller may answer, as AG-UI's interrupt: named by its reference."""
    pause = question.pause
    return Interrupt(
        id=pause.pause_ref,
        reason="tool_approval",
        message=question.prompt(),
        tool_call_id=pause.ask.call_id,
        response_schema=ANSWER_SCHEMA,
        metadata={
            **question.described(),
            "answeredBy": pause.answered_by.value,
            "childExecutionId": pause.child_execution_id,
        },
    )


@dataclass
class Translation:
    """One AG-UI run's view of the work it streams.

    Attributes:
        thread_id: The AG-UI thread (agboss's thread).
        run_id: The client's run id.
    """

    thread_id: str
    run_id: str
    _message: str | None = field(default=None, init=False)
    _last_message: str | None = field(default=None, init=False)

    def started(self) -> RunStartedEvent:
        return RunStartedEvent(
            thread_id=self.thread_id, run_id=self.run_id, protocol_version=PROTOCOL_VERSION
        )

    def of(self, event: ExecutionEvent) -> list[BaseEvent]:
        """What one execution event is in AG-UI (nothing for ``ENDED``: see `finished`)."""
        if event.kind is _K.TEXT_DELTA:
            return [*self._opened(), self._content(event.text or "")]
        if event.kind is _K.MODEL_ANSWERED:
            return [*self._turn_ended(event.text), *self._calls(event)]
        if event.kind in _PAUSE_NEWS or event.kind in _TOOL_NEWS:
            return [
                *self._closed(),
                CustomEvent(name=f"agboss.{event.kind.value}", value=_news(event)),
            ]
        return []

    def finished(self, output: ExecutionOutput, questions: list[OpenQuestion]) -> list[BaseEvent]:
        """The run's end: its outcome, and the execution's standing as its result."""
        result: dict[str, Any] = {
            "status": output.status.value,
            "executionId": output.execution_id,
        }
        outcome: Any = None
        if output.status is ExecutionStatus.COMPLETED and output.output is not None:
            result["output"] = output.output.model_dump(mode="json")
        elif output.status is ExecutionStatus.CANCELLED:
            outcome = RunFinishedCancelledOutcome()
        elif questions:
            outcome = RunFinishedInterruptOutcome(
                interrupts=[interrupt_of(question) for question in questions]
            )
        elif output.status is ExecutionStatus.PAUSED:
            # Waiting only on others' questions: nothing this client may answer.
            result["waitingOnOthers"] = len(output.pending)
        if output.wake_at is not None:
            result["wakeAt"] = output.wake_at.isoformat()
        return [
            *self._closed(),
            RunFinishedEvent(
                thread_id=self.thread_id, run_id=self.run_id, result=result, outcome=outcome
            ),
        ]

    def failed(self, error: BaseException) -> list[BaseEvent]:
        """The run's end when its work raised: the error's code and sentence, never a trace."""
        if isinstance(error, AgbossError):
            message, code = error.message, error.code
        else:
            message, code = "the run failed; the server's log has why", "agui.internal"
        return [*self._closed(), RunErrorEvent(message=message, code=code)]

    def _calls(self, event: ExecutionEvent) -> list[BaseEvent]:
        """The tool calls the model made in its turn (not its answer), as AG-UI's calls: the
        arguments are not streamed."""
        calls: list[BaseEvent] = []
        for name, call_id in zip(event.tool_calls, event.call_ids, strict=False):
            if name == ANSWER_TOOL:
                continue
            calls.append(
                ToolCallStartEvent(
                    tool_call_id=call_id, tool_call_name=name, parent_message_id=self._last_message
                )
            )
            calls.append(ToolCallEndEvent(tool_call_id=call_id))
        return calls

    def _opened(self) -> list[BaseEvent]:
        if self._message is not None:
            return []
        self._message = self._last_message = f"msg-{uuid.uuid4().hex}"
        return [TextMessageStartEvent(message_id=self._message, role="assistant")]

    def _content(self, text: str) -> BaseEvent:
        assert self._message is not None
        return TextMessageContentEvent(message_id=self._message, delta=text)

    def _closed(self) -> list[BaseEvent]:
        if self._message is None:
            return []
        ended = TextMessageEndEvent(message_id=self._message)
        self._message = None
        return [ended]

    def _turn_ended(self, text: str | None) -> list[BaseEvent]:
        if self._message is not None:  # its text streamed in already
            return self._closed()
        if not text:
            return []
        return [*self._opened(), self._content(text), *self._closed()]


def _news(event: ExecutionEvent) -> dict[str, Any]:
    """A question's or a tool run's news, without a pause's id (a thread-owner pause's id stays
    on the server)."""
    news: dict[str, Any] = {"executionId": event.execution_id}
    for name, value in (
        ("agent", event.agent),
        ("tool", event.tool),
        ("callId", event.call_id),
        ("answeredBy", event.answered_by),
        ("approved", event.approved),
        ("failed", event.failed if event.kind is _K.TOOL_DONE else None),
    ):
        if value is not None:
            news[name] = value
    return news
