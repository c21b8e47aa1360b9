"""An execution's questions as a protocol shows and answers them: only those the caller may
answer, named by their reference, answered one by one.

Every protocol door (AG-UI, A2A, MCP) stands on the same two rules as the approvals page's
routes: a question leaves the server by its reference alone — never its id — and a reference
is mapped back to the question only for the signed-in person it belongs to (`App.pause_id_of`):
the thread's owner, a voter, a delegate. Questions are answered independently in agboss, so a
protocol's "answers to what the run waits for" is a list of answers, each recorded on its own.
"""

from __future__ import annotations

from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pydantic import ValidationError

from agboss.app import App
from agboss.dto import ToolCallApprovalDecisionDto
from agboss.enums import PauseAnswerer, PauseStatus
from agboss.errors import (
    DtoValidationError,
    NotPausedError,
    PauseAnswererError,
    UnknownPauseError,
)
from agboss.records import ExecutionOutput, PendingPause
from agboss.web import Caller

__all__ = [
    "ANSWER_SCHEMA",
    "Answer",
    "OpenQuestion",
    "answer_of",
    "answering",
    "checked_answers",
    "open_questions",
    "person_of",
]

ANSWER_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean", "description": "Whether the tool call may run."},
        "reason": {"type": "string", "description": "Why, in the answerer's words."},
        "override_arguments": {
            "type": "object",
            "description": "The arguments to run it with instead (the tool's input).",
        },
        "reply": {
            "type": "string",
            "description": "Or the answer in words, for a role that reads replies.",
        },
    },
    "additionalProperties": False,
}
"""What an answer to a question is, as every protocol's schema states it: a decision's fields,
or ``reply`` alone."""


@dataclass(frozen=True, slots=True)
class OpenQuestion:
    """A question the caller may answer, as it waits in an execution's tree.

    Attributes:
        pause: The question, masked as ``pending`` lists it; its ``pause_ref`` names it outside.
        pause_id: Its id, for the server's own call to `App.answer`: never sent anywhere.
    """

    pause: PendingPause
    pause_id: str

    @property
    def ref(self) -> str:
        """Its reference: what a protocol names it by."""
        return self.pause.pause_ref

    def described(self) -> dict[str, Any]:
        """What every protocol says of the question beside its reference: the tool, its
        arguments (masked as the inbox shows them), the agent and the channel."""
        pause = self.pause
        return {
            "tool": pause.ask.tool,
            "arguments": pause.ask.arguments,
            "agent": pause.agent,
            "channel": pause.channel,
        }

    def prompt(self) -> str:
        """One line that asks the question (a protocol's human-readable message)."""
        ask = self.pause.ask
        return f"May {self.pause.agent} run {ask.tool}? ({self.pause.channel} decides)"


@dataclass(frozen=True, slots=True)
class Answer:
    """One answer a protocol's client sent: a decision or words, to the question ``ref`` names.

    Attributes:
        ref: The question's reference.
        decision: A decision's fields, or ``None`` for an answer in words.
        reply: The words, or ``None`` for a decision.
    """

    ref: str
    decision: Mapping[str, Any] | None = None
    reply: str | None = None


def person_of(caller: Caller, protocol: str) -> str:
    """The signed-in person a protocol's client is: a channel's side answers elsewhere.

    Raises:
        PauseAnswererError: The caller is a channel's side (``Caller(answered_by=…)``).
    """
    if caller.owner_id is None:
        raise PauseAnswererError(
            f"an {protocol} client answers as a signed-in person, not as a channel's side",
            hint="authenticate the person as Caller(owner_id=…)",
        )
    return caller.owner_id


async def open_questions(app: App, output: ExecutionOutput, caller: Caller) -> list[OpenQuestion]:
    """The questions of ``output``'s tree that ``caller`` may answer, in ``pending``'s order:
    the thread-owner questions found by their reference for the caller (theirs, a seat of
    theirs, a delegated one), as a door of theirs would answer them. A channel's questions
    are answered in that channel, by its side."""
    person = person_of(caller, "agboss")
    found: list[OpenQuestion] = []
    for pause in output.pending:
        if pause.answered_by is not PauseAnswerer.THREAD_OWNER:
            continue  # a channel's question: answered in its channel, by its side
        try:
            pause_id = await app.pause_id_of(
                pause.pause_ref, tenant_id=caller.tenant_id, owner_id=person
            )
        except UnknownPauseError:
            continue  # another person's question: not shown, as it would not be found
        found.append(OpenQuestion(pause, pause_id))
    return found


