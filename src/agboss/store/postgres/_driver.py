"""PostgreSQL through psycopg's async pool: sessions, batched transactions, bounded waits.

A pass binds one connection for its whole duration (`session`): its reads and transactions
share it, serialized by a lock, instead of checking a connection out per statement. A
transaction goes out in as few round trips as its work allows: ``BEGIN``, the fence
(``agboss_fence``, which holds the lease row ``FOR SHARE`` so that a takeover waits for the
transaction, or aborts it with SQLSTATE AB001), the statements and ``COMMIT`` are sent together
as one query, cut only where the work must read a statement's rows to go on (rows a write
only returns are read from the same query's results; measured: 0.67 ms for a
three-statement transaction, against 1.16 ms pipelined and 1.43 ms one statement at a time).

Every connection has a ``lock_timeout`` and a ``statement_timeout``, so a stalled holder cannot
make others wait without end.
"""

from __future__ import annotations

import asyncio
import contextlib
import select
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from psycopg import (
    AsyncClientCursor,
    AsyncConnection,
    DataError,
    OperationalError,
    ProgrammingError,
    sql,
)
from psycopg import Error as PsycopgError
from psycopg.pq import TransactionStatus
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from agboss.errors import (
    StoreBusyError,
    StoreError,
    StoreOutcomeUnknownError,
    StoreSchemaError,
    StoreUnavailableError,
    StoreValueError,
)
from agboss.store.postgres._prepared import PreparedStatements
from agboss.store.postgres._signals import PostgresSignals, channel_of
from agboss.store.protocol import Fence, Signal, lease_lost
from agboss.store.sql import PLAIN, POSTGRES, Dialect, Later, Returns, Shape, Sql, Work

__all__ = ["PostgresDriver"]

T = TypeVar("T")

_FENCE = "SELECT agboss_fence(?, ?, ?)"

_MIGRATION_LOCK = 4242424242
"""The advisory lock key that serializes migrations of one database."""


@dataclass(slots=True)
class _Session:
    connection: AsyncConnection[Any]
    lock: asyncio.Lock


def _mapped(error: BaseException, fence: Fence | None) -> BaseException:
    """A driver's error as the store's."""
    if isinstance(error, UnicodeError):
        return StoreValueError(f"the PostgreSQL store cannot keep a value it was given: {error}")
    if isinstance(error, PoolTimeout):
        return StoreBusyError(
            f"no connection to the PostgreSQL store came free in time: {error}",
            hint="raise max_connections, or look for passes that hold connections long",
        )
    if not isinstance(error, PsycopgError):
        return error
    state = error.sqlstate or ""
    text = str(error).strip()
    if state == "AB001" and fence is not None:
        return lease_lost(fence)
    if state in ("55P03", "57014", "40001", "40P01"):
        return StoreBusyError(f"the PostgreSQL store was busy past its wait: {text}")
    # 42883: no operator for the types given (an id that is not text), not a missing function.
    if (
        state.startswith(("22", "54"))
        or state == "42883"
        or (isinstance(error, DataError | ProgrammingError) and not state)
    ):
        return StoreValueError(f"the PostgreSQL store cannot keep a value it was given: {text}")
    if state in ("42P01", "42703"):
        return StoreSchemaError(
            f"the PostgreSQL store is not an agboss store of this version: {text}",
            hint="open it with App.create (which migrates it), or run `agboss migrate`",
        )
    if not state or state.startswith(("08", "57", "53")):
        return StoreUnavailableError(f"the PostgreSQL store cannot be reached: {text}")
    return StoreError(f"the PostgreSQL store refused a statement: {text}")


@contextlib.contextmanager
def _delivering_cancellation() -> Iterator[None]:
    """Raises `asyncio.CancelledError` after a call during which the task was cancelled:
    psycopg, cancelling the query on the server, may return its result (or raise its
    QueryCanceled) instead, and a caller told to stop (a lease's keeper) would go on."""
    task = asyncio.current_task()
    before = 0 if task is None else task.cancelling()
    try:
        yield
    except Exception as error:
        if task is not None and task.cancelling() > before:
            raise asyncio.CancelledError() from error
        raise
    if task is not None and task.cancelling() > before:
        raise asyncio.CancelledError()


