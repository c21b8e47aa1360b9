"""The interactions route: Slack's button clicks and modal submissions, verified, answered
with `App.answer`, acknowledged inside Slack's 3 seconds, and shown on the message."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, Final, TypeAlias
from urllib.parse import parse_qs

from slack_sdk.errors import SlackClientError
from slack_sdk.signature import Clock as SlackClock
from slack_sdk.signature import SignatureVerifier
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, Router

from agboss.app import App
from agboss.assembly import ToolChannel
from agboss.clock import Clock
from agboss.enums import PauseAnswerer, PauseKind, PauseStatus
from agboss.errors import (
    AgbossError,
    ConfigurationError,
    DtoValidationError,
    NotPausedError,
    ThreadOwnerError,
    UninterpretableReplyError,
)
from agboss.http import (
    UnreadableRequestError,
    app_function,
    log_failure,
    nests_deeper,
    opened_app,
    problem,
    read_body,
)
from agboss.inputs import MAX_DEPTH
from agboss.pauses import AnswerReceipt, PauseDescription
from agboss.records import PauseVotes, PendingPause
from agboss.slack._blocks import (
    APPROVE,
    CLAIM,
    EDIT,
    HAND_ON,
    REJECT,
    REJECT_WITH_REASON,
    WORDS,
    Decided,
    Question,
    Token,
    changed_arguments,
    decided_blocks,
    mention,
    question_blocks,
    question_text,
)
from agboss.slack._channel import SlackChannel
from agboss.slack._errors import (
    SlackNotAllowedError,
    SlackSignatureError,
    SlackStaleRequestError,
    SlackUnmappedUserError,
)
from agboss.slack._forms import (
    EDIT_VIEW,
    HAND_ON_VIEW,
    REASON_BLOCK,
    REASON_VIEW,
    TO_BLOCK,
    WHY_BLOCK,
    WORDS_BLOCK,
    WORDS_VIEW,
    Where,
    edit_view,
    field_errors,
    hand_on_view,
    read_edit,
    read_role,
    read_text,
    reason_view,
    words_view,
)
from agboss.slack._workspace import SlackWorkspace

__all__ = ["SlackAnswerer", "SlackAnswering", "SlackUser", "slack_router"]

log = logging.getLogger("agboss.slack")

DEFAULT_ACK_WITHIN: Final = timedelta(seconds=2.5)
DEFAULT_MAX_BODY: Final = 1024 * 1024
WINDOW_SECONDS: Final = 5 * 60
"""How far a request's timestamp may be from the application's clock (Slack's advice)."""

_OPENS = {REJECT_WITH_REASON: reason_view, WORDS: words_view, HAND_ON: hand_on_view}

_BUTTONS = (APPROVE, REJECT, REJECT_WITH_REASON, EDIT, WORDS, CLAIM, HAND_ON)
"""The buttons of a question's message."""


class _FormFailedError(AgbossError):
    code = "slack.form-failed"
    default_message = "the form did not open: Slack gives it 3 seconds after the click"
    default_hint = "click the button again"


_FORM_FAILED = _FormFailedError()

_RECORDING = (
    "Recording your answer… The question shows it once it is recorded. If the question still "
    "shows its buttons in a minute, your answer was not recorded: click again."
)
"""What the user who clicked reads when their answer is not recorded within ``ack_within``."""

SLACK_GIVES_UP: Final = 3.0
"""Seconds Slack waits for a request's acknowledgement before it shows the user an error."""


@dataclass(frozen=True, slots=True)
class SlackUser:
    """The Slack user who clicked or submitted, as Slack's signed payload names them.

    Attributes:
        id: Their user id (``U…``).
        team_id: Their workspace's id (``T…``).
        name: Their username, when Slack sends it.
    """

    id: str
    team_id: str | None = None
    name: str | None = None


@dataclass(frozen=True, slots=True)
class SlackAnswering:
    """Who asks to answer which question: what an answerer function maps, and may refuse.

    Attributes:
        user: The Slack user.
        tenant_id: The tenant of the pause's execution.
        answered_by: Who may answer the pause: for `PauseAnswerer.THREAD_OWNER` return the
            thread owner's id the user is; for `PauseAnswerer.CHANNEL`, the name to record
            as who answered (``answered_by``).
        channel: The channel asked, as pauses name it (a role's name, or a concrete
            channel's; an escalated question's, the role it was escalated to).
        role: The role's name, when the tool names a role (``None``: a concrete channel, or
            a tool this build no longer has).
        tool: The tool whose call the question is about.
        owner_id: The thread's owner.
        kind: What is asked (`PauseKind`): approve a call, answer a tool's question, run
            again a call that may have run.
    """

    user: SlackUser
    tenant_id: str
    answered_by: PauseAnswerer
    channel: str
    role: str | None
    tool: str
    owner_id: str
    kind: PauseKind


SlackAnswerer: TypeAlias = (
    Mapping[str, str] | Callable[[SlackAnswering], "Awaitable[str | None] | str | None"]
)
"""Who a Slack user answers as: a mapping from Slack user ids, or a function of the
`SlackAnswering` (plain or async) returning the id, or ``None`` to refuse them."""


class _AppClock(SlackClock):
    """The application's clock, as the SDK's signature check reads the time."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock

    def now(self) -> float:
        return self._clock.now().timestamp()


@dataclass(frozen=True, slots=True)
class _Answer:
    """What one interaction answers, and where to show the outcome."""

    where: Where
    user: SlackUser
    decision: Mapping[str, Any] | None = None
    reply: str | None = None


@dataclass(frozen=True, slots=True)
class _Interactions:
    app_of: Callable[[], App | None]
    workspace: SlackWorkspace | None
    signing_secret: str
    answerer: SlackAnswerer
    ack_within: float
    max_body: int

    @property
    def tell_within(self) -> float:
        """How long telling the user an answer is still being recorded may take, within what
        Slack leaves after ``ack_within``."""
        return max(0.1, SLACK_GIVES_UP - 0.1 - self.ack_within)

    # ---- the request ----------------------------------------------------------------------

    async def handle(self, request: Request) -> Response:
        try:
            app = self._opened()
            body = await read_body(request, self.max_body)
            self._verify(app, body, request.headers)
            payload = _payload(body)
        except Exception as error:  # every error becomes a problem body
            return problem(error)
        kind = payload.get("type")
        if kind == "block_actions":
            retried = "x-slack-retry-num" in request.headers
            return await self._clicked(app, payload, retried)
        if kind == "view_submission":
            return await self._submitted(app, payload)
        return Response(status_code=200)  # another interaction of the app: acknowledged

    def _opened(self) -> App:
        return opened_app(self.app_of, "slack_router")

    def _verify(self, app: App, body: bytes, headers: Mapping[str, str]) -> None:
        """Checks Slack's signature and timestamp; anything else than what Slack sends — a
        timestamp that is no short run of ASCII digits, a signature that is not ASCII, a body
        that is not UTF-8 — is refused as unsigned, never read further."""
        stamp = headers.get("x-slack-request-timestamp", "")
        signature = headers.get("x-slack-signature")
        if not (stamp.isascii() and stamp.isdigit() and len(stamp) <= 12) or signature is None:
            raise SlackSignatureError("the request carries no Slack signature and timestamp")
        if abs(app.clock.now().timestamp() - int(stamp)) > WINDOW_SECONDS:
            raise SlackStaleRequestError()
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as error:
            raise SlackSignatureError(
                "the request's body is not UTF-8: Slack signs text"
            ) from error
        if not signature.isascii():
            raise SlackSignatureError()
        verifier = SignatureVerifier(self.signing_secret, clock=_AppClock(app.clock))
        if not verifier.is_valid(text, stamp, signature):
            raise SlackSignatureError()

    def _slack(self, app: App) -> SlackWorkspace:
        if self.workspace is not None:
            return self.workspace
        try:
            return app.assembly.container.resolve(SlackWorkspace, None)
        except KeyError as error:
            raise ConfigurationError(
                "slack_router has no SlackWorkspace: the application provides none",
                hint="pass slack_router(app, workspace=SlackWorkspace(...)), or add "
                "provide(SlackWorkspace, factory=SlackWorkspace.from_env) to "
                "@application(dependencies=[...])",
            ) from error

    # ---- clicks ---------------------------------------------------------------------------

    async def _clicked(self, app: App, payload: Mapping[str, Any], retried: bool) -> Response:
        action = _ours(payload.get("actions"))
        container = _mapping(payload.get("container"))
        if action is None or "message_ts" not in container:
            return Response(status_code=200)  # not a button of ours
        action_id, token = action
        channel_id = str(container.get("channel_id") or _mapping(payload.get("channel")).get("id"))
        where = Where(token, channel_id, str(container["message_ts"]))
        user = _user(payload)
        if action_id in (APPROVE, REJECT):
            answer = _Answer(where, user, decision={"approved": action_id == APPROVE})
            return await self._answered(app, answer, None)
        if action_id == CLAIM:  # a retried delivery claims again: the same claim, renewed
            return _ack(BackgroundTask(self._claim, app, _Answer(where, user)))
        if retried:
            return Response(status_code=200)  # the first delivery opened the modal
        opening = _Answer(where, user)
        try:
            # Who may answer, before the form is filled in for nothing.
            _, _, found = await self._identify(app, opening)
            view = _view(app, action_id, where, found)
            await self._slack(app).client.views_open(
                trigger_id=str(payload.get("trigger_id")), view=view
            )
        except SlackClientError as error:  # Slack's trigger lasts 3 s: a slow click expires
            log.warning("slack.view-failed: a modal did not open: %s", error)
            return _ack(BackgroundTask(self._refused, app, opening, _FORM_FAILED))
        except Exception as error:  # shown to the user who clicked (see _refused)
            return _ack(BackgroundTask(self._refused, app, opening, error))
        return Response(status_code=200)

    async def _claim(self, app: App, clicked: _Answer) -> None:
        """The user who clicked claims the question, as whom they answer: the message then
        says who handles it and until when (its Claim button gone); a refusal is told to them
        alone."""
        where = clicked.where
        token = where.token
        try:
            who, pause_id, found = await self._identify(app, clicked)
            owner_id, answered_by = _credential(token, who)
            made = await app.claim(
                pause_id, tenant_id=token.tenant_id, owner_id=owner_id, answered_by=answered_by
            )
        except Exception as error:  # shown to the user who clicked (see _refused)
            await self._refused(app, clicked, error)
            return
        question = replace(
            _question(app, found),
            claimable=True,
            handled_by=mention(clicked.user.id),
            handled_until=made.claimed_until,
        )
        try:
            await self._slack(app).client.chat_update(
                channel=where.channel_id,
                ts=where.message_ts,
                text=question_text(question),
                blocks=question_blocks(question, token),
            )
        except SlackClientError as error:
            log.warning("slack.update-failed: the claimed question's message: %s", error)

    # ---- modals ---------------------------------------------------------------------------

    async def _submitted(self, app: App, payload: Mapping[str, Any]) -> Response:
        view = _mapping(payload.get("view"))
        where = Where.loads(view.get("private_metadata"))
        callback = view.get("callback_id")
        if where is None or callback not in (REASON_VIEW, EDIT_VIEW, WORDS_VIEW, HAND_ON_VIEW):
            return Response(status_code=200)  # another modal of the app
        values = _mapping(_mapping(view.get("state")).get("values"))
        user = _user(payload)
        if callback == HAND_ON_VIEW:
            why = read_text(values, WHY_BLOCK)
            if why is None:
                return _errors({WHY_BLOCK: "Say why it is handed on."})
            role, to = read_role(values), read_text(values, TO_BLOCK)
            if role is None and to is None:
                return _errors({TO_BLOCK: "Choose another role, or name a person."})
            handing = _Answer(where, user)
            return _ack(BackgroundTask(self._hand_on, app, handing, role, to, why))
        if callback == REASON_VIEW:
            reason = read_text(values, REASON_BLOCK)
            answer = _Answer(where, user, decision={"approved": False, "reason": reason})
            return await self._answered(app, answer, (REASON_BLOCK,))
        if callback == WORDS_VIEW:
            words = read_text(values, WORDS_BLOCK)
            if words is None:
                return _errors({WORDS_BLOCK: "Write an answer first."})
            return await self._answered(app, _Answer(where, user, reply=words), (WORDS_BLOCK,))
        try:
            _, found = await _described(app, where.token)
        except AgbossError as error:
            return _ack(BackgroundTask(self._refused, app, _Answer(where, user), error))
        schema = app.arguments_schema(found.pause)
        arguments, unreadable = read_edit(values, schema)
        if unreadable:
            return _errors(unreadable)
        decision = {"approved": True, "override_arguments": arguments}
        fields = tuple(f"field.{name}" for name in schema.get("properties") or {})
        return await self._answered(app, _Answer(where, user, decision=decision), fields)

    async def _hand_on(
        self, app: App, clicked: _Answer, role: str | None, to: str | None, why: str
    ) -> None:
        """Hands the question on as the user who submitted the form (`App.reassign`): its
        message is taken back by its channel (it says it was reassigned), and the user is told
        where it went; a refusal is told to them alone."""
        token = clicked.where.token
        try:
            who, pause_id, _ = await self._identify(app, clicked)
            owner_id, answered_by = _credential(token, who)
            made = await app.reassign(
                pause_id,
                reason=why,
                role=role,
                to=to,
                tenant_id=token.tenant_id,
                owner_id=owner_id,
                answered_by=answered_by,
            )
        except Exception as error:  # shown to the user who submitted (see _refused)
            await self._refused(app, clicked, error)
            return
        whom = made.role if made.to is None else f"{made.to} ({made.role})"
        await self._tell(app, clicked, f"Handed to {whom}: it is asked there now.")

    # ---- answering ------------------------------------------------------------------------

    async def _answered(
        self, app: App, answer: _Answer, fields: tuple[str, ...] | None
    ) -> Response:
        """Answers, and acknowledges within ``ack_within``: at once with what is known then,
        the message updated (or the refusal shown) after the response.

        An answer not recorded by then (a slow store, a model reading words) is acknowledged
        only once the user who clicked was told so — that the message shows their answer once
        it is recorded, and that buttons still there mean it was not: this instance may stop
        before the commit, and nothing else would tell them. One recorded and then left
        unshown is shown by whichever instance moves the tree (`SlackChannel.answered`)."""
        recording = asyncio.ensure_future(self._record(app, answer))
        done, _ = await asyncio.wait({recording}, timeout=self.ack_within)
        if not done:
            told = self._tell(app, answer, _RECORDING)
            await asyncio.wait({asyncio.ensure_future(told)}, timeout=self.tell_within)
            return _ack(BackgroundTask(self._settle_later, app, answer, recording))
        outcome = recording.result()
        if fields and isinstance(outcome, DtoValidationError | UninterpretableReplyError):
            lines = outcome.errors if isinstance(outcome, DtoValidationError) else []
            shown = _sentence(outcome)  # on the first field when no line names one
            return _errors(field_errors(lines, set(fields), fields[0], shown))
        return _ack(BackgroundTask(self._settle, app, answer, outcome))

    async def _record(self, app: App, answer: _Answer) -> AnswerReceipt | BaseException:
        try:
            who, pause_id, _ = await self._identify(app, answer)
            token = answer.where.token
            owner_id, answered_by = _credential(token, who)
            decision = answer.decision
            if decision is not None and token.digest is not None:
                decision = {**decision, "digest": token.digest}  # the question it showed
            return await app.answer(
                pause_id,
                decision=decision,
                reply=answer.reply,
                tenant_id=token.tenant_id,
                owner_id=owner_id,
                answered_by=answered_by,
            )
        except Exception as error:  # shown to the user who clicked (see _refused)
            return error

    async def _identify(self, app: App, answer: _Answer) -> tuple[str, str, PauseDescription]:
        """Who the user who clicked answers as, the pause's id and the pause — once the
        question's channel let them (`SlackChannel.allowed_users`) and the answerer mapped
        them, told what is asked.

        Raises:
            SlackNotAllowedError: The question's channel names who may answer it, and the user
                is none of them.
            SlackUnmappedUserError: The answerer maps the user to no one for this question.
        """
        token = answer.where.token
        pause_id, found = await _described(app, token)
        pause = found.pause
        channel = _channel_of(app, pause)
        if channel is not None and issubclass(channel.implementation, SlackChannel):
            await _check_allowed(self._slack(app), channel.implementation, answer.user)
        asking = SlackAnswering(
            answer.user,
            token.tenant_id,
            pause.answered_by,
            channel=pause.channel,
            role=None if channel is None or channel.role is None else channel.role.name,
            tool=pause.ask.tool,
            owner_id=found.owner_id,
            kind=pause.ask.kind,
        )
        if isinstance(self.answerer, Mapping):
            who: Any = self.answerer.get(answer.user.id)
        else:
            who = self.answerer(asking)
            if inspect.isawaitable(who):
                who = await who
        if who is None:
            raise SlackUnmappedUserError()
        if not isinstance(who, str) or not who:
            raise ConfigurationError(
                f"slack_router's answerer returned {who!r}, not an id or None",
                hint="return the answerer's id as text, or None to refuse the user",
            )
        return who, pause_id, found

    async def _settle_later(
        self, app: App, answer: _Answer, recording: asyncio.Future[AnswerReceipt | BaseException]
    ) -> None:
        await self._settle(app, answer, await recording)

    async def _settle(
        self, app: App, answer: _Answer, outcome: AnswerReceipt | BaseException
    ) -> None:
        if isinstance(outcome, BaseException):
            await self._refused(app, answer, outcome)
        elif outcome.repeated:  # a repeated answer was shown by the first
            return
        elif not outcome.decided and outcome.votes is not None:
            await self._tell(app, answer, _counted(outcome.votes))  # the others still vote
        else:
            await self._show(app, answer)

    async def _show(self, app: App, answer: _Answer) -> None:
        """The message, answered: who decided what, when; its buttons gone. Marked shown, so
        that the channel is not told again (`SlackChannel.answered`, owed to it durably in
        case this instance stops first)."""
        where = answer.where
        token = where.token
        try:
            pause_id, found = await _described(app, token)
            if found.decision is None or found.resolved_at is None:
                return
            question = _question(app, found)
            decided = Decided(
                approved=found.decision.approved,
                by=mention(answer.user.id),
                at=found.resolved_at,
                reason=found.decision.reason,
                changed=changed_arguments(
                    found.pause.ask.arguments, found.decision.override_arguments
                ),
                reply=found.reply,
            )
            await self._slack(app).client.chat_update(
                channel=where.channel_id,
                ts=where.message_ts,
                text=question_text(question),
                blocks=decided_blocks(question, decided),
            )
            await app.answer_shown(pause_id, tenant_id=token.tenant_id)
        except (AgbossError, SlackClientError) as error:
            log.warning("slack.update-failed: the answered question's message: %s", error)

    async def _refused(self, app: App, answer: _Answer, error: BaseException) -> None:
        """The refusal, shown to the user who clicked alone; the message untouched."""
        log_failure(error)  # the server's own failures (an answerer that crashed) are logged
        await self._tell(app, answer, _sentence(error))

    async def _tell(self, app: App, answer: _Answer, text: str) -> None:
        """A sentence shown to the user who clicked alone; the message untouched."""
        try:
            await self._slack(app).client.chat_postEphemeral(
                channel=answer.where.channel_id, user=answer.user.id, text=text
            )
        except (AgbossError, SlackClientError) as failed:
            log.warning("slack.ephemeral-failed: a sentence was not shown: %s", failed)


def _credential(token: Token, who: str) -> tuple[str | None, str | None]:
    """Who the mapped user answers (or claims) as: ``(owner_id, answered_by)`` — the
    thread's owner, or the channel's answerer."""
    owner = token.answered_by is PauseAnswerer.THREAD_OWNER
    return (who, None) if owner else (None, who)


def _view(app: App, action_id: str, where: Where, found: PauseDescription) -> dict[str, Any]:
    """The form a button opens, for a question that still waits."""
    if found.status is not PauseStatus.PENDING:
        raise NotPausedError(found.status.value)
    question = _question(app, found)
    if action_id == EDIT:
        return edit_view(where, question, app.arguments_schema(found.pause))
    return _OPENS[action_id](where, question)


def _channel_of(app: App, pause: PendingPause) -> ToolChannel | None:
    """The channel a pause's question was asked through, as this build declares it (``None``
    for a tool it no longer has)."""
    assembly = app.assembly
    tool = assembly.tool_named(pause.agent, pause.ask.tool)
    declared = None if tool is None else assembly.tool_channels.get(tool[0])
    return None if declared is None else declared.asking(pause.channel)


async def _check_allowed(
    slack: SlackWorkspace, channel: type[SlackChannel[Any]], user: SlackUser
) -> None:
    """Refuses a user the question's channel does not name, when it names anyone.

    Raises:
        SlackNotAllowedError: It names users or user groups, and the user is none of them
            and in none of them.
    """
    users, groups = channel.allowed_users, channel.allowed_user_groups
    if (not users and not groups) or user.id in users:
        return
    for group in groups:
        try:
            listed: Any = await slack.client.usergroups_users_list(usergroup=group)
        except SlackClientError as error:  # unreadable: refused, never let through
            log.warning("slack.group-unread: the user group %s: %s", group, error)
            continue
        if user.id in (listed.get("users") or ()):
            return
    raise SlackNotAllowedError()


async def _described(app: App, token: Token) -> tuple[str, PauseDescription]:
    """The id and the description of the pause a button names, once Slack's signature said the
    click is Slack's: the route is the channel's own door, so the reference is mapped back
    without an owner."""
    pause_id = await app.pause_id_of(token.pause_ref, tenant_id=token.tenant_id)
    return pause_id, await app.describe_pause(pause_id, tenant_id=token.tenant_id)


def _counted(votes: PauseVotes) -> str:
    """What a voter whose vote left the question waiting reads."""
    rejected = f", {votes.rejections} rejected" if votes.rejections else ""
    return (
        f"Your vote is counted: {votes.approvals} of the {votes.needed} approvals it needs"
        f"{rejected}. The question waits for the other voters."
    )


def _sentence(error: BaseException) -> str:
    """What the user who clicked reads: the error's sentence and what to do."""
    if not isinstance(error, AgbossError):
        return "The answer failed on the server; nothing was recorded. Try again in a moment."
    if isinstance(error, NotPausedError):
        return "This question no longer waits: it was answered or withdrawn. Nothing changed."
    if isinstance(error, ThreadOwnerError):
        return "Only the person whose conversation asked this question can answer it."
    hint = f" {_capital(error.hint)}." if error.hint else ""
    return f"{_capital(error.message)}.{hint}"


