"""What differs between SQL databases, kept small: placeholders, the clock, names of things.

Statements are written once with ``?`` placeholders and ``{now}`` (the database's clock, in
integer microseconds since the epoch); `Dialect.render` turns them into the database's own text,
once per statement (cached).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

__all__ = ["KEY_END", "Dialect", "Returns", "Sql"]

KEY_END = "\U0010ffff"
"""Appended to a prefix, the end of the prefix's key range (keys compare as bytes)."""


class Returns(enum.Enum):
    """What a statement's caller reads back."""

    NOTHING = "nothing"
    ONE = "one"
    ALL = "all"


@dataclass(frozen=True, slots=True)
class Sql:
    """One statement: its text (``?`` placeholders, ``{now}``), its parameters, what it returns."""

    text: str
    params: tuple[Any, ...] = ()
    returns: Returns = Returns.NOTHING


@dataclass(frozen=True, slots=True)
class Dialect:
    """One database's spelling.

    Attributes:
        name: ``sqlite`` or ``postgres``.
        placeholder: What ``?`` becomes.
        now_micros: An expression for the database's clock, in microseconds since the epoch.
        table_exists: A query of one parameter (a table's name) that returns a row when the
            table exists where the connection looks for tables.
    """

    name: str
    placeholder: str
    now_micros: str
    table_exists: str
    _rendered: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def render(self, text: str) -> str:
        """A statement's text in this dialect."""
        rendered = self._rendered.get(text)
        if rendered is None:
            rendered = text.replace("{now}", self.now_micros)
            if self.placeholder != "?":
                rendered = rendered.replace("?", self.placeholder)  # statements have no "?" else
            self._rendered[text] = rendered
        return rendered


SQLITE = Dialect(
    name="sqlite",
    placeholder="?",
    now_micros="CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)",
    table_exists="SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
)

POSTGRES = Dialect(
    name="postgres",
    placeholder="%s",
    now_micros="CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)",
    table_exists="SELECT 1 WHERE to_regclass(?) IS NOT NULL",
)
