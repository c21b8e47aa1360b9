"""A workflow as an A2A agent's executor: a task is an agboss thread, its execution runs as the
signed-in person, a pause is the task's ``input-required`` state, and the next message
answers it.

A task's id is the thread's id, so any instance — and one started since — finds the execution
an answer is for from the task alone. ``auth-required`` is kept apart: it says that the caller
must sign in, before anything runs or is answered; ``input-required`` says that a decision is
wanted from the person who may give it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from a2a.helpers import get_data_parts, get_text_parts, new_data_part, new_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Message, Part, Task, TaskState, TaskStatus
from pydantic import BaseModel

from agboss.app import App
from agboss.enums import ExecutionStatus
from agboss.errors import AgbossError, DtoValidationError, StepFailedError
from agboss.http import log_failure, opened_app
from agboss.protocols._questions import (
    ANSWER_SCHEMA,
    Answer,
    OpenQuestion,
    answer_of,
    answering,
    checked_answers,
    open_questions,
)
from agboss.protocols.a2a._tasks import Tasks, caller_of
from agboss.records import ExecutionOutput
from agboss.web import Caller

__all__ = ["WorkflowExecutor"]


@dataclass(frozen=True, slots=True)
class WorkflowExecutor(AgentExecutor):
    """Runs and answers one workflow's executions for the A2A request handler."""

    app_of: Callable[[], App | None]
    workflow: type[Any]
    tasks: Tasks

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = context.task_id or "", context.context_id or ""
        if await self.tasks.get(task_id, context.call_context) is None:  # a new task
            self.tasks.begins(task_id)
            first = Task(
                id=task_id,
                context_id=context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                history=[] if context.message is None else [context.message],
            )
            await event_queue.enqueue_event(first)
        told = TaskUpdater(event_queue, task_id, context_id)
        caller = caller_of(context.call_context.state)
        if caller is None or caller.owner_id is None:
            await told.requires_auth(
                _said(told, "Sign in to run this agent or to answer its questions.")
            )
            return
        app = opened_app(self.app_of, "a2a_app")
        message = context.message
        parts = list(message.parts) if message is not None else []
        try:
            output = await app.open_in(task_id, tenant_id=caller.tenant_id)
            if output is None:
                output = await app.execute(
                    self.workflow,
                    _start(parts),
                    tenant_id=caller.tenant_id,
                    owner_id=caller.owner_id,
                    thread_id=task_id,
                )
            else:
                output = await _answered(app, caller, output, parts)
        except StepFailedError as failed:
            log_failure(failed)
            await told.failed(_refusal(told, failed))
            return
        except AgbossError as refused:  # the questions keep waiting: asked again, with why
            log_failure(refused)
            output = await app.open_in(task_id, tenant_id=caller.tenant_id)
            if output is None:
                await told.reject(_refusal(told, refused))
                return
            await _told(told, app, caller, output, refused)
            return
        await _told(told, app, caller, output, None)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        caller = caller_of(context.call_context.state)
        told = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        if caller is None or caller.owner_id is None:
            await told.requires_auth(_said(told, "Sign in to cancel this task."))
            return
        app = opened_app(self.app_of, "a2a_app")
        await app.cancel(
            context.task_id or "", tenant_id=caller.tenant_id, owner_id=caller.owner_id
        )
        await told.cancel(_said(told, "Cancelled: its questions are withdrawn."))


def _start(parts: list[Part]) -> BaseModel | dict[str, Any]:
    """A new task's start: the data part's object (the start DTO's fields), else the text as
    ``{"text": …}`` (`WorkflowStartTextDto`)."""
    for data in get_data_parts(parts):
        if isinstance(data, dict):
            return data
    text = "\n".join(get_text_parts(parts))
    if not text:
        raise DtoValidationError(
            "the message has neither a data part nor text to begin with",
            hint="send the workflow's input as a data part, or the request as text",
        )
    return {"text": text}


async def _answered(
    app: App, caller: Caller, output: ExecutionOutput, parts: list[Part]
) -> ExecutionOutput:
    """Answers the task's open questions from a message, and moves the tree."""
    questions = await open_questions(app, output, caller)
    if not questions:
        return output  # it waits on others: nothing of this person's to answer
    answers = _answers(questions, parts)
    checked = await checked_answers(app, caller, answers, thread_id=output.thread_id)
    return await (await answering(app, caller, checked))


def _answers(questions: list[OpenQuestion], parts: list[Part]) -> list[Answer]:
    """A message's answers: ``{"answers": {ref: answer}}`` in a data part; or, when one
    question waits, a decision's fields as the data part, or the text as words."""
    data = [found for found in get_data_parts(parts) if isinstance(found, dict)]
    if data and isinstance(data[0].get("answers"), dict):
        return [answer_of(ref, payload) for ref, payload in data[0]["answers"].items()]
    if len(questions) == 1:
        [question] = questions
        if data:
            return [answer_of(question.ref, data[0])]
        text = "\n".join(get_text_parts(parts))
        if text:
            return [answer_of(question.ref, text)]
    raise DtoValidationError(
        f"the message answers none of the {len(questions)} open question(s)",
        hint='send a data part {"answers": {"<ref>": {"approved": true}}}, one per question',
    )


async def _told(
    told: TaskUpdater,
    app: App,
    caller: Caller,
    output: ExecutionOutput,
    refused: AgbossError | None,
) -> None:
    """The task's state for where the execution stands."""
    if output.status is ExecutionStatus.COMPLETED:
        value = None if output.output is None else output.output.model_dump(mode="json")
        await told.add_artifact([new_data_part(value)], name="output")
        await told.complete()
        return
    if output.status is ExecutionStatus.CANCELLED:
        await told.cancel(_said(told, "Cancelled."))
        return
    questions = await open_questions(app, output, caller)
    if questions:
        payload: dict[str, Any] = {
            "questions": [_question(question) for question in questions],
            "answerSchema": ANSWER_SCHEMA,
        }
        if refused is not None:
            payload["refused"] = {"code": refused.code, "message": refused.message}
        said = f"{len(questions)} question(s) wait for your decision."
        await told.requires_input(
            new_message(
                [new_text_part(said), new_data_part(payload)],
                context_id=told.context_id,
                task_id=told.task_id,
            )
        )
        return
    await told.start_work(
        _said(told, f"Waiting on {len(output.pending)} question(s) others answer.")
    )


def _question(question: OpenQuestion) -> dict[str, Any]:
    """One open question as the input-required payload names it: by its reference."""
    return {
        "ref": question.ref,
        "prompt": question.prompt(),
        "callId": question.pause.ask.call_id,
        **question.described(),
    }


def _said(told: TaskUpdater, text: str) -> Message:
    return new_message([new_text_part(text)], context_id=told.context_id, task_id=told.task_id)


def _refusal(told: TaskUpdater, error: AgbossError) -> Message:
    return new_message(
        [
            new_text_part(error.message),
            new_data_part({"code": error.code, "message": error.message, "hint": error.hint}),
        ],
        context_id=told.context_id,
        task_id=told.task_id,
    )
