"""`PostgresStore`: one PostgreSQL database shared by every instance of an application."""

from __future__ import annotations

from datetime import timedelta

from agboss.store.postgres.database import PostgresDatabase
from agboss.store.postgres.pauses import (
    PostgresExecutionRecordRepository,
    PostgresPausedExecutionRepository,
)
from agboss.store.postgres.repositories import (
    PostgresBranchRepository,
    PostgresBudgetLedgerRepository,
    PostgresExecutionRepository,
    PostgresLeaseRepository,
    PostgresStepJournalRepository,
)

__all__ = ["PostgresStore"]


class PostgresStore:
    """A store in a PostgreSQL database: for several instances on several machines.

    Args:
        url: ``postgresql://user:password@host:port/database``.
        schema: The schema its tables live in (created if missing); the connection's default
            (``public``) when ``None``.
        max_connections: The size of the connection pool of each instance.
        open_timeout: How long opening may wait for the server.
    """

    def __init__(
        self,
        url: str,
        schema: str | None = None,
        *,
        max_connections: int = 10,
        open_timeout: timedelta = timedelta(seconds=10),
    ) -> None:
        self._db = PostgresDatabase(
            url,
            schema=schema,
            max_size=max_connections,
            open_timeout=open_timeout.total_seconds(),
        )
        self._executions = PostgresExecutionRepository(self._db)
        self._journal = PostgresStepJournalRepository(self._db)
        self._leases = PostgresLeaseRepository(self._db)
        self._pauses = PostgresPausedExecutionRepository(self._db)
        self._records = PostgresExecutionRecordRepository(self._db)
        self._ledger = PostgresBudgetLedgerRepository(self._db)
        self._branches = PostgresBranchRepository(self._db)

    @property
    def executions(self) -> PostgresExecutionRepository:
        return self._executions

    @property
    def journal(self) -> PostgresStepJournalRepository:
        return self._journal

    @property
    def leases(self) -> PostgresLeaseRepository:
        return self._leases

    @property
    def pauses(self) -> PostgresPausedExecutionRepository:
        return self._pauses

    @property
    def records(self) -> PostgresExecutionRecordRepository:
        return self._records

    @property
    def branches(self) -> PostgresBranchRepository:
        return self._branches

    @property
    def ledger(self) -> PostgresBudgetLedgerRepository:
        return self._ledger

    async def open(self) -> None:
        await self._db.open()

    async def close(self) -> None:
        await self._db.close()

    def __repr__(self) -> str:
        schema = f", schema={self._db.schema!r}" if self._db.schema else ""
        return f"PostgresStore(<url>{schema})"
