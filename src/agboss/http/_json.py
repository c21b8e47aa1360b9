"""A request's body, read with care: bounded in length before it is read whole, in depth
before it is decoded, and decoded as strict JSON (UTF-8, no NaN, no name twice)."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.requests import Request

from agboss.http._problems import RequestTooLargeError, UnreadableRequestError

__all__ = ["nests_deeper", "read_body", "read_json"]


_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)
"""A JSON text's strings (to the end, if one is not closed) and brackets, in one linear scan."""


def nests_deeper(raw: bytes, limit: int) -> bool:
    """Whether a JSON text opens more than ``limit`` arrays or objects at once, brackets in
    strings not counted: read before the decoder, which recurses once per level."""
    depth = 0
    for token in _TOKENS.finditer(raw):
        opened = token[0]
        if opened in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        elif opened in (b"]", b"}"):
            depth -= 1
    return False


def _no_constants(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


class _DuplicateKeyError(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's members, refused when a name repeats: ``{"approved": false, "approved":
    true}`` means something else to each reader (RFC 8259 leaves it open), so it means
    nothing here."""
    found: dict[str, Any] = {}
    for name, value in pairs:
        if name in found:
            raise _DuplicateKeyError(f"the name {name[:40]!r} is given twice in one object")
        found[name] = value
    return found


def read_json(raw: bytes) -> Any:
    """A request body as JSON: UTF-8 without a byte order mark (RFC 8259's exchange format;
    UTF-16 and a BOM are refused, not guessed at), no NaN or Infinity, no name twice in one
    object. Check its depth first (`nests_deeper`): the decoder recurses once per level.

    Raises:
        UnreadableRequestError: It is none of that.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UnreadableRequestError(
            "the body is not UTF-8", hint="send the JSON text as UTF-8, without a byte order mark"
        ) from error
    if text.startswith("\ufeff"):
        raise UnreadableRequestError(
            "the body starts with a byte order mark", hint="send UTF-8 without a byte order mark"
        )
    try:
        return json.loads(text, parse_constant=_no_constants, object_pairs_hook=_unique_keys)
    except _DuplicateKeyError as error:
        raise UnreadableRequestError(
            f"the body is ambiguous: {error}", hint="give each name once in each object"
        ) from error
    except ValueError as error:
        raise UnreadableRequestError() from error


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, read up to ``limit`` bytes.

    Raises:
        RequestTooLargeError: It is longer.
    """
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise RequestTooLargeError(f"the request's body is over {limit} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise RequestTooLargeError(f"the request's body is over {limit} bytes")
    return bytes(body)
