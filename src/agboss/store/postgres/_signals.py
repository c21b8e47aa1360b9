"""Signals through PostgreSQL: ``NOTIFY`` with a commit, one ``LISTEN``ing connection.

A transaction that announces something ends with ``SELECT pg_notify(...)``: the server
delivers it when the transaction commits, and never if it does not. Each instance keeps one
connection of its own (outside the pool) listening on the store's channel, and hands what
arrives to its hearers. When that connection is cut (a server restart), it connects again,
backing off, and tells its hearers that signals may have been missed: they read the store
instead (a sweep), so a wake-up lost in the gap is late, never lost.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any, Final

from psycopg import AsyncConnection, sql
from psycopg import Error as PsycopgError

from agboss.errors import StoreUnavailableError
from agboss.store._signals import SignalHub
from agboss.store.protocol import Hearer, Signal, SignalKind
from agboss.store.sql import Sql

__all__ = ["PostgresSignals", "channel_of"]

_LOG = logging.getLogger("agboss.store")

_RECONNECT_FIRST = 0.05
_RECONNECT_MOST = 2.0
"""How long the listener waits before it connects again (doubling from the first)."""


def channel_of(schema: str | None) -> str:
    """The channel of the store in ``schema``: stores in two schemas of one database do not
    hear each other (a channel's name has at most 63 bytes)."""
    if schema is None:
        return "agboss"
    named = f"agboss:{schema}"
    if len(named.encode()) <= 63:
        return named
    return f"agboss:{hashlib.sha256(schema.encode()).hexdigest()[:32]}"


def _encoded(signal: Signal) -> str:
    return json.dumps([signal.kind.value, signal.root_execution_id, signal.origin])


_EARLIER: Final = {"due": SignalKind.ANSWERED}
"""What instances of an earlier build call a kind, heard while builds run side by side."""


def _decoded(payload: str) -> Signal | None:
    """A signal from a notification's payload (``None``: not one of agboss's)."""
    try:
        kind, root, origin = json.loads(payload)
        named = _EARLIER.get(kind) or SignalKind(kind)
        return Signal(named, str(root), None if origin is None else str(origin))
    except (ValueError, TypeError):
        return None


class PostgresSignals:
    """The signals of one PostgreSQL store, for this instance.

    Args:
        url: The server's URL.
        channel: The store's channel (`channel_of`).
        connect_timeout: How long a connection may take to open.
    """

    def __init__(self, url: str, channel: str, *, connect_timeout: float) -> None:
        self._url = url
        self.channel = channel
        self._connect_timeout = max(1, int(connect_timeout))
        self._hub = SignalHub(reaches_every_instance=True)
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self.connections = 0
        """How many times the listener connected (a reconnection counts)."""

    @property
    def reaches_every_instance(self) -> bool:
        return True

    def announcing(self, signals: Sequence[Signal]) -> Sql:
        """The statement that sends ``signals`` when its transaction commits."""
        calls = ", ".join("pg_notify(?, ?)" for _ in signals)
        params = [value for signal in signals for value in (self.channel, _encoded(signal))]
        return Sql(f"SELECT {calls}", tuple(params))

    async def listen(self, hearer: Hearer) -> Callable[[], None]:
        stop = await self._hub.listen(hearer)
        try:
            await self._listening()
        except BaseException:
            stop()
            raise
        return stop

    async def _listening(self) -> None:
        """Starts the listener if it is not running; returns once it listens."""
        if self._task is None or self._task.done():
            loop = asyncio.get_running_loop()
            self._ready = loop.create_future()
            self._task = loop.create_task(self._listen(self._ready))
        assert self._ready is not None
        await asyncio.shield(self._ready)

    async def _listen(self, ready: asyncio.Future[None]) -> None:
        delay = _RECONNECT_FIRST
        while True:
            try:
                connection = await AsyncConnection.connect(
                    self._url, autocommit=True, connect_timeout=self._connect_timeout
                )
            except (PsycopgError, OSError) as error:
                if not ready.done():  # the first: the caller hears why
                    ready.set_exception(_unreachable(error))
                    return
                _LOG.debug("store.listen-retry: %s", error)
            else:
                delay = _RECONNECT_FIRST
                if not await self._heard_on(connection, ready):
                    return
            await asyncio.sleep(delay)
            delay = min(delay * 2, _RECONNECT_MOST)

    async def _heard_on(
        self, connection: AsyncConnection[Any], ready: asyncio.Future[None]
    ) -> bool:
        """Listens on ``connection`` until it is cut; whether to connect again (not when the
        first connection could not listen: the caller hears why)."""
        try:
            async with connection:
                await connection.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
                self.connections += 1
                if ready.done():
                    _LOG.info(
                        "store.listen-restored: listening again on channel %s",
                        self.channel,
                        extra={"event": "store.listen-restored"},
                    )
                    self._hub.missed()  # what was announced while it was cut is lost
                else:
                    ready.set_result(None)
                async for notify in connection.notifies():
                    signal = _decoded(notify.payload)
                    if signal is not None:
                        self._hub.publish((signal,))
        except (PsycopgError, OSError) as error:
            if not ready.done():
                ready.set_exception(_unreachable(error))
                return False
            _LOG.warning(
                "store.listen-lost: the connection listening on channel %s was cut (%s); "
                "connecting again, and the recovery sweep covers what it misses meanwhile",
                self.channel,
                _first_line(error),
                extra={"event": "store.listen-lost"},
            )
        return True

    async def close(self) -> None:
        """Stops listening."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.wait([task])


def _first_line(error: BaseException) -> str:
    """What an error says, on one line (its class when it says nothing)."""
    said = str(error).strip()
    return said.splitlines()[0] if said else type(error).__name__


def _unreachable(error: BaseException) -> StoreUnavailableError:
    failure = StoreUnavailableError(
        f"the PostgreSQL store's listening connection cannot be opened: {_first_line(error)}",
        hint="check that the server accepts one more connection per instance "
        "(max_connections on the server)",
    )
    failure.__cause__ = error
    return failure
