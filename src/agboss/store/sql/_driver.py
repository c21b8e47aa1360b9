"""What a SQL store needs from a database driver: reads, transactions of work, sessions.

A unit of work is a generator: it yields statements (`Sql`) and receives each one's rows (one
row, all rows, or ``None``), and returns its result. A driver runs it inside one transaction —
on SQLite in the store's own thread, on PostgreSQL pipelined on one connection — so the same
work runs on every database, and a transaction never waits on anything but the database.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from agboss.store.protocol import Fence, Signal, Signals
from agboss.store.sql._dialect import Dialect, Sql

__all__ = ["PLAIN", "Driver", "Shape", "Work"]

T = TypeVar("T")

Work = Callable[[], Generator[Sql, Any, T]]
"""A unit of work: statements out, rows in, a result at the end."""


@dataclass(frozen=True, slots=True)
class Shape:
    """What a driver knows of a unit of work before it runs it.

    Attributes:
        single: It is one statement (with no fence): it may run without ``BEGIN``/``COMMIT``.
        durable: ``False`` for work whose loss in a crash of the database server costs nothing
            (a lease's renewal or release, an execution's beginning: see
            ``agboss.store.sql._ops``); the commit need not wait for the disk.
    """

    single: bool = False
    durable: bool = True


PLAIN = Shape()
"""A unit of work of several statements, durable."""


class Driver(Protocol):
    """Runs statements on one database.

    Every error of the database or its driver comes out as a `StoreError` (the driver's error
    as its ``__cause__``); a fence that no longer holds comes out as `LeaseLostError`.
    """

    @property
    def dialect(self) -> Dialect:
        """How statements are spelled for this database."""
        ...

    async def read(self, statement: Sql) -> Any:
        """Runs one reading statement on its own (rows as its ``returns`` says)."""
        ...

    async def transact(
        self, work: Work[T], *, fence: Fence | None = None, shape: Shape = PLAIN
    ) -> T:
        """Runs a unit of work as one transaction, after checking ``fence``.

        Args:
            work: The unit of work.
            fence: The lease the transaction must still hold (checked, and held, first).
            shape: What is known of the work beforehand.
        """
        ...

    @property
    def signals(self) -> Signals:
        """What the store's commits announce, to the instances that listen."""
        ...

    def announcing(self, signals: Sequence[Signal]) -> Sql | None:
        """The statement that sends ``signals`` with a transaction's commit (``None``: they
        are handed to `announced` once it committed)."""
        ...

    def announced(self, signals: Sequence[Signal]) -> None:
        """Hands ``signals`` on, their transaction committed (a no-op where `announcing` sent
        them with the commit)."""
        ...

    def session(self) -> AbstractAsyncContextManager[None]:
        """Binds the statements run inside it to one connection, where there are several."""
        ...

    def migration_guard(self) -> AbstractAsyncContextManager[None]:
        """Makes migrations of instances starting together run one after the other (and
        prepares what a migration's transaction needs, such as its schema)."""
        ...

    async def open(self) -> None:
        """Connects."""
        ...

    async def close(self) -> None:
        """Disconnects."""
        ...
