"""The Block Kit a question is shown with: its message, how it reads once closed, and the
buttons that carry the pause's id — the channel's secret, in their ``value`` only.

Everything a model or a person wrote (the tool's arguments, a reason) is escaped for Slack's
``mrkdwn`` before it is shown, so that an argument cannot mention a channel, a user or a link.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from agboss.enums import PauseAnswerer, PauseKind
from agboss.records import pause_ref, shown_digest

__all__ = [
    "ACTIONS_BLOCK",
    "Question",
    "Token",
    "closed_blocks",
    "decided_blocks",
    "escaped",
    "question_blocks",
    "question_text",
]

ACTIONS_BLOCK: Final = "agboss.actions"
"""The block id of a question's buttons."""

APPROVE: Final = "agboss.approve"
REJECT: Final = "agboss.reject"
REJECT_WITH_REASON: Final = "agboss.reject-with-reason"
EDIT: Final = "agboss.edit"
WORDS: Final = "agboss.words"
CLAIM: Final = "agboss.claim"
HAND_ON: Final = "agboss.hand-on"

_MAX_FIELDS: Final = 10  # Slack's limit of fields in one section
_MAX_TEXT: Final = 2900  # under a section's 3,000 characters


@dataclass(frozen=True, slots=True)
class Token:
    """What a question's buttons carry: which pause, in which tenant, answered by whom.

    The pause is named by its reference, never its id: a button's value travels through Slack
    and its client's logs, and the route maps it back once Slack's signature is checked.

    Attributes:
        pause_ref: The pause's reference (`agboss.pause_ref`).
        tenant_id: Its execution's tenant.
        answered_by: Who may answer it: the thread's owner, or the channel's side.
        digest: The question's digest as the message shows it (``None``: a question asked
            before digests): a click decides the question the message showed, or nothing.
    """

    pause_ref: str
    tenant_id: str
    answered_by: PauseAnswerer
    digest: str | None = None

    def dumps(self) -> str:
        """As a button's ``value`` (at most 2,000 characters: about 120 here)."""
        value = {"r": self.pause_ref, "t": self.tenant_id, "a": self.answered_by.value}
        if self.digest is not None:
            value["d"] = self.digest
        return json.dumps(value, separators=(",", ":"))

    @classmethod
    def loads(cls, text: object) -> Token | None:
        """A button's ``value`` read back; ``None`` when it is not one of ours. A button
        posted by an earlier agboss carries the id itself (``"p"``): read as its reference,
        so that it keeps working until its question closes."""
        if not isinstance(text, str):
            return None
        try:
            raw = json.loads(text)
            ref = str(raw["r"]) if "r" in raw else pause_ref(str(raw["p"]))
            digest = None if raw.get("d") is None else str(raw["d"])
            token = cls(ref, str(raw["t"]), PauseAnswerer(raw["a"]), digest)
        except (ValueError, KeyError, TypeError, RecursionError):  # not ours, however odd
            return None
        return token


@dataclass(frozen=True, slots=True)
class Question:
    """What a message shows of a pause: the tool call, its arguments as they may leave the
    process (masked by the PII rules), who asks, and what may be answered.

    Attributes:
        tool: The tool's name.
        arguments: The call's arguments, masked.
        kind: What is asked.
        agent: The agent whose call waits.
        channel: The channel asked (a role's name).
        accepts_reply: Whether the role reads the answerer's own words.
        expires_at: Its deadline, if it has one: the message says until when it waits.
        digest: What it asks, digested (the message shows its first characters): what a
            decision through the message is recorded against.
        claimable: Whether a person may claim it (a Claim button): not one several approve.
        handled_by: Who claimed it, as the message says it (mrkdwn: ``<@U…>``), while the
            claim holds.
        handled_until: Until when that claim holds.
        handoffs: The roles it may be handed to (`App.reassign`): a Hand on button when
            there are any.
    """

    tool: str
    arguments: Mapping[str, Any]
    kind: PauseKind
    agent: str
    channel: str
    accepts_reply: bool = False
    expires_at: datetime | None = None
    digest: str | None = None
    claimable: bool = False
    handled_by: str | None = None
    handled_until: datetime | None = None
    handoffs: tuple[str, ...] = ()


def escaped(text: str) -> str:
    """``text`` as Slack's ``mrkdwn`` shows it literally: ``&``, ``<`` and ``>`` escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def shown_value(value: object) -> str:
    """An argument's value as a person reads it."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def question_text(question: Question) -> str:
    """The question in one line: the notification's text and the fallback of its blocks."""
    if question.kind is PauseKind.TOOL_INPUT:
        return f"The tool {question.tool} asks a question"
    if question.kind is PauseKind.INTERRUPTED:
        return f"{question.tool} may have run already: run it again?"
    if not question.agent:
        return f"Run {question.tool}?"
    return f"{question.agent} asks to run {question.tool}"


def _heading(question: Question) -> dict[str, Any]:
    return {"type": "header", "text": {"type": "plain_text", "text": question_text(question)[:150]}}


