"""Failures stored as data: a JSON codec for the errors executions and branches failed with.

A failure is stored as its type (with the qualified names of its classes, so that matching by
class works on what is read back), its message, its JSON-safe fields and its cause chain — never
as a pickle, so that whoever can write the database cannot make an instance run code.

Reading a failure back rebuilds an instance only of a class the process already knows — the
`AgbossError` family (every subclass imported so far) and the classes the caller names, such as
those of ``.on_join_error(...)`` — without calling its ``__init__``. Any other class comes back
as a `RecordedError` that keeps its type names, so ``.on_join_error(PaymentDeclinedError, …)``
still matches it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from agboss.errors import AgbossError, ExecutionFailedError, RecordedError

__all__ = ["decode_failure", "encode_failure", "failure_names", "qualified_name", "redacted"]

_MAX_DEPTH = 16
"""How deep a cause chain is kept (a cycle, or a pathological chain, is cut there)."""

_JSON_SCALARS = (str, int, float, bool, type(None))


def qualified_name(cls: type[BaseException]) -> str:
    """``module.QualName`` of an exception class."""
    return f"{cls.__module__}.{cls.__qualname__}"


def _names(cls: type[BaseException]) -> list[str]:
    return [
        qualified_name(base)
        for base in cls.__mro__
        if isinstance(base, type)
        and issubclass(base, BaseException)
        and base not in (BaseException, Exception)
    ]


def _safe(value: object, depth: int) -> tuple[bool, Any]:
    """Whether a value can be stored as JSON, and its stored form."""
    if isinstance(value, float) and value != value:  # NaN is no JSON
        return False, None
    if isinstance(value, _JSON_SCALARS):
        return True, value
    if isinstance(value, BaseException):
        return True, {"$failure": _encode(value, depth + 1, set())}
    if isinstance(value, list | tuple):
        items = [_safe(item, depth) for item in value]
        return all(ok for ok, _ in items), [item for _, item in items]
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        pairs = {key: _safe(item, depth) for key, item in value.items()}
        return all(ok for ok, _ in pairs.values()), {k: v for k, (_, v) in pairs.items()}
    return False, None


def _encode(error: BaseException, depth: int, seen: set[int]) -> dict[str, Any]:
    seen.add(id(error))
    data: dict[str, Any] = {
        "type": qualified_name(type(error)),
        "types": _names(type(error)),
        "message": error.message if isinstance(error, AgbossError) else str(error),
    }
    if isinstance(error, AgbossError):
        data["code"] = error.code
    ok, args = _safe(list(error.args), depth)
    data["args"] = args if ok else [str(error)]
    state: dict[str, Any] = {}
    for key, value in vars(error).items() if hasattr(error, "__dict__") else ():
        if depth >= _MAX_DEPTH and isinstance(value, BaseException):
            continue
        ok, stored = _safe(value, depth)
        if ok:
            state[key] = stored
    if state:
        data["state"] = state
    cause = error.__cause__
    if cause is not None and id(cause) not in seen and depth < _MAX_DEPTH:
        data["cause"] = _encode(cause, depth + 1, seen)
    return data


def encode_failure(error: BaseException) -> str:
    """An error, its fields and its cause chain as JSON text."""
    return json.dumps(_encode(error, 0, set()), ensure_ascii=False)


def _known_classes(extra: Iterable[type[BaseException]]) -> dict[str, type[BaseException]]:
    known: dict[str, type[BaseException]] = {}
    pending: list[type[BaseException]] = [AgbossError]
    while pending:
        cls = pending.pop()
        known.setdefault(qualified_name(cls), cls)
        pending.extend(cls.__subclasses__())
    for cls in extra:
        known.setdefault(qualified_name(cls), cls)
    return known


def _restore(value: Any, known: Mapping[str, type[BaseException]], depth: int) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$failure"}:
            return _decode(value["$failure"], known, depth + 1)
        return {key: _restore(item, known, depth) for key, item in value.items()}
    if isinstance(value, list):
        return [_restore(item, known, depth) for item in value]
    return value


def _decode(data: Mapping[str, Any], known: Mapping[str, type[BaseException]], depth: int) -> Any:
    type_name = str(data.get("type", "builtins.Exception"))
    names = [str(name) for name in data.get("types", [type_name])]
    message = str(data.get("message", ""))
    args = data.get("args", [message])
    cls = known.get(type_name)
    error: BaseException
    if cls is not None:
        # As pickle rebuilds an exception, but without calling any constructor.
        error = cls.__new__(cls)
        BaseException.__init__(error, *(args if isinstance(args, list) else [message]))
        state = data.get("state", {})
        if isinstance(state, dict) and hasattr(error, "__dict__"):
            error.__dict__.update(_restore(state, known, depth))
    else:
        error = RecordedError(type_name, names, message)
    cause = data.get("cause")
    if isinstance(cause, dict) and depth < _MAX_DEPTH:
        error.__cause__ = _decode(cause, known, depth + 1)
    return error


def decode_failure(text: str, known: Iterable[type[BaseException]] = ()) -> BaseException:
    """An error as `encode_failure` stored it.

    Args:
        text: The stored JSON.
        known: Classes beyond the `AgbossError` family to rebuild as themselves.

    Returns:
        The rebuilt error; a `RecordedError` for a class this process does not know, and an
        `ExecutionFailedError` for text that is no stored failure.
    """
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return ExecutionFailedError("the execution failed (its stored error cannot be read)")
    decoded: BaseException = _decode(data, _known_classes(known), 0)
    return decoded


REDACTED = "<pause id>"
"""What a channel pause's id reads as where it must not be shown."""


def redacted(error: BaseException, secret: str | None) -> BaseException:
    """The error with ``secret`` masked in its message, fields and cause chain.

    A channel pause's id is the right to answer it: when a channel's own error text holds it,
    what agboss shows of that error (the step's failure, spans, logs, the stored failure) shows
    this copy. The copy keeps the classes (``.on_join_error`` matches it as the original) and
    the traceback; an error that does not hold the secret is returned as it is.
    """
    if not secret:
        return error
    text = encode_failure(error)
    escaped = json.dumps(secret, ensure_ascii=False)[1:-1]
    if escaped not in text:
        return error
    classes: list[type[BaseException]] = []
    at: BaseException | None = error
    while at is not None and len(classes) < _MAX_DEPTH:
        classes.append(type(at))
        at = at.__cause__
    copy = decode_failure(text.replace(escaped, REDACTED), known=classes)
    return copy.with_traceback(error.__traceback__)


def failure_names(error: BaseException) -> list[str]:
    """The qualified class names an error answers to (a `RecordedError`'s stored ones)."""
    if isinstance(error, RecordedError):
        return list(error.type_names)
    return _names(type(error))