class PostgresDriver:
    """A connection pool to one database, in one schema (the connection's default if none).

    Args:
        url: ``postgresql://user:password@host:port/database``.
        schema: The schema agboss's tables live in.
        max_size: The pool's size.
        open_timeout: How long opening waits for the server.
        lock_timeout: How long a statement waits for a row or table lock.
        statement_timeout: How long a statement may run.
        prepared_statements: Whether statements sent often are prepared on each connection
            (`agboss.store.postgres._prepared`).
    """

    def __init__(
        self,
        url: str,
        *,
        schema: str | None,
        max_size: int,
        open_timeout: timedelta,
        lock_timeout: timedelta,
        statement_timeout: timedelta,
        prepared_statements: bool = True,
    ) -> None:
        self.url = url
        self._prepared = PreparedStatements(enabled=prepared_statements)
        self.schema = schema
        self._max_size = max_size
        self._open_timeout = open_timeout.total_seconds()
        self._options = (
            f"-c lock_timeout={int(lock_timeout.total_seconds() * 1000)} "
            f"-c statement_timeout={int(statement_timeout.total_seconds() * 1000)}"
        )
        if schema is not None:
            self._options += f" -c search_path={schema}"
        self._pool: AsyncConnectionPool[AsyncConnection[Any]] | None = None
        self._signals = PostgresSignals(
            url, channel_of(schema), connect_timeout=open_timeout.total_seconds()
        )
        self._session: ContextVar[_Session | None] = ContextVar("agboss_pg_session", default=None)

    @property
    def dialect(self) -> Dialect:
        return POSTGRES

    @property
    def signals(self) -> PostgresSignals:
        return self._signals

    def announcing(self, signals: Sequence[Signal]) -> Sql:
        return self._signals.announcing(signals)

    def announced(self, signals: Sequence[Signal]) -> None:
        pass  # sent with the commit (`announcing`)

    @property
    def prepared_statements(self) -> bool:
        """Whether statements sent often are prepared on each connection."""
        return self._prepared.enabled

    @property
    def pool(self) -> AsyncConnectionPool[AsyncConnection[Any]]:
        """The open pool."""
        if self._pool is None:
            raise StoreError(
                "the PostgreSQL store is not open",
                hint="use the store through App.create, which opens it, and before app.close()",
            )
        return self._pool

    async def open(self) -> None:
        if self._pool is not None:
            return
        # One connection first: a server that answers with a refusal (no such database, a
        # wrong password) is reported at once, in its own words, not after the pool's wait.
        refused = await self._first_connection()
        pool: AsyncConnectionPool[AsyncConnection[Any]] = AsyncConnectionPool(
            self.url,
            min_size=1,
            max_size=self._max_size,
            kwargs={
                "autocommit": True,
                "options": self._options,
                # psycopg's own (its reads'): off with ours, behind a pooler in transaction mode.
                "prepare_threshold": 5 if self._prepared.enabled else None,
            },
            check=_checked,
            open=False,
        )
        try:
            await pool.open(wait=True, timeout=self._open_timeout)
        except (PsycopgError, OSError, TimeoutError, PoolTimeout) as error:
            await pool.close()
            reason = f"{error}" if refused is None else f"{error}; the last attempt: {refused}"
            raise StoreUnavailableError(
                f"the PostgreSQL store cannot be opened: {reason}",
                hint="check the URL (postgresql://user:password@host:port/database) and that "
                "the server is up",
            ) from error
        self._pool = pool

    async def _first_connection(self) -> str | None:
        """Connects once; raises what the server refused, else the reason it could not be
        reached (``None`` when it was): the pool then waits for it, as for a server that starts."""
        try:
            connection = await AsyncConnection.connect(
                self.url, autocommit=True, connect_timeout=max(1, int(self._open_timeout))
            )
        except PsycopgError as error:
            said = str(error).strip()
            if "FATAL" in said:  # the server answered, and refused: waiting changes nothing
                raise StoreUnavailableError(
                    f"the PostgreSQL server refused the store: {_server_reason(said)}",
                    hint="check the database name, the user and the password in the URL "
                    "(postgresql://user:password@host:port/database)",
                ) from error
            return said.splitlines()[0] if said else type(error).__name__
        except OSError as error:
            return str(error)
        await connection.close()
        return None

    async def close(self) -> None:
        await self._signals.close()
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()

    @asynccontextmanager
    async def migration_guard(self) -> AsyncIterator[None]:
        # A session-level advisory lock, taken before the migration's transaction begins: a
        # transaction that began before the lock was granted would read the catalog as it was
        # (a table another instance just made would not be seen).
        async with self.session():
            try:
                async with self._connection() as connection:
                    await connection.execute("SELECT pg_advisory_lock(%s)", (_MIGRATION_LOCK,))
                    if self.schema is not None:
                        await connection.execute(
                            sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(
                                sql.Identifier(self.schema)
                            )
                        )
            except (PsycopgError, UnicodeError) as error:
                raise _mapped(error, None) from error
            try:
                yield
            finally:
                async with self._connection() as connection:
                    await connection.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATION_LOCK,))

    @asynccontextmanager
    async def session(self) -> AsyncIterator[None]:
        if self._session.get() is not None:
            yield
            return
        try:
            checkout = self.pool.connection()
            connection = await checkout.__aenter__()
        except (PsycopgError, PoolTimeout) as error:
            raise _mapped(error, None) from error
        token = self._session.set(_Session(connection, asyncio.Lock()))
        try:
            yield
        finally:
            self._session.reset(token)
            await checkout.__aexit__(None, None, None)

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[AsyncConnection[Any]]:
        bound = self._session.get()
        if bound is not None:
            async with bound.lock:
                yield bound.connection
            return
        async with self.pool.connection() as connection:
            yield connection

    async def read(self, statement: Sql) -> Any:
        with _delivering_cancellation():
            return await self._read(statement)

    async def _read(self, statement: Sql) -> Any:
        try:
            async with self._connection() as connection:
                cursor = await connection.execute(POSTGRES.render(statement.text), statement.params)
                if statement.returns is Returns.ONE:
                    return await cursor.fetchone()
                if statement.returns is Returns.ALL:
                    return await cursor.fetchall()
                return None
        except (PsycopgError, UnicodeError, PoolTimeout) as error:
            raise _mapped(error, None) from error

    async def transact(
        self, work: Work[T], *, fence: Fence | None = None, shape: Shape = PLAIN
    ) -> T:
        with _delivering_cancellation():
            return await self._transact(work, fence, shape)

    async def _transact(self, work: Work[T], fence: Fence | None, shape: Shape) -> T:
        try:
            async with self._connection() as connection:
                if shape.single and fence is None:
                    return await _drive(connection, work)  # one statement: its own transaction
                try:
                    return await _batched(
                        connection, work, fence, durable=shape.durable, prepared=self._prepared
                    )
                except PsycopgError as error:
                    if error.sqlstate != "26000" or not self._prepared.enabled:
                        raise
                    # A statement prepared on this connection is gone (a pooler that hands
                    # sessions around): nothing was written; again, with values inline.
                    self._prepared.turn_off()
                    return await _batched(
                        connection, work, fence, durable=shape.durable, prepared=self._prepared
                    )
        except _CommitLost as lost:
            raise StoreOutcomeUnknownError(
                f"the connection to the PostgreSQL store was lost while it committed: "
                f"{str(lost.__cause__).strip()}"
            ) from lost.__cause__
        except (PsycopgError, UnicodeError, PoolTimeout) as error:
            raise _mapped(error, fence) from error


