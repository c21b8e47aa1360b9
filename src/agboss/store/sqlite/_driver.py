"""SQLite without ever making the event loop wait: a thread of its own for work that waits.

The event loop never waits for the file's lock. Anything that may wait runs on a thread the
store owns, on its writing connection (``BEGIN IMMEDIATE``, the fence checked first, then the
unit of work, then ``COMMIT``): a writer in another process that holds the lock is waited for
there, up to ``busy_timeout``, and then reported as `StoreBusyError`.

What cannot wait runs where it is asked, on connections with no busy wait at all: reads (in WAL
mode a reader takes no lock and sees the last commit), and — with ``inline`` (the default) — a
transaction whose ``BEGIN IMMEDIATE`` gets the lock at once. A hop to the thread costs ~75 µs
on a 2-core machine, the transaction itself ~20 µs; a pass commits a few times, so this is
most of the store's cost. When SQLite answers "busy" (another writer holds the lock), nothing
was done, and the work goes to the thread, which waits. ``inline=False`` sends every write to
the thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import queue
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

from agboss.errors import (
    StoreBusyError,
    StoreError,
    StoreSchemaError,
    StoreUnavailableError,
    StoreValueError,
)
from agboss.store._signals import SignalHub, hub_of
from agboss.store.protocol import Fence, Signal, lease_lost
from agboss.store.sql import PLAIN, SQLITE, Dialect, Later, Returns, Shape, Sql, Work

__all__ = ["Durability", "SqliteDriver"]

T = TypeVar("T")

_FENCE = "SELECT 1 FROM leases WHERE root_execution_id = ? AND holder = ? AND epoch = ?"

_STOP = object()


class Durability(StrEnum):
    """What a SQLite store's commits survive.

    Every commit survives a killed process (SQLite in WAL mode). The choice is about a power
    loss or an operating system's crash, which may roll back the last commits unless each
    waits for its write-ahead log to reach the disk.
    """

    POWER_LOSS = "power-loss"
    """Every commit that acknowledges something — an answer, a pause before its send, a
    tool's journal row, any state a caller was told of — waits for the disk
    (``synchronous=FULL``): it survives a power loss. Only a lease renewed or released, or an
    execution begun and promised to no one yet, commits without waiting (their loss costs
    nothing). The default."""
    PROCESS_CRASH = "process-crash"
    """No commit waits for the disk (``synchronous=NORMAL``): each survives a killed process,
    and a power loss may roll back the last ones — an answer already acknowledged to a
    webhook among them."""


CHECKPOINT_EVERY = 100
"""Inline commits between two checkpoints on the store's thread (a few hundred WAL pages)."""


def _mapped(error: BaseException, path: Path) -> BaseException:
    """A driver's error as the store's."""
    text = str(error)
    if isinstance(error, UnicodeError | OverflowError | sqlite3.ProgrammingError):
        return StoreValueError(f"the SQLite store cannot keep a value it was given: {text}")
    if isinstance(error, sqlite3.OperationalError):
        lowered = text.lower()
        if _is_busy(error):
            return StoreBusyError(
                f"the SQLite store at {path} stayed locked by another writer: {text}",
            )
        if "no such table" in lowered or "no such column" in lowered:
            return StoreSchemaError(
                f"the SQLite store at {path} is not an agboss store of this version: {text}",
                hint="open it with App.create (which migrates it), or run `agboss migrate`",
            )
        return StoreUnavailableError(
            f"the SQLite store at {path} cannot be used: {text}",
            hint="check that the file and its folder exist and are writable by this process",
        )
    if isinstance(error, sqlite3.Error):
        return StoreError(f"the SQLite store at {path} refused a statement: {text}")
    return error


def _run(connection: sqlite3.Connection, dialect: Dialect, statement: Sql) -> Any:
    cursor = connection.execute(dialect.render(statement.text), statement.params)
    try:
        returns = statement.returns
        if returns is Returns.NOTHING:
            return None
        rows = cursor.fetchone() if returns.one else cursor.fetchall()
        if returns.later:  # one connection, statements in order: the rows are here already
            later = Later()
            later.rows = rows
            return later
        return rows
    finally:
        cursor.close()


