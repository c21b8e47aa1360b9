"""SQLite, off the event loop: writes on the store's own thread, reads that never wait.

Every transaction runs on one thread the store owns, on its one writing connection
(``BEGIN IMMEDIATE``, the fence checked first, then the unit of work, then ``COMMIT``), so the
event loop never waits for the file's write lock: a writer in another process that holds it is
waited for on that thread, up to ``busy_timeout``, and then reported as `StoreBusyError`.

Reads run on the loop's thread on a second connection with no busy wait: in WAL mode a reader
takes no lock and sees the last commit, so a read costs tens of microseconds and never blocks;
in the rare case SQLite answers "busy" to a reader (a WAL file being reset), the read is
retried on the store's thread, which may wait.
"""

from __future__ import annotations

import asyncio
import queue
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

from agboss.errors import (
    LeaseLostError,
    StoreBusyError,
    StoreError,
    StoreSchemaError,
    StoreUnavailableError,
    StoreValueError,
)
from agboss.store.protocol import Fence
from agboss.store.sql.dialect import SQLITE, Dialect, Returns, Sql
from agboss.store.sql.driver import PLAIN, Shape, Work

__all__ = ["SqliteDriver", "lease_lost"]

T = TypeVar("T")

_FENCE = "SELECT 1 FROM leases WHERE root_execution_id = ? AND holder = ? AND epoch = ?"

_STOP = object()


def lease_lost(fence: Fence) -> LeaseLostError:
    """The error of a write whose pass no longer holds its tree's lease."""
    return LeaseLostError(
        f"this instance lost the lease on execution tree {fence.root_execution_id}",
        hint="another instance took the tree over; its pass carries on the work",
    )


def _mapped(error: BaseException, path: Path) -> BaseException:
    """A driver's error as the store's."""
    text = str(error)
    if isinstance(error, UnicodeError | OverflowError | sqlite3.ProgrammingError):
        return StoreValueError(f"the SQLite store cannot keep a value it was given: {text}")
    if isinstance(error, sqlite3.OperationalError):
        lowered = text.lower()
        if "locked" in lowered or "busy" in lowered:
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
        if statement.returns is Returns.ONE:
            return cursor.fetchone()
        if statement.returns is Returns.ALL:
            return cursor.fetchall()
        return None
    finally:
        cursor.close()


class SqliteDriver:
    """One SQLite file in WAL mode, its writes on a thread of their own.

    Args:
        path: The database file; its folder is created when missing.
        busy_timeout: How long a write waits for another process's write lock.
    """

    def __init__(self, path: Path, *, busy_timeout: timedelta = timedelta(seconds=5)) -> None:
        self.path = path
        self._busy_ms = int(busy_timeout.total_seconds() * 1000)
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._writer: sqlite3.Connection | None = None
        self._reader: sqlite3.Connection | None = None

    @property
    def dialect(self) -> Dialect:
        return SQLITE

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
            self._reader = self._connection(busy_ms=0)
        except BaseException:
            await self.close()
            raise

    def _connection(self, *, busy_ms: int) -> sqlite3.Connection:
        try:
            connection = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=busy_ms / 1000
            )
            connection.execute(f"PRAGMA busy_timeout={busy_ms}")
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
            connection.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a commit survives a process crash (only an OS crash may lose
            # the last commits), at a fraction of FULL's fsync cost.
            connection.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as error:
            connection.close()
            raise _mapped(error, self.path) from error
        self._writer = connection

    async def close(self) -> None:
        if self._thread is None:
            return
        try:
            await self._on_thread(self._disconnect)
        finally:
            self._thread = None
            self._jobs.put(_STOP)
            if self._reader is not None:
                self._reader.close()
                self._reader = None

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
                loop.call_soon_threadsafe(_settle, future, None, error)
            else:
                loop.call_soon_threadsafe(_settle, future, result, None)

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
            if "locked" not in str(error) and "busy" not in str(error):
                raise _mapped(error, self.path) from error
        except (sqlite3.Error, UnicodeError, OverflowError) as error:
            raise _mapped(error, self.path) from error
        return await self._on_thread(lambda: self._read_on_thread(statement))

    def _read_on_thread(self, statement: Sql) -> Any:
        try:
            return _run(self._writing(), SQLITE, statement)
        except (sqlite3.Error, UnicodeError, OverflowError) as error:
            raise _mapped(error, self.path) from error

    async def transact(
        self, work: Work[T], *, fence: Fence | None = None, shape: Shape = PLAIN
    ) -> T:
        # One file: every commit is as durable as synchronous=NORMAL makes it.
        if shape.single and fence is None:
            return await self._on_thread(lambda: self._autocommit(work))
        return await self._on_thread(lambda: self._transact(work, fence))

    def _autocommit(self, work: Work[T]) -> T:
        try:
            return _drive(self._writing(), work)
        except (sqlite3.Error, UnicodeError, OverflowError) as error:
            raise _mapped(error, self.path) from error

    def _writing(self) -> sqlite3.Connection:
        if self._writer is None:
            raise _not_open(self.path)
        return self._writer

    def _transact(self, work: Work[T], fence: Fence | None) -> T:
        connection = self._writing()
        try:
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as error:
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


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
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
