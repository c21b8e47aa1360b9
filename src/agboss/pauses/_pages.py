"""What the listings that page by keyset share: the opaque cursor (``page.next``) and the
checks of ``limit`` and ``after``."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TypeVar

from agboss.errors import DtoValidationError
from agboss.store import from_micros, to_micros

__all__ = [
    "MAX_PAGE",
    "check_limit",
    "cursor_of",
    "execution_keyset",
    "keyset_of",
    "next_cursor",
]

MAX_PAGE = 500

T = TypeVar("T")


def check_limit(limit: object) -> int:
    """``limit`` as a page's size.

    Raises:
        DtoValidationError: It is not a whole number from 1 to `MAX_PAGE`.
    """
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_PAGE:
        raise DtoValidationError(
            f"limit={limit!r} must be a whole number from 1 to {MAX_PAGE}",
            hint="page through more with after=page.next",
        )
    return limit


def cursor_of(at: datetime, *rest: str | int) -> str:
    """The cursor after a page's last entry: when it happened, and what breaks a tie."""
    raw = json.dumps([to_micros(at), *rest]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def keyset_of(
    cursor: object, shape: tuple[type, ...], page: str
) -> tuple[datetime, tuple[str | int, ...]]:
    """What `cursor_of` wrote: its time, and the values of the types ``shape`` names.

    Raises:
        DtoValidationError: ``cursor`` is not one a page of ``page`` gave.
    """
    try:
        if not isinstance(cursor, str) or len(cursor) > 1024:
            raise ValueError(cursor)
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        micros, *rest = json.loads(raw)
        if not isinstance(micros, int) or len(rest) != len(shape):
            raise ValueError(cursor)
        if any(type(value) is not kind for value, kind in zip(rest, shape, strict=True)):
            raise ValueError(cursor)
        return from_micros(micros), tuple(rest)
    except (ValueError, TypeError, binascii.Error) as error:
        raise DtoValidationError(
            f"after= is not a cursor {page} gave",
            hint="pass page.next from the page before, or leave after= out for the first page",
        ) from error


def execution_keyset(after: object, page: str) -> tuple[datetime, str] | None:
    """The ``(at, execution_id)`` a page of executions' cursor names; ``None``: the first page.

    Raises:
        DtoValidationError: ``after`` is not a cursor a page of ``page`` gave.
    """
    if after is None:
        return None
    at, (execution_id,) = keyset_of(after, (str,), page)
    return at, str(execution_id)


def next_cursor(
    found: Sequence[T], limit: int, keyset: Callable[[T], tuple[datetime, str]]
) -> str | None:
    """The cursor of the page after ``found`` (read with one row more than ``limit``, to know
    whether there is one); ``None`` on the last page."""
    if len(found) <= limit:
        return None
    return cursor_of(*keyset(found[limit - 1]))
