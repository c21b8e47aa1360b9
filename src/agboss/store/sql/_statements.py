"""The pieces a write's statements are made of: a unit of work's type and the statements it
yields, by what they return."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from agboss.store.sql._dialect import Deferred, Later, Returns, Sql

__all__ = ["Ops", "do", "many", "many_later", "one", "one_later", "when"]

Ops = Generator[Sql, Any, Any]
"""A write as a unit of work: it yields its statements and receives their rows."""


def one(text: str, *params: Any) -> Sql:
    """A statement whose one row (or ``None``) the write reads before it goes on."""
    return Sql(text, params, Returns.ONE)


def many(text: str, *params: Any) -> Sql:
    """A statement whose rows the write reads before it goes on."""
    return Sql(text, params, Returns.ALL)


def do(text: str, *params: Any) -> Sql:
    """A statement whose rows nobody reads."""
    return Sql(text, params)


def one_later(text: str, *params: Any) -> Sql:
    """A statement whose one row the write's result is made of, once the transaction ran."""
    return Sql(text, params, Returns.LATER_ONE)


def many_later(text: str, *params: Any) -> Sql:
    """A statement whose rows the write's result is made of, once the transaction ran."""
    return Sql(text, params, Returns.LATER_ALL)


def when(later: Later, make: Callable[[Any], Any]) -> Deferred:
    """A result made from a later statement's rows, once they came."""
    return Deferred(lambda: make(later.rows))