def _capital(text: str) -> str:
    """A sentence's first letter capitalised, unless it starts with a name (``owner_id``)."""
    first = text.split(" ", 1)[0]
    if not text or "_" in first or "." in first or first.isupper():
        return text
    return text[0].upper() + text[1:]


def _ack(task: BackgroundTask | None = None) -> Response:
    return Response(status_code=200, background=task)


def _errors(errors: Mapping[str, str]) -> Response:
    return JSONResponse({"response_action": "errors", "errors": dict(errors)})


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _payload(body: bytes) -> Mapping[str, Any]:
    """The ``payload`` field of a form-encoded interaction, as JSON."""
    try:
        fields = parse_qs(body.decode("utf-8"), strict_parsing=True)
        raw = fields["payload"][0]
        if nests_deeper(raw.encode(), MAX_DEPTH):  # the decoder recurses once per level
            raise ValueError(f"the payload nests deeper than {MAX_DEPTH} levels")
        payload = json.loads(raw)
    except (UnicodeDecodeError, ValueError, KeyError, IndexError, RecursionError) as error:
        raise UnreadableRequestError(
            "the body is not a Slack interaction (a form with a JSON payload field)",
            hint="point only the Slack app's Interactivity Request URL here",
        ) from error
    if not isinstance(payload, dict):
        raise UnreadableRequestError("the interaction's payload is not a JSON object")
    return payload