def _sha256(value: str | None) -> str | None:
    """``agboss_sha256``: SHA-256 of a text's UTF-8, as hex (``NULL`` for ``NULL``)."""
    return None if value is None else hashlib.sha256(value.encode()).hexdigest()


class SqliteDriver:
    """One SQLite file in WAL mode, its writes on a thread of their own.

    Args:
        path: The database file; its folder is created when missing.
        busy_timeout: How long a write waits for another process's write lock.
    """

    def __init__(
        self,
        path: Path,
        *,
        busy_timeout: timedelta = timedelta(seconds=5),
        inline: bool = True,
        durability: Durability = Durability.POWER_LOSS,
    ) -> None:
        # Read as written, lexically: relative/../x.db is x.db, and no relative/ is made for it.
        self.path = Path(os.path.normpath(path))
        self._busy_ms = int(busy_timeout.total_seconds() * 1000)
        self._inline = inline
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._writer: sqlite3.Connection | None = None
        self._reader: sqlite3.Connection | None = None
        self._eager: sqlite3.Connection | None = None
        self._committed = 0
        self.durability = durability
        self._durable = "FULL" if durability is Durability.POWER_LOSS else "NORMAL"
        self._synchronous: dict[int, str] = {}
        """Each writing connection's ``synchronous`` level as last set (by its ``id``)."""
        self._hub = hub_of(self.path)
        self._identity: tuple[int, int] | None = None
        """The file's device and inode as opened: a write into a file deleted (or replaced)
        since would be lost at the next start."""

    @property
    def dialect(self) -> Dialect:
        return SQLITE

    @property
    def signals(self) -> SignalHub:
        """The hub of every store on this file in this process: other processes on the file
        hear nothing (their sweep, and a waiter's own looking again, cover them)."""
        return self._hub

    def announcing(self, signals: Sequence[Signal]) -> None:
        return None  # handed on once committed

    def announced(self, signals: Sequence[Signal]) -> None:
        self._hub.publish(signals)

    # ---- lifecycle ---------------------------------------------------------------------

    async def open(self) -> None:
        if self._thread is not None:
            return
        thread = threading.Thread(target=self._serve, name=f"agboss-sqlite:{self.path}")
        thread.daemon = True  # a process that forgets app.close() still exits
        thread.start()
        self._thread = thread
        try:
            await self._on_thread(self._connect)
            self._identity = self._file_identity()
            self._reader = self._connection(busy_ms=0)
            if self._inline:
                self._eager = self._connection(busy_ms=0)
                # Reads the schema, so it meets another instance's lock on a new file (its
                # switch to WAL): waited for like the writer's, up to busy_timeout.
                await self._on_thread(
                    lambda: self._pragma(
                        self._eager_connection(), f"PRAGMA synchronous={self._durable}"
                    )
                )
                self._synchronous[id(self._eager)] = self._durable
                # Its commits never checkpoint (copy the WAL into the file and fsync it, which
                # takes milliseconds): the store's thread does, every `CHECKPOINT_EVERY`.
                self._eager_connection().execute("PRAGMA wal_autocheckpoint=0")
        except BaseException:
            await self.close()
            raise

    def _connection(self, *, busy_ms: int) -> sqlite3.Connection:
        try:
            connection = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=busy_ms / 1000
            )
            connection.execute(f"PRAGMA busy_timeout={busy_ms}")
            # What the decision log's seal hashes with (PostgreSQL's is a SQL function).
            connection.create_function("agboss_sha256", 1, _sha256, deterministic=True)
            return connection
        except (sqlite3.Error, OSError) as error:
            raise StoreUnavailableError(
                f"the SQLite store at {self.path} cannot be opened: {error}",
                hint="check that the folder is writable and the file is an agboss store",
            ) from error

    def _connect(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StoreUnavailableError(
                f"the folder of the SQLite store at {self.path} cannot be made: {error}",
                hint="check the path (sqlite:///relative/file.db, sqlite:////absolute/file.db)",
            ) from error
        connection = self._connection(busy_ms=self._busy_ms)
        try:
            self._use_wal(connection)
            # FULL: a commit waits for its WAL to reach the disk; NORMAL (work whose loss
            # costs nothing, or Durability.PROCESS_CRASH) survives a killed process only.
            connection.execute(f"PRAGMA synchronous={self._durable}")
            self._synchronous[id(connection)] = self._durable
        except sqlite3.Error as error:
            connection.close()
            raise _mapped(error, self.path) from error
        self._writer = connection

    def _use_wal(self, connection: sqlite3.Connection) -> None:
        """Puts the file in WAL mode. Instances opening a new file together race for it, and
        SQLite answers the losers "locked" at once (its busy wait does not cover a change of
        journal mode): they try again, up to ``busy_timeout``."""
        self._retried(connection, "PRAGMA journal_mode=WAL")

    def _eager_connection(self) -> sqlite3.Connection:
        assert self._eager is not None
        return self._eager

    def _pragma(self, connection: sqlite3.Connection, statement: str) -> None:
        """A pragma of opening, its driver errors the store's (`StoreError`)."""
        try:
            self._retried(connection, statement)
        except sqlite3.Error as error:
            raise _mapped(error, self.path) from error

    def _retried(self, connection: sqlite3.Connection, statement: str) -> None:
        """Runs ``statement``, again while the file is locked, up to ``busy_timeout``."""
        deadline = time.monotonic() + self._busy_ms / 1000
        while True:
            try:
                connection.execute(statement).fetchall()
                return
            except sqlite3.OperationalError as error:
                if not _is_busy(error) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.01)  # on the store's thread, not the loop's

    async def close(self) -> None:
        if self._thread is None:
            return
        try:
            await self._on_thread(self._disconnect)
        finally:
            self._thread = None
            self._jobs.put(_STOP)
            for connection in (self._reader, self._eager):
                if connection is not None:
                    connection.close()
            self._reader = self._eager = None

    def _disconnect(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    # ---- the store's thread ------------------------------------------------------------

    def _serve(self) -> None:
        while True:
            job = self._jobs.get()
            if job is _STOP:
                return
            call, loop, future = job
            try:
                result = call()
            except BaseException as error:
                loop.call_soon_threadsafe(_resolve_future, future, None, error)
            else:
                loop.call_soon_threadsafe(_resolve_future, future, result, None)

    async def _on_thread(self, call: Callable[[], T]) -> T:
        if self._thread is None:
            raise _not_open(self.path)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._jobs.put((call, loop, future))
        # Cancelling the caller does not cancel the job: a transaction is whole or absent.
        return await asyncio.shield(future)

    # ---- statements --------------------------------------------------------------------

    async def read(self, statement: Sql) -> Any:
        reader = self._reader
        if reader is None:
            raise _not_open(self.path)
        try:
            return _run(reader, SQLITE, statement)
        except sqlite3.OperationalError as error:
            if not _is_busy(error):
                raise _mapped(error, self.path) from error
        except (sqlite3.Error, UnicodeError, OverflowError) as error:
            raise _mapped(error, self.path) from error
        return await self._on_thread(lambda: self._read_on_thread(statement))

    def _read_on_thread(self, statement: Sql) -> Any:
        try:
            return _run(self._writing(), SQLITE, statement)
        except (sqlite3.Error, UnicodeError, OverflowError) as error:
            raise _mapped(error, self.path) from error

    def _file_identity(self) -> tuple[int, int] | None:
        try:
            found = os.stat(self.path)
        except OSError:
            return None
        return found.st_dev, found.st_ino

    def _check_file(self) -> None:
        """Refuses to write once the file was deleted or replaced under the open store: its
        connections would go on writing into the unlinked file, lost at the next start."""
        if self._identity is not None and self._file_identity() != self._identity:
            raise StoreUnavailableError(
                f"the SQLite store's file {self.path} was deleted or replaced while the "
                "application ran: nothing more can be written to it",
                hint="restore the file (or its folder) and restart the application; what was "
                "written since it went is in no file",
            )

    async def transact(
        self, work: Work[T], *, fence: Fence | None = None, shape: Shape = PLAIN
    ) -> T:
        self._check_file()  # one stat: ~1 µs against a commit's ~100 µs
        single = shape.single and fence is None
        level = self._durable if shape.durable else "NORMAL"
        eager = self._eager
        if eager is not None:
            try:
                self._synchronize(eager, level)
                result = (
                    self._autocommit(eager, work)
                    if single
                    else self._transact_on(eager, work, fence)
                )
            except _Busy:
                pass  # another writer holds the lock: wait for it on the store's thread
            else:
                self._committed += 1
                if self._committed % CHECKPOINT_EVERY == 0:
                    self._checkpoint_soon()
                return result
        if single:
            return await self._on_thread(
                lambda: self._autocommit(self._synchronize(self._writing(), level), work)
            )
        return await self._on_thread(
            lambda: self._transact_on(self._synchronize(self._writing(), level), work, fence)
        )

    def _synchronize(self, connection: sqlite3.Connection, level: str) -> sqlite3.Connection:
        """Sets how the connection's next commit waits for the disk (``FULL`` or ``NORMAL``),
        outside any transaction; only when it changes (a pragma costs a statement)."""
        if self._synchronous.get(id(connection)) != level:
            try:
                connection.execute(f"PRAGMA synchronous={level}")
            except sqlite3.Error as error:
                raise _mapped(error, self.path) from error
            self._synchronous[id(connection)] = level
        return connection

    def _checkpoint_soon(self) -> None:
        """Has the store's thread move the WAL into the file (not waited for)."""
        loop = asyncio.get_running_loop()
        self._jobs.put((self._checkpoint, loop, loop.create_future()))

    def _checkpoint(self) -> None:
        # PASSIVE: never waits for readers or writers; what it cannot copy now, it copies next
        # time. A failure only delays it: the WAL is still the store's truth.
        if self._writer is not None:
            with contextlib.suppress(sqlite3.Error):
                self._writer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    def _autocommit(self, connection: sqlite3.Connection, work: Work[T]) -> T:
        try:
            return _drive(connection, work)
        except (sqlite3.Error, UnicodeError, OverflowError) as error:
            if connection is self._eager and _is_busy(error):
                raise _Busy from error  # one statement, refused: nothing was written
            raise _mapped(error, self.path) from error

    def _writing(self) -> sqlite3.Connection:
        if self._writer is None:
            raise _not_open(self.path)
        return self._writer

    def _transact_on(self, connection: sqlite3.Connection, work: Work[T], fence: Fence | None) -> T:
        try:
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as error:
            if connection is self._eager and _is_busy(error):
                raise _Busy from error  # the lock is taken: nothing was begun
            raise _mapped(error, self.path) from error
        try:
            if fence is not None:
                held = connection.execute(
                    _FENCE, (fence.root_execution_id, fence.holder, fence.epoch)
                ).fetchone()
                if held is None:
                    raise lease_lost(fence)
            result = _drive(connection, work)
            connection.execute("COMMIT")
            return result
        except BaseException as error:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            if isinstance(error, sqlite3.Error | UnicodeError | OverflowError):
                raise _mapped(error, self.path) from error
            raise

    @asynccontextmanager
    async def session(self) -> AsyncIterator[None]:
        yield  # one writing connection already

    @asynccontextmanager
    async def migration_guard(self) -> AsyncIterator[None]:
        yield  # a migration's BEGIN IMMEDIATE takes the file's write lock


class _Busy(Exception):
    """The lock was not free for work that must not wait: it goes to the store's thread."""


def _is_busy(error: BaseException) -> bool:
    text = str(error).lower()
    return isinstance(error, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def _drive(connection: sqlite3.Connection, work: Work[T]) -> T:
    """Runs a unit of work's statements on a connection, handing each its rows."""
    steps = work()
    try:
        statement = next(steps)
        while True:
            statement = steps.send(_run(connection, SQLITE, statement))
    except StopIteration as done:
        result: T = done.value
        return result


def _resolve_future(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


def _not_open(path: Path) -> StoreError:
    return StoreError(
        f"the SQLite store at {path} is not open",
        hint="use the store through App.create, which opens it, and before app.close()",
    )
