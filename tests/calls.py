"""What a test asks of a store, counted at its driver: the reads and transactions it runs, and
the queries sent to PostgreSQL (`tests/test_round_trips.py`, `tests/test_woken_reads.py`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

__all__ = ["Calls"]


class Calls:
    """The reads and transactions a store's driver ran, and the queries sent to PostgreSQL."""

    def __init__(self) -> None:
        self.reads: list[str] = []
        """The table each read read (its last ``FROM``), in order."""
        self.statements: list[str] = []
        """Each read's statement, in order."""
        self.transactions = 0
        self.queries = 0
        self.postgres = False

    def watch(self, store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        driver = store.driver
        read, transact = driver.read, driver.transact

        async def counted_read(statement: Any) -> Any:
            self.reads.append(statement.text.split(" FROM ")[-1].split()[0])
            self.statements.append(statement.text)
            return await read(statement)

        async def counted_transact(work: Callable[[], Any], **options: Any) -> Any:
            self.transactions += 1
            return await transact(work, **options)

        monkeypatch.setattr(driver, "read", counted_read)
        monkeypatch.setattr(driver, "transact", counted_transact)
        self.postgres = type(driver).__name__ == "PostgresDriver"
        if self.postgres:
            from psycopg import AsyncConnection

            execute = AsyncConnection.execute

            async def counted_execute(connection: Any, *args: Any, **kwargs: Any) -> Any:
                self.queries += 1
                return await execute(connection, *args, **kwargs)

            monkeypatch.setattr(AsyncConnection, "execute", counted_execute)

    def clear(self) -> None:
        self.reads, self.statements, self.transactions, self.queries = [], [], 0, 0
