"""What a caller may pass to `App`: identifiers and answers, checked once at the edge.

Python callers pass what a webhook hands them. Every identifier (``pause_id``, ``tenant_id``,
``owner_id``, ``thread_id``, ``execution_id``, ``answered_by``) must be a string that is not
blank, is at most `InputLimits.id_length` characters long and holds no NUL character or lone
surrogate (neither can be stored, nor sent on as UTF-8). The texts of an answer (a reply, a
decision's ``reason``, the strings in its ``override_arguments``) must be encodable and within
their limits. Anything else is a `DtoValidationError` that names the argument and the limit,
before anything is read or written.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from agboss.errors import ConfigurationError, DtoValidationError

__all__ = [
    "MAX_DEPTH",
    "InputLimits",
    "check_depth",
    "check_flag",
    "check_id",
    "check_optional_id",
    "check_text",
    "check_values",
    "has_non_finite",
]

MAX_DEPTH = 64
"""How deeply an answer (a decision, a webhook's body) may nest lists and mappings: a
decision and its ``override_arguments`` around a tool's input need far fewer, and anything
deeper is refused before any recursive code (a decoder, a validator, a masker) reads it."""


@dataclass(frozen=True, slots=True)
class InputLimits:
    """The largest inputs an application takes; each has a default that fits real use.

    Declared with ``@application(limits=InputLimits(...))``. An input over a limit is a
    `DtoValidationError` that names it, and changes nothing.

    Attributes:
        id_length: Characters in an identifier: a pause, tenant, owner, thread or execution id,
            and ``answered_by``.
        reason_length: Characters in a decision's ``reason`` (a rejection's reason is read by
            the model).
        reply_length: Characters in a free-text reply (read by a reply interpreter, and kept
            in the audit trail).
        override_bytes: Bytes of a decision's ``override_arguments`` as JSON.
    """

    id_length: int = 256
    reason_length: int = 2_000
    reply_length: int = 8_000
    override_bytes: int = 65_536

    def __post_init__(self) -> None:
        for name in ("id_length", "reason_length", "reply_length", "override_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigurationError(
                    f"InputLimits({name}={value!r}) must be a whole number of 1 or more",
                    hint="give a positive limit; the defaults fit most applications",
                )


def _unencodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def check_id(value: object, name: str, limits: InputLimits) -> str:
    """An identifier as given, once it is a storable, non-blank string within the limit.

    Raises:
        DtoValidationError: It is not one; the message names ``name``.
    """
    if not isinstance(value, str):
        raise DtoValidationError(
            f"{name} must be a string, not {type(value).__name__}",
            hint=f"pass {name} as text (decode bytes, format numbers) before calling",
        )
    if not value.strip():
        raise DtoValidationError(
            f"{name} is blank", hint=f"pass the {name} itself; blanks name nobody"
        )
    if len(value) > limits.id_length:
        raise DtoValidationError(
            f"{name} is {len(value)} characters long, over the limit of {limits.id_length} "
            "(InputLimits.id_length)",
            hint="pass the id you were given; raise InputLimits.id_length on the application "
            "if yours are longer",
        )
    if "\x00" in value or _unencodable(value):
        raise DtoValidationError(
            f"{name} holds a NUL character or a lone surrogate, which cannot be stored",
            hint=f"pass {name} as valid Unicode text",
        )
    return value


def check_optional_id(value: object, name: str, limits: InputLimits) -> str | None:
    """``None``, or an id as `check_id` takes it."""
    return None if value is None else check_id(value, name, limits)


def check_flag(value: object, name: str) -> bool:
    """A boolean argument; `DtoValidationError` for anything else (a ``"false"`` that would be
    true)."""
    if not isinstance(value, bool):
        raise DtoValidationError(
            f"{name} must be True or False, not {type(value).__name__}",
            hint=f"pass {name}=True or {name}=False",
        )
    return value


def check_text(value: object, name: str, limit: int, limit_name: str) -> str:
    """A text of an answer (a reply, a reason), once it is a storable string within its limit.

    Raises:
        DtoValidationError: It is not one; the message names ``name`` and the limit.
    """
    if not isinstance(value, str):
        raise DtoValidationError(
            f"{name} must be a string, not {type(value).__name__}",
            hint=f"pass {name} as text",
        )
    if len(value) > limit:
        raise DtoValidationError(
            f"{name} is {len(value)} characters long, over the limit of {limit} "
            f"(InputLimits.{limit_name})",
            hint=f"shorten it, or raise InputLimits.{limit_name} on the application",
        )
    if _unencodable(value):
        raise DtoValidationError(
            f"{name} holds a lone surrogate, which cannot be stored",
            hint=f"pass {name} as valid Unicode text",
        )
    return value


def check_values(value: object, name: str, limit: int, limit_name: str) -> None:
    """A JSON-like value (``override_arguments``): finite numbers, encodable strings and keys,
    and at most ``limit`` bytes as JSON.

    Raises:
        DtoValidationError: It is not; the message names the place in it.
    """
    _check_value(value, name, 0)
    size = len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
    if size > limit:
        raise DtoValidationError(
            f"{name} is {size} bytes as JSON, over the limit of {limit} (InputLimits.{limit_name})",
            hint=f"send fewer or smaller values, or raise InputLimits.{limit_name} on the "
            "application",
        )


def check_depth(value: object, name: str, limit: int = MAX_DEPTH) -> None:
    """Refuses a value that nests lists, tuples or mappings deeper than ``limit``; read
    without recursion, so that a value a thousand levels deep is an error, not a
    `RecursionError`.

    Raises:
        DtoValidationError: It nests deeper; the message names ``name``.
    """
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Iterable[object] = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth >= limit:
            raise DtoValidationError(
                f"{name} nests deeper than {limit} levels",
                hint=f"pass {name} as its type has it: no answer nests that deeply",
            )
        stack.extend((child, depth + 1) for child in children)


def has_non_finite(value: object) -> bool:
    """Whether a dumped model holds a NaN or an infinity (JSON stores them as null)."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(has_non_finite(item) for item in value.values())
    if isinstance(value, list | tuple | set | frozenset):
        return any(has_non_finite(item) for item in value)
    return False


_DEPTH = 32
"""How deeply ``override_arguments`` may nest (a tool's input DTO is not deeper)."""


def _check_value(value: object, where: str, depth: int) -> None:
    if depth > _DEPTH:
        raise DtoValidationError(
            f"{where} nests deeper than {_DEPTH} levels",
            hint="pass the tool's input as its DTO has it",
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise DtoValidationError(
            f"{where} is not a finite number (NaN and infinity cannot be stored or replayed)",
            hint="pass a finite number, or leave the field out to keep the model's argument",
        )
    if isinstance(value, str):
        if _unencodable(value):
            raise DtoValidationError(
                f"{where} holds a lone surrogate, which cannot be stored",
                hint="pass valid Unicode text",
            )
    elif isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str) or _unencodable(key):
                raise DtoValidationError(
                    f"{where} has a key that is not valid text: {key!r}",
                    hint="name the fields as the tool's input does",
                )
            _check_value(item, f"{where}.{key}", depth + 1)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _check_value(item, f"{where}[{index}]", depth + 1)
    elif value is not None and not isinstance(value, bool | int | float):
        raise DtoValidationError(
            f"{where} is a {type(value).__name__}, which JSON cannot carry",
            hint="pass strings, numbers, booleans, lists and mappings",
        )