async def _batched(
    connection: AsyncConnection[Any],
    work: Work[T],
    fence: Fence | None,
    *,
    durable: bool,
    prepared: PreparedStatements,
) -> T:
    """Runs a unit of work as one transaction in as few round trips as it allows.

    Statements whose rows the work does not read are held back and sent with the next one it
    does read (or with ``COMMIT``), as one simple-protocol query: ``BEGIN``, the fence and a
    pass's writes usually reach the server together. Their values are bound by psycopg's
    client-side binding (`psycopg.AsyncClientCursor.mogrify`), which quotes them as literals;
    a statement sent often goes as ``EXECUTE`` of it prepared on the connection.
    """
    binder = AsyncClientCursor(connection)
    held = ["BEGIN"]
    if not durable:  # its loss costs nothing: the commit need not wait for the disk
        held.append("SET LOCAL synchronous_commit = off")
    if fence is not None:
        held.append(await prepared.text(connection, binder, _fenced(fence)))
    waiting: dict[int, tuple[Later, bool]] = {}  # a held statement's place → where its rows go
    steps = work()
    begun = False
    try:
        statement = next(steps)
        while True:
            held.append(await prepared.text(connection, binder, statement))
            returns = statement.returns
            if returns is Returns.NOTHING or returns.later:
                later = None
                if returns.later:
                    later = Later()
                    waiting[len(held) - 1] = (later, returns.one)
                statement = steps.send(later)
                continue
            cursor = await connection.execute("; ".join(held))
            begun = True
            await _fill(cursor, waiting, len(held))
            held, waiting = [], {}
            rows: Any = await cursor.fetchone() if returns.one else await cursor.fetchall()
            statement = steps.send(rows)
    except StopIteration as done:
        result: T = done.value
    except BaseException:
        if begun or connection.info.transaction_status != TransactionStatus.IDLE:
            await _rollback(connection, prepared)
        raise
    try:
        held.append("COMMIT")
        cursor = await connection.execute("; ".join(held))
        await _fill(cursor, waiting, len(held) - 1)
    except BaseException as error:
        await _rollback(connection, prepared)
        if isinstance(error, OperationalError) and connection.broken:
            # The connection went while COMMIT was on its way or its answer was: the server
            # may have committed. Said as such, never as "nothing was written".
            raise _CommitLost() from error
        raise
    return result


