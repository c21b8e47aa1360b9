"""Server-side prepared statements for the batched transactions of `PostgresDriver`.

A transaction goes out as one simple-protocol query (``BEGIN; …; COMMIT``), so psycopg's own
prepared statements (extended protocol) do not apply to it, and the server would parse and
plan each statement every time: about half of what it spends on a pause cycle. So a statement
sent more than once is prepared on each connection it goes out on (``PREPARE``, while the
connection has no transaction open: a failure must not abort one), and the batch carries
``EXECUTE name(values)`` instead of its text.

A statement PostgreSQL cannot prepare is sent with its values inline from then on. Where
prepared statements do not stay with the connection (a pooler such as PgBouncer in
transaction mode), the first ``EXECUTE`` that finds none turns them off for the store, and the
transaction is run again as it was before. A rollback is not such a loss: psycopg deallocates
on it, and the statements are prepared again on their next use (`PreparedStatements.forget`).
``PostgresStore(prepared_statements=False)`` (or ``?prepared_statements=false`` in its URL)
never uses them.

An ``EXECUTE``'s values are written as literals here for the types the store's statements pass
(text, integers, booleans, ``NULL``), spelled as psycopg's client-side binding spells them; any
other value goes through psycopg's binding. Its per-value adaptation was a tenth of a pause
cycle's client time, and the server reads the literals as the prepared statement's types.
"""

from __future__ import annotations

import hashlib
from typing import Any
from weakref import WeakKeyDictionary

from psycopg import AsyncClientCursor, AsyncConnection
from psycopg import Error as PsycopgError
from psycopg.pq import TransactionStatus

from agboss.store.sql import POSTGRES, Sql

__all__ = ["PreparedStatements"]

THRESHOLD = 2
"""How many times a statement is sent before it is prepared (not one-off statements)."""

PER_CONNECTION = 256
"""The most statements prepared on one connection."""

_COUNTED = 10_000
"""The most statement texts counted (ids listed with ``IN (…)`` make many texts)."""

# Class 42 (a statement the server cannot prepare: a parameter of unknown type, a table not yet
# made) and 0A (not supported): the statement is sent inline instead.
_REFUSED = ("42", "0A")

_ALREADY_PREPARED = "42P05"
"""duplicate_prepared_statement: the connection still has it."""


class PreparedStatements:
    """Which statements each connection of a pool has prepared.

    Args:
        enabled: Whether to prepare statements at all.
    """

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled
        self._seen: dict[str, int] = {}
        self._refused: set[str] = set()
        self._names: dict[str, str] = {}
        self._on: WeakKeyDictionary[AsyncConnection[Any], set[str]] = WeakKeyDictionary()

    async def text(
        self, connection: AsyncConnection[Any], binder: AsyncClientCursor[Any], statement: Sql
    ) -> str:
        """What a batch sends for ``statement``: ``EXECUTE`` of it once prepared on this
        connection, else its text with its values inline."""
        text = statement.text
        name = self._names.get(text)
        prepared = self._on.get(connection)
        if name is None or prepared is None or name not in prepared:
            name = await self._prepare(connection, statement)
            if name is None:
                return binder.mogrify(POSTGRES.render(text), statement.params)
        if not statement.params:
            return f"EXECUTE {name}"
        values = _literals(statement.params)
        if values is None:  # a value only psycopg's binding writes
            marks = ", ".join(["%s"] * len(statement.params))
            return binder.mogrify(f"EXECUTE {name}({marks})", statement.params)
        return f"EXECUTE {name}({', '.join(values)})"

    async def _prepare(self, connection: AsyncConnection[Any], statement: Sql) -> str | None:
        text = statement.text
        # One without values too: the decision log's seal, planned anew each time, cost more
        # than a pause cycle's other statements together.
        if not self.enabled or text in self._refused:
            return None
        seen = self._seen.get(text, 0) + 1
        if seen < THRESHOLD:
            if seen == 1 and len(self._seen) >= _COUNTED:
                return None
            self._seen[text] = seen
            return None
        prepared = self._on.setdefault(connection, set())
        idle = connection.info.transaction_status == TransactionStatus.IDLE
        if not idle or len(prepared) >= PER_CONNECTION:
            return None
        name = self._names.get(text)
        if name is None:
            name = self._names[text] = "agboss_" + hashlib.sha1(text.encode()).hexdigest()[:16]
        try:
            await connection.execute(f"PREPARE {name} AS {_numbered(text)}")
        except PsycopgError as error:
            state = error.sqlstate or ""
            if state == _ALREADY_PREPARED:  # kept through a rollback: see `forget`
                prepared.add(name)
                return name
            if not state.startswith(_REFUSED):
                raise
            self._refused.add(text)
            return None
        prepared.add(name)
        return name

    def forget(self, connection: AsyncConnection[Any]) -> None:
        """Forgets what ``connection`` has prepared, once a rollback may have deallocated it
        (psycopg deallocates all on a rollback when it had prepared statements itself): each
        is prepared again on its next use, or found still there."""
        self._on.pop(connection, None)

    def turn_off(self) -> None:
        """Stops using prepared statements (they do not stay with the connections)."""
        self.enabled = False
        self._on = WeakKeyDictionary()
        self._names.clear()


_INT8 = 1 << 63


def _literals(values: tuple[object, ...]) -> list[str] | None:
    """Each value as `_literal` writes it; ``None`` if one is left to psycopg's binding."""
    literals = []
    for value in values:
        literal = _literal(value)
        if literal is None:
            return None
        literals.append(literal)
    return literals


def _literal(value: object) -> str | None:
    """``value`` as a SQL literal, as psycopg's client-side binding writes it; ``None`` for a
    value left to that binding (a float, an enum, a number too large for a ``bigint``, a text
    with a NUL, which it refuses)."""
    if value is None:
        return "NULL"
    if isinstance(value, str):
        if type(value) is not str or "\x00" in value:
            return None
        if "\\" in value:  # E'' spells a backslash the same whatever the server's settings
            return " E'" + value.replace("\\", "\\\\").replace("'", "''") + "'"
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and type(value) is int and -_INT8 <= value < _INT8:
        return str(value) if value >= 0 else f" {value}"  # " -5": never "--", a comment
    return None


def _numbered(text: str) -> str:
    """A statement's text with ``$1``, ``$2``, … for its placeholders (`PREPARE`'s)."""
    rendered = POSTGRES.render(text)  # placeholders as %s, {now} as the server's clock
    pieces = rendered.split("%s")
    return pieces[0] + "".join(
        f"${place}{piece}" for place, piece in enumerate(pieces[1:], start=1)
    )
