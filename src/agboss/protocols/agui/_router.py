"""A workflow served to an AG-UI client: ``POST`` a `RunAgentInput`, read the run as
server-sent events."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from ag_ui.core import RunAgentInput, TextInputContent, UserMessage
from ag_ui.encoder import EventEncoder
from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route, Router

from agboss.app import App
from agboss.errors import ConfigurationError, DtoValidationError
from agboss.http import (
    NotAuthenticatedError,
    app_function,
    log_failure,
    opened_app,
    problem,
    read_body,
)
from agboss.protocols._questions import (
    answer_of,
    answering,
    checked_answers,
    open_questions,
    person_of,
)
from agboss.protocols.agui._events import Translation
from agboss.records import ExecutionOutput
from agboss.web import Authenticator, Caller, authenticated

__all__ = ["StartOf", "agui_router"]

StartOf: TypeAlias = Callable[[RunAgentInput], BaseModel | Mapping[str, Any]]
"""The workflow's start DTO (or its fields) for a run that begins an execution."""

_MAX_BODY = 1024 * 1024


def _text_start(run: RunAgentInput) -> Mapping[str, Any]:
    """The default start: the last user message's text as ``text`` (`WorkflowStartTextDto`)."""
    for message in reversed(run.messages):
        if isinstance(message, UserMessage):
            content = message.content
            if isinstance(content, str):
                return {"text": content}
            return {
                "text": "".join(part.text for part in content if isinstance(part, TextInputContent))
            }
    raise DtoValidationError(
        "the run has neither a user message to begin with nor answers to resume with",
        hint="send the user's message in messages, or the interrupts' answers in resume",
    )


@dataclass(frozen=True, slots=True)
class _Door:
    app_of: Callable[[], App | None]
    workflow: type[Any]
    authenticate: Authenticator
    start: StartOf
    max_body: int

    async def caller(self, request: Request) -> Caller:
        found = await authenticated(self.authenticate, request)
        if found is None:
            raise NotAuthenticatedError()
        return found

    async def run(self, request: Request) -> Response:
        """Checks who calls and what they send, records the resume's answers but the last,
        then streams the run; any refusal before the stream is a problem body."""
        try:
            caller = await self.caller(request)
            person = person_of(caller, "AG-UI")
            run = _run_input(await read_body(request, self.max_body))
            app = opened_app(self.app_of, "agui_router")
            if run.resume:
                answers = [
                    answer_of(entry.interrupt_id, _payload(entry.status, entry.payload))
                    for entry in run.resume
                ]
                checked = await checked_answers(app, caller, answers, thread_id=run.thread_id)
                work = await answering(app, caller, checked)
            else:
                work = app.execute(
                    self.workflow,
                    _fields(self.start(run)),
                    tenant_id=caller.tenant_id,
                    owner_id=person,
                    thread_id=run.thread_id,
                )
        except Exception as error:  # every error becomes a problem body
            return problem(error)
        encoder = EventEncoder(accept=request.headers.get("accept", ""))
        return StreamingResponse(
            _streamed(app, caller, run, work, encoder),
            media_type=encoder.get_content_type(),
            headers={"Cache-Control": "no-store"},
        )


async def _streamed(
    app: App, caller: Caller, run: RunAgentInput, work: Any, encoder: EventEncoder
) -> AsyncIterator[str]:
    view = Translation(run.thread_id, run.run_id)
    yield encoder.encode(view.started())
    output: ExecutionOutput | None = None
    try:
        async for event in app.stream(work):
            if event.output is not None:
                output = event.output
            for told in view.of(event):
                yield encoder.encode(told)
        assert output is not None  # the stream's last event is ENDED, with the output
        ended = view.finished(output, await open_questions(app, output, caller))
    except Exception as error:  # the run's failure is its RUN_ERROR, not a broken stream
        log_failure(error)
        ended = view.failed(error)
    for told in ended:
        yield encoder.encode(told)


def _fields(start: BaseModel | Mapping[str, Any]) -> BaseModel | dict[str, Any]:
    return start if isinstance(start, BaseModel) else dict(start)


def _run_input(raw: bytes) -> RunAgentInput:
    try:
        return RunAgentInput.model_validate_json(raw)
    except ValidationError as invalid:
        raise DtoValidationError(
            "the body is not an AG-UI RunAgentInput",
            errors=[f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in invalid.errors()],
            hint="POST the RunAgentInput an AG-UI client sends (threadId, runId, messages)",
        ) from None


def _payload(status: str, payload: Any) -> Any:
    """A resume entry's answer: a cancelled interrupt is declined."""
    if status == "cancelled":
        return {"approved": False, "reason": "cancelled in the AG-UI client"}
    return payload


def agui_router(
    app: App | Callable[[], App | None],
    workflow: type[Any],
    *,
    authenticate: Authenticator,
    start: StartOf | None = None,
    max_body: int = _MAX_BODY,
) -> Router:
    """A workflow served as an AG-UI agent, to mount in a Starlette or FastAPI app.

    ``POST /`` takes a `RunAgentInput` and answers with the run as server-sent events: text as
    it streams, the model's tool calls as it makes them, the tools' runs and the questions'
    news (``CUSTOM`` events named ``agboss.tool-started``, ``agboss.pause-asked``…), then
    ``RUN_FINISHED``. A run that pauses ends with the
    interrupt outcome: one interrupt for each question the caller may answer, its id the
    question's reference. The next run answers them in ``resume`` — each open interrupt once,
    each answer recorded on its own — and streams the tree moving on. A run without
    ``resume`` begins an execution in the thread (``threadId`` is agboss's thread).

    Args:
        app: The application, or a function of nothing returning it (``None`` until open).
        workflow: The ``@workflow`` class a run begins.
        authenticate: Reads the signed-in person (`Caller(owner_id=…)`) from a request.
        start: The start DTO of a run that begins an execution; by default the last user
            message's text as ``{"text": …}`` (`WorkflowStartTextDto`).
        max_body: The largest request body, in bytes.

    Raises:
        ConfigurationError: ``authenticate`` or ``start`` is not callable, ``max_body`` is
            not a positive whole number.
    """
    app_of = app_function(app, "agui_router")
    if not callable(authenticate) or (start is not None and not callable(start)):
        raise ConfigurationError(
            "authenticate= (and start=, when given) must be functions",
            hint="async def authenticate(request): return Caller(owner_id=…)",
        )
    if not isinstance(max_body, int) or isinstance(max_body, bool) or max_body < 1:
        raise ConfigurationError(
            f"max_body={max_body!r} must be a positive whole number", hint="leave it out for 1 MiB"
        )
    door = _Door(app_of, workflow, authenticate, start or _text_start, max_body)
    return Router(routes=[Route("/", door.run, methods=["POST"])], redirect_slashes=False)