def _fenced(fence: Fence) -> Sql:
    """The fence's check, a statement like the work's (prepared once sent often)."""
    return Sql(_FENCE, (fence.root_execution_id, fence.holder, fence.epoch))


class _CommitLost(Exception):
    """The connection was lost while a transaction committed (its cause says how)."""


async def _fill(cursor: Any, waiting: dict[int, tuple[Later, bool]], last: int) -> None:
    """Hands the held statements' rows to their `Later`s, and leaves the cursor on the result
    of statement ``last`` (one result per statement of a simple-protocol query)."""
    for place in range(last):
        if place in waiting:
            later, one = waiting[place]
            later.rows = await cursor.fetchone() if one else await cursor.fetchall()
        cursor.nextset()


async def _rollback(connection: AsyncConnection[Any], prepared: PreparedStatements) -> None:
    """Ends a failed transaction, if the connection still has one (a broken one has none).

    psycopg answers a rollback by deallocating every statement it prepared itself, with one
    ``DEALLOCATE ALL`` that takes this store's statements too. Its own `rollback` sends that at
    once (a ``ROLLBACK`` sent as a query would leave it to a later, unknown moment), and the
    statements are prepared again on their next use.
    """
    if connection.closed or connection.info.transaction_status == TransactionStatus.IDLE:
        return
    with contextlib.suppress(PsycopgError):  # broken: the pool discards it, the server rolled back
        await connection.rollback()
    prepared.forget(connection)


async def _drive(connection: AsyncConnection[Any], work: Work[T]) -> T:
    """Runs a unit of work's statements on a connection, handing each its rows."""
    steps = work()
    try:
        statement = next(steps)
        while True:
            cursor = await connection.execute(POSTGRES.render(statement.text), statement.params)
            returns = statement.returns
            rows: Any = None
            if returns is not Returns.NOTHING:
                rows = await cursor.fetchone() if returns.one else await cursor.fetchall()
            if returns.later:
                later = Later()
                later.rows = rows
                rows = later
            statement = steps.send(rows)
    except StopIteration as done:
        result: T = done.value
        return result


async def _checked(connection: AsyncConnection[Any]) -> None:
    """Checks a connection as the pool hands it out: one the server ended (a restart, a
    crash, an administrator's terminate) is discarded and another handed out, so that the
    first request after the server is back never fails on it.

    An idle connection has nothing to read; one whose server ended it has (the server's
    farewell, or the end of the stream): only then is it asked, with a round trip, whether it
    still works — the pass's round trips cost nothing more.

    Raises:
        PsycopgError: It does not work (the pool discards it).
    """
    try:
        readable, _, _ = select.select([connection.fileno()], [], [], 0)
    except (OSError, ValueError):  # its socket is gone already
        readable = [True]
    if readable:
        await AsyncConnectionPool.check_connection(connection)


def _server_reason(said: str) -> str:
    """The server's own sentence from a connection error (after ``FATAL:``)."""
    _, _, reason = said.partition("FATAL:")
    return " ".join((reason or said).split())