def _ours(actions: object) -> tuple[str, Token] | None:
    """The first of the actions that is one of a question's buttons, with its token."""
    if not isinstance(actions, list):
        return None
    for action in actions:
        found = _mapping(action)
        action_id = found.get("action_id")
        token = Token.loads(found.get("value"))
        if (
            action_id in (APPROVE, REJECT, REJECT_WITH_REASON, EDIT, WORDS, CLAIM, HAND_ON)
            and token
        ):
            return str(action_id), token
    return None


def _user(payload: Mapping[str, Any]) -> SlackUser:
    user = _mapping(payload.get("user"))
    team = user.get("team_id") or _mapping(payload.get("team")).get("id")
    name = user.get("username") or user.get("name")
    return SlackUser(
        str(user.get("id", "")),
        None if team is None else str(team),
        None if name is None else str(name),
    )


def _question(app: App, found: PauseDescription) -> Question:
    pause = found.pause
    return Question(
        tool=pause.ask.tool,
        arguments=pause.ask.arguments,
        kind=pause.ask.kind,
        agent=pause.agent,
        channel=pause.channel,
        accepts_reply=app.accepts_reply(pause),
        digest=pause.ask.digest,
        handoffs=tuple(app.handoffs(pause)),
    )


def slack_router(
    app: App | Callable[[], App | None],
    *,
    signing_secret: str,
    answerer: SlackAnswerer,
    workspace: SlackWorkspace | None = None,
    ack_within: timedelta = DEFAULT_ACK_WITHIN,
    max_body: int = DEFAULT_MAX_BODY,
) -> Router:
    """The route Slack posts a question's clicks and modals to, to mount beside
    `agboss.web.pause_router`: ``POST /interactions`` (the Slack app's Interactivity Request
    URL).

    Each request's signature is checked with the signing secret, and its timestamp against
    the application's clock (more than 5 minutes away: a replay, ``401``). Approve and Reject
    answer at once; Reject with reason, Edit and Answer in words open a modal whose
    submission answers. Who answers comes from ``answerer`` alone; an unmapped user is
    refused. Every answer is `App.answer` — recorded, the tree moved in the background — and
    acknowledged within ``ack_within``; then the message shows who decided what and when,
    or the user who clicked alone reads why the answer was refused (the message untouched).
    An invalid edit, or words the interpreter cannot read, is shown on the modal's fields.
    A delivery Slack retries answers the same and changes nothing more.

    Args:
        app: The application, or a function of nothing returning it (``None`` until open).
        signing_secret: The Slack app's Signing Secret.
        answerer: Who a Slack user answers as (`SlackAnswerer`).
        workspace: The client that updates messages and opens modals; the application's
            provided `SlackWorkspace` when ``None``.
        ack_within: How long an answer may take before the request is acknowledged anyway
            (Slack gives up at 3 seconds); what it decides is shown when it is done.
        max_body: The largest request body, in bytes.

    Raises:
        ConfigurationError: A setting is not of its type, or empty.
    """
    app_of = app_function(app, "slack_router")
    if not isinstance(signing_secret, str) or not signing_secret.strip():
        raise ConfigurationError(
            "slack_router needs the Slack app's signing secret",
            hint="signing_secret=os.environ['SLACK_SIGNING_SECRET'] (Basic Information → "
            "App Credentials)",
        )
    if not isinstance(answerer, Mapping) and not callable(answerer):
        raise ConfigurationError(
            "answerer= must map Slack user ids to answerers, or be a function of a SlackAnswering",
            hint="answerer={'U0123': 'manager-17'}, or answerer=lambda asking: …",
        )
    if workspace is not None and not isinstance(workspace, SlackWorkspace):
        raise ConfigurationError(
            f"workspace= takes a SlackWorkspace, not {type(workspace).__name__}",
            hint="SlackWorkspace(AsyncWebClient(token=...)), or leave it out",
        )
    if not isinstance(ack_within, timedelta) or not timedelta(0) < ack_within < timedelta(
        seconds=3
    ):
        raise ConfigurationError(
            f"ack_within={ack_within!r} must be a timedelta under Slack's 3 seconds",
            hint="leave it out for 2.5 seconds",
        )
    if not isinstance(max_body, int) or isinstance(max_body, bool) or max_body < 1:
        raise ConfigurationError(
            f"max_body={max_body!r} must be a positive whole number", hint="leave it out for 1 MiB"
        )
    interactions = _Interactions(
        app_of, workspace, signing_secret, answerer, ack_within.total_seconds(), max_body
    )
    return Router(
        routes=[Route("/interactions", interactions.handle, methods=["POST"])],
        redirect_slashes=False,
    )