def answer_of(ref: str, payload: Any) -> Answer:
    """An answer as a protocol carries it: an object of a decision's fields, an object with
    ``reply`` alone, or a string (words).

    Raises:
        DtoValidationError: Anything else; nothing is recorded.
    """
    if isinstance(payload, str):
        return Answer(ref, reply=payload)
    if isinstance(payload, Mapping):
        if set(payload) == {"reply"}:
            return Answer(ref, reply=payload["reply"])
        try:  # its shape checked before anything is recorded; the engine checks the rest
            ToolCallApprovalDecisionDto.model_validate(payload)
        except ValidationError as invalid:
            raise DtoValidationError(
                f"the answer to {ref} is not a decision",
                errors=[f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in invalid.errors()],
                hint='send {"approved": true} (or false, with a "reason"), or {"reply": "…"}',
            ) from None
        return Answer(ref, decision=dict(payload))
    raise DtoValidationError(
        f"the answer to {ref} is neither a decision nor words",
        hint='send {"approved": true} (or false, with a "reason"), or {"reply": "…"}',
    )


async def checked_answers(
    app: App,
    caller: Caller,
    answers: Sequence[Answer],
    *,
    thread_id: str | None = None,
) -> list[tuple[str, Answer]]:
    """Each answer with the id of the question it answers, once every answer names a distinct
    question the caller may answer (in ``thread_id``, when given) that waits: what a protocol
    checks before it records any. What the engine checks of an answer itself (the decision,
    the words) is checked as each is recorded.

    Raises:
        DtoValidationError: No answer, or one question answered twice.
        UnknownPauseError: A reference names no question of the caller's (or not in this
            thread): "not yours" and "not there" alike.
        NotPausedError: A question no longer waits.
    """
    person = person_of(caller, "agboss")
    refs = [answer.ref for answer in answers]
    if not refs:
        raise DtoValidationError(
            "no answer was sent", hint="answer at least one question by its reference"
        )
    twice = sorted({ref for ref in refs if refs.count(ref) > 1})
    if twice:
        raise DtoValidationError(
            f"a question is answered once: {', '.join(twice)} is answered twice",
            hint="send one answer for each question",
        )
    checked: list[tuple[str, Answer]] = []
    for answer in answers:
        pause_id = await app.pause_id_of(answer.ref, tenant_id=caller.tenant_id, owner_id=person)
        described = await app.describe_pause(pause_id, tenant_id=caller.tenant_id)
        if described.pause.answered_by is not PauseAnswerer.THREAD_OWNER or (
            thread_id is not None and described.thread_id != thread_id
        ):
            raise UnknownPauseError()  # a channel's question is not a person's to answer here
        if described.status is not PauseStatus.PENDING:
            raise NotPausedError(described.status.value)
        checked.append((pause_id, answer))
    return checked


async def answering(
    app: App, caller: Caller, checked: Sequence[tuple[str, Answer]]
) -> Coroutine[Any, Any, ExecutionOutput]:
    """Records every checked answer but the last (`App.answer`, the tree not moved), and
    returns the call — not awaited, for a door to await or to stream (`App.stream`) — that
    records the last and moves the tree with every answer before it (`App.resume`)."""
    person = person_of(caller, "agboss")
    *first, (last_id, last) = checked
    for pause_id, answer in first:
        await app.answer(
            pause_id,
            decision=answer.decision,
            reply=answer.reply,
            tenant_id=caller.tenant_id,
            owner_id=person,
            move=False,
        )
    if last.reply is not None:
        return app.resume(last_id, reply=last.reply, tenant_id=caller.tenant_id, owner_id=person)
    return app.resume(
        last_id, decision=last.decision or {}, tenant_id=caller.tenant_id, owner_id=person
    )
