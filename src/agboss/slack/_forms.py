"""The modals a question opens — a reason, the arguments to edit, the answerer's own words —
and what their submissions read as.

The edit form is built from the tool's input schema (`App.arguments_schema`), pre-filled with
the call's arguments as they were shown (masked): what comes back is an ``override_arguments``
that `App.answer` validates like any, a masked value left as it was standing for the real one.
A modal carries where its question is — the pause's token and the message — in its
``private_metadata``, which only Slack and this server see.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from agboss.enums import PauseKind
from agboss.slack._blocks import Question, Token, escaped, question_text, shown_value

__all__ = [
    "EDIT_VIEW",
    "HAND_ON_VIEW",
    "REASON_VIEW",
    "TO_BLOCK",
    "WHY_BLOCK",
    "WORDS_VIEW",
    "Where",
    "edit_view",
    "field_errors",
    "hand_on_view",
    "read_edit",
    "read_role",
    "read_text",
    "reason_view",
    "words_view",
]

REASON_VIEW: Final = "agboss.reason"
EDIT_VIEW: Final = "agboss.edit"
WORDS_VIEW: Final = "agboss.words"

HAND_ON_VIEW: Final = "agboss.hand-on"

REASON_BLOCK: Final = "agboss.reason"
ROLE_BLOCK: Final = "agboss.role"
TO_BLOCK: Final = "agboss.to"
WHY_BLOCK: Final = "agboss.why"
_THIS_ROLE: Final = "-"  # the role it is asked of: handed to a person of it
WORDS_BLOCK: Final = "agboss.words"
_FIELD: Final = "field."
_VALUE: Final = "value"
_MAX_FIELDS: Final = 90  # a modal holds 100 blocks


@dataclass(frozen=True, slots=True)
class Where:
    """Where a modal's question is: its pause, and the message to update once answered.

    Attributes:
        token: The pause's token, from the button that opened the modal.
        channel_id: The conversation of the question's message.
        message_ts: The message's ``ts``.
    """

    token: Token
    channel_id: str
    message_ts: str

    def dumps(self) -> str:
        """As a view's ``private_metadata`` (at most 3,000 characters: about 150 here)."""
        return json.dumps(
            {"k": self.token.dumps(), "c": self.channel_id, "ts": self.message_ts},
            separators=(",", ":"),
        )

    @classmethod
    def loads(cls, text: object) -> Where | None:
        """A view's ``private_metadata`` read back; ``None`` when it is not one of ours."""
        if not isinstance(text, str):
            return None
        try:
            raw = json.loads(text)
            token = Token.loads(raw["k"])
            where = cls(token, str(raw["c"]), str(raw["ts"])) if token is not None else None
        except (ValueError, KeyError, TypeError, RecursionError):  # not ours, however odd
            return None
        return where


def _plain(text: str, limit: int) -> dict[str, Any]:
    return {"type": "plain_text", "text": text[:limit]}


def _modal(
    callback_id: str, title: str, submit: str, where: Where, blocks: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "type": "modal",
        "callback_id": callback_id,
        "title": _plain(title, 24),
        "submit": _plain(submit, 24),
        "close": _plain("Cancel", 24),
        "private_metadata": where.dumps(),
        "blocks": blocks,
    }


def _about(question: Question) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": escaped(question_text(question))}}


def _text_input(block_id: str, label: str, placeholder: str) -> dict[str, Any]:
    return {
        "type": "input",
        "block_id": block_id,
        "label": _plain(label, 2000),
        "element": {
            "type": "plain_text_input",
            "action_id": _VALUE,
            "multiline": True,
            "max_length": 3000,
            "placeholder": _plain(placeholder, 150),
        },
    }


def reason_view(where: Where, question: Question) -> dict[str, Any]:
    """Reject with a reason: the agent's model reads it."""
    reason = _text_input(REASON_BLOCK, "Reason", "e.g. not this month")
    return _modal(REASON_VIEW, "Reject", "Reject", where, [_about(question), reason])


def hand_on_view(where: Where, question: Question) -> dict[str, Any]:
    """Hand on: to another role, a person, or both, saying why (`App.reassign`)."""
    roles = [{"text": _plain(f"{question.channel} (as it is)", 75), "value": _THIS_ROLE}]
    roles += [{"text": _plain(name, 75), "value": name[:150]} for name in question.handoffs[:99]]
    role = {
        "type": "input",
        "block_id": ROLE_BLOCK,
        "label": _plain("Role", 2000),
        "element": {
            "type": "static_select",
            "action_id": _VALUE,
            "options": roles,
            "initial_option": roles[min(1, len(roles) - 1)],
        },
    }
    to = _text_input(TO_BLOCK, "A person (optional)", "their id, as your app knows them")
    to["optional"] = True
    to["element"]["multiline"] = False
    why = _text_input(WHY_BLOCK, "Why", "e.g. a chargeback: legal decides")
    return _modal(HAND_ON_VIEW, "Hand on", "Hand on", where, [_about(question), role, to, why])


def read_role(values: Mapping[str, Any]) -> str | None:
    """The role a submitted hand-on form chose; ``None`` for the one it is asked of."""
    chosen = _state(values, ROLE_BLOCK).get("selected_option")
    value = chosen.get("value") if isinstance(chosen, Mapping) else None
    return None if not isinstance(value, str) or value == _THIS_ROLE else value


def words_view(where: Where, question: Question) -> dict[str, Any]:
    """Answer in words: the role's reply interpreter reads them."""
    words = _text_input(WORDS_BLOCK, "Your answer", "e.g. ok, but only half")
    return _modal(WORDS_VIEW, "Answer in words", "Send", where, [_about(question), words])