def _arguments(arguments: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The arguments as a readable list: one field each (a section holds ten), else lines."""
    shown = [(escaped(str(k)), escaped(shown_value(v))) for k, v in arguments.items()]
    if not shown:
        return [_section("_no arguments_")]
    if len(shown) <= _MAX_FIELDS and all(len(k) + len(v) < 1900 for k, v in shown):
        fields = [{"type": "mrkdwn", "text": f"*{key}*\n{value}"} for key, value in shown]
        return [{"type": "section", "fields": fields}]
    return [_section("\n".join(f"*{key}*: {value}" for key, value in shown))]


def _section(text: str) -> dict[str, Any]:
    if len(text) > _MAX_TEXT:
        text = text[: _MAX_TEXT - 1] + "…"
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text[:_MAX_TEXT]}]}


def _asked(question: Question) -> list[dict[str, Any]]:
    if not question.agent:  # a withdrawal knows the call, not who asked it
        return []
    said = f"Asked by {escaped(question.agent)} · {escaped(question.channel)}"
    if question.expires_at is not None:
        said += f" · expires {slack_time(question.expires_at)}"
    if question.digest is not None:
        said += f" · digest `{shown_digest(question.digest)}`"
    return [_context(said)]


def _button(text: str, action_id: str, token: Token, style: str | None = None) -> dict[str, Any]:
    button: dict[str, Any] = {
        "type": "button",
        "action_id": action_id,
        "text": {"type": "plain_text", "text": text},
        "value": token.dumps(),
    }
    if style is not None:
        button["style"] = style
    return button


def question_blocks(question: Question, token: Token) -> list[dict[str, Any]]:
    """A waiting question: the call, its arguments, who asks, and its buttons.

    Approve and Reject always; Reject with reason; Edit for a call whose arguments may change
    (not for one that may have run: it runs again as it was, or not at all); Answer in words
    when the role reads them; Claim for a question one answer decides, until someone claims
    it — then the message says who handles it, and until when; Hand on when another role may
    take it. A tool's question is answered through Edit ("Answer").
    """
    if question.kind is PauseKind.TOOL_INPUT:
        buttons = [_button("Answer", EDIT, token, "primary"), _button("Decline", REJECT, token)]
    else:
        approve = "Run again" if question.kind is PauseKind.INTERRUPTED else "Approve"
        buttons = [
            _button(approve, APPROVE, token, "primary"),
            _button("Reject", REJECT, token),
            _button("Reject with reason", REJECT_WITH_REASON, token),
        ]
    if question.kind is PauseKind.APPROVAL:
        buttons.append(_button("Edit", EDIT, token))
    if question.accepts_reply:
        buttons.append(_button("Answer in words", WORDS, token))
    if question.claimable and question.handled_by is None:
        buttons.append(_button("Claim", CLAIM, token))
    if question.handoffs and question.kind is not PauseKind.INTERRUPTED:
        buttons.append(_button("Hand on", HAND_ON, token))
    handled = []
    if question.handled_by is not None and question.handled_until is not None:
        until = slack_time(question.handled_until)
        handled = [_context(f"Handled by {question.handled_by} until {until}")]
    return [
        _heading(question),
        *_arguments(question.arguments),
        *_asked(question),
        *handled,
        {"type": "actions", "block_id": ACTIONS_BLOCK, "elements": buttons},
    ]


def slack_time(at: datetime) -> str:
    """A moment as Slack shows it in each reader's own time zone (with a UTC fallback)."""
    fallback = at.strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{int(at.timestamp())}^{{date_short_pretty}} at {{time}}|{fallback}>"


@dataclass(frozen=True, slots=True)
class Decided:
    """How a question was answered, for its message.

    Attributes:
        approved: Whether the call was approved.
        by: Who answered, as the message says it (mrkdwn: ``<@U…>``, or an escaped name).
        at: When the answer was recorded, on the application's Clock.
        reason: The rejection's reason, if one was given.
        changed: The arguments an edit changed: name → (before, after), both masked.
        reply: The answerer's own words the decision was read from, if any.
    """

    approved: bool
    by: str
    at: datetime
    reason: str | None = None
    changed: Mapping[str, tuple[Any, Any]] | None = None
    reply: str | None = None


def decided_blocks(question: Question, decided: Decided) -> list[dict[str, Any]]:
    """An answered question: the call as it was asked, and who decided what, when — no
    buttons left."""
    verb = "Approved" if decided.approved else "Rejected"
    lines = [f"*{verb}* by {decided.by} · {slack_time(decided.at)}"]
    if decided.reply is not None:
        lines.append(f"In their words: “{escaped(decided.reply)}”")
    if decided.reason:
        lines.append(f"Reason: {escaped(decided.reason)}")
    for name, (before, after) in (decided.changed or {}).items():
        lines.append(
            f"Changed *{escaped(name)}*: {escaped(shown_value(before))} → "
            f"{escaped(shown_value(after))}"
        )
    shown = _section("\n".join(lines))
    return [_heading(question), *_arguments(question.arguments), *_asked(question), shown]


def closed_blocks(question: Question, why: str) -> list[dict[str, Any]]:
    """A question taken back (withdrawn, cancelled): the call, and why — no buttons left."""
    return [_heading(question), *_arguments(question.arguments), *_asked(question), _section(why)]


def mention(user_id: str) -> str:
    """A Slack user as a message names them (each reader sees the name they know)."""
    return f"<@{escaped(user_id)}>"


def changed_arguments(
    asked: Mapping[str, Any], overrides: Mapping[str, Any] | None
) -> dict[str, tuple[Any, Any]]:
    """The arguments an edit changed, in the order of the override."""
    if not overrides:
        return {}
    return {
        name: (asked.get(name), value)
        for name, value in overrides.items()
        if asked.get(name) != value
    }
