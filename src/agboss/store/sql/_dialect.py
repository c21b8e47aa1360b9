"""What differs between SQL databases, kept small: placeholders, the clock, names of things.

Statements are written once with ``?`` placeholders and ``{now}`` (the database's clock, in
integer microseconds since the epoch); `Dialect.render` turns them into the database's own text,
once per statement (cached).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "KEY_END",
    "POSTGRES",
    "SQLITE",
    "Deferred",
    "Dialect",
    "Later",
    "Returns",
    "Sql",
    "computed",
]

KEY_END = "\U0010ffff"
"""Appended to a prefix, the end of the prefix's key range (keys compare as bytes)."""


class Returns(enum.Enum):
    """What a statement's caller reads back, and when.

    ``ONE`` and ``ALL`` are read before the work goes on (its next statements depend on them);
    ``LATER_ONE`` and ``LATER_ALL`` only make the work's result: the work gets a `Later` at
    once, filled by the time the transaction committed, so a driver may send the statement
    with the ones after it.
    """

    NOTHING = "nothing"
    ONE = "one"
    ALL = "all"
    LATER_ONE = "later-one"
    LATER_ALL = "later-all"

    @property
    def later(self) -> bool:
        """Whether the rows may come after the statements that follow."""
        return self in (Returns.LATER_ONE, Returns.LATER_ALL)

    @property
    def one(self) -> bool:
        """Whether one row (or ``None``) is read, not all."""
        return self in (Returns.ONE, Returns.LATER_ONE)


class Later:
    """The rows of a `Returns.LATER_*` statement, filled by the driver before its commit ends."""

    __slots__ = ("rows",)

    def __init__(self) -> None:
        self.rows: Any = None


class Deferred:
    """A write's result made from `Later` rows: computed once the transaction committed."""

    __slots__ = ("_make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make

    def value(self) -> Any:
        """The result."""
        return self._make()


def computed(result: Any) -> Any:
    """A unit of work's result with its `Deferred` parts computed (after the commit)."""
    if isinstance(result, Deferred):
        return result.value()
    if isinstance(result, list):
        return [computed(item) for item in result]
    return result


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
        row_lock: What ``{row_lock}`` becomes after a ``SELECT``: a lock on the rows read
            until the transaction ends (nothing where transactions are serial).
        ask_tool: What ``{ask_tool}`` becomes: the tool a pause ``p`` asks about, read from
            its ``ask_json``.
    """

    name: str
    placeholder: str
    now_micros: str
    table_exists: str
    row_lock: str = ""
    ask_tool: str = "json_extract(p.ask_json, '$.tool')"
    _rendered: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def render(self, text: str) -> str:
        """A statement's text in this dialect."""
        rendered = self._rendered.get(text)
        if rendered is None:
            rendered = (
                text.replace("{now}", self.now_micros)
                .replace("{row_lock}", self.row_lock)
                .replace("{ask_tool}", self.ask_tool)
            )
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
    row_lock=" FOR NO KEY UPDATE",
    ask_tool="(p.ask_json::json ->> 'tool')",
)