def _resolved(schema: Mapping[str, Any]) -> tuple[Mapping[str, Any], bool]:
    """A property's schema without its ``null`` alternative, and whether it had one."""
    choices = schema.get("anyOf")
    if isinstance(choices, list):
        others = [c for c in choices if isinstance(c, Mapping) and c.get("type") != "null"]
        nullable = len(others) < len(choices)
        return (others[0] if len(others) == 1 else {}), nullable
    return schema, False


def _kind(schema: Mapping[str, Any]) -> str:
    if isinstance(schema.get("enum"), list):
        return "enum"
    kind = schema.get("type")
    if kind in ("boolean", "number", "integer", "string"):
        return str(kind)
    return "json"  # an object, a list, a reference: edited as JSON


def _option(value: object) -> dict[str, Any]:
    return {"text": _plain(shown_value(value) or " ", 75), "value": json.dumps(value)[:150]}


def _element(kind: str, schema: Mapping[str, Any], value: object) -> dict[str, Any]:
    element: dict[str, Any]
    if kind in ("enum", "boolean"):
        choices = schema["enum"] if kind == "enum" else [True, False]
        element = {"type": "static_select", "options": [_option(c) for c in choices[:100]]}
        if value in choices:
            element["initial_option"] = _option(value)
    elif kind in ("number", "integer"):
        element = {"type": "number_input", "is_decimal_allowed": kind == "number"}
        if isinstance(value, int | float) and not isinstance(value, bool):
            element["initial_value"] = str(value)
    else:
        element = {"type": "plain_text_input", "multiline": kind == "json"}
        shown = value if kind == "string" else json.dumps(value, indent=2, ensure_ascii=False)
        if isinstance(shown, str) and value is not None and len(shown) <= 3000:
            element["initial_value"] = shown
    element["action_id"] = _VALUE
    return element


def edit_view(where: Where, question: Question, schema: Mapping[str, Any]) -> dict[str, Any]:
    """The tool's input as a form, pre-filled with the call's (masked) arguments — for a
    question a tool asked, its answer's form.

    Submitted, it approves the call with these arguments (`read_edit`).
    """
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    blocks = [_about(question)]
    for name, property_schema in list(properties.items())[:_MAX_FIELDS]:
        resolved, nullable = _resolved(property_schema)
        kind = _kind(resolved)
        label = str(property_schema.get("title") or resolved.get("title") or name)
        blocks.append(
            {
                "type": "input",
                "block_id": _FIELD + name,
                "optional": kind != "boolean" and (nullable or name not in required),
                "label": _plain(label, 2000),
                "element": _element(kind, resolved, question.arguments.get(name)),
            }
        )
    if question.kind is PauseKind.TOOL_INPUT:
        return _modal(EDIT_VIEW, "Answer", "Answer", where, blocks)
    return _modal(EDIT_VIEW, "Edit and approve", "Approve", where, blocks)


def _state(values: Mapping[str, Any], block_id: str) -> Mapping[str, Any]:
    found = values.get(block_id)
    state = found.get(_VALUE) if isinstance(found, Mapping) else None
    return state if isinstance(state, Mapping) else {}


def read_text(values: Mapping[str, Any], block_id: str) -> str | None:
    """A text input's value, stripped; ``None`` when it is empty or missing."""
    value = _state(values, block_id).get("value")
    return value.strip() or None if isinstance(value, str) else None


def read_edit(
    values: Mapping[str, Any], schema: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, str]]:
    """A submitted edit form as ``override_arguments``, and the fields it could not read
    (block id → what is wrong), which the modal shows beside them."""
    arguments: dict[str, Any] = {}
    errors: dict[str, str] = {}
    properties: Mapping[str, Any] = schema.get("properties") or {}
    for name, property_schema in list(properties.items())[:_MAX_FIELDS]:
        resolved, nullable = _resolved(property_schema)
        kind = _kind(resolved)
        state = _state(values, _FIELD + name)
        try:
            arguments[name] = _read(kind, state, nullable)
        except ValueError as error:
            errors[_FIELD + name] = str(error)
    return arguments, errors


def _read(kind: str, state: Mapping[str, Any], nullable: bool) -> Any:
    if kind in ("enum", "boolean"):
        option = state.get("selected_option")
        return json.loads(option["value"]) if isinstance(option, Mapping) else None
    text = state.get("value")
    if not isinstance(text, str) or text.strip() == "":
        return None if nullable or kind != "string" else ""
    if kind in ("number", "integer"):
        try:
            number = int(text) if kind == "integer" else float(text)
        except ValueError:
            whole = "whole " if kind == "integer" else ""
            raise ValueError(f"{text!r} is not a {whole}number") from None
        if isinstance(number, float) and not math.isfinite(number):
            raise ValueError(f"{text!r} is not a finite number")
        return number
    if kind == "json":
        try:
            return json.loads(text)
        except ValueError:
            raise ValueError('this field takes JSON, e.g. [1, 2] or {"key": "value"}') from None
    return text


def field_errors(lines: list[str], blocks: set[str], fallback: str, message: str) -> dict[str, str]:
    """A `DtoValidationError`'s lines (``field: what``) on the modal's fields they name; the
    rest, or the whole message when no line names a field, on ``fallback``."""
    errors: dict[str, list[str]] = {}
    for line in lines:
        where, _, what = line.partition(": ")
        block = _FIELD + where.split(".")[0]
        if block in blocks:
            errors.setdefault(block, []).append(what or line)
        else:
            errors.setdefault(fallback, []).append(line)
    if not errors:
        errors[fallback] = [message]
    return {block: "; ".join(found)[:2000] for block, found in errors.items()}
