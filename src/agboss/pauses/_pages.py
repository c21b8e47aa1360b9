"""What the listings that page by keyset share: the opaque cursor (``page.next``) and the
checks of ``limit`` and ``after``."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime

from agboss.errors import DtoValidationError
from agboss.store import from_micros, to_micros

__all__ = ["MAX_PAGE", "check_limit", "cursor_of", "keyset_of"]

MAX_PAGE = 500


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
