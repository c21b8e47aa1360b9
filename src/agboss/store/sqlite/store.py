"""`SqliteStore`: the embedded default store, one SQLite file in WAL mode."""

from __future__ import annotations

from pathlib import Path

from agboss.store.sqlite.database import SqliteDatabase
from agboss.store.sqlite.pauses import (
    SqliteExecutionRecordRepository,
    SqlitePausedExecutionRepository,
)
from agboss.store.sqlite.repositories import (
    SqliteBranchRepository,
    SqliteBudgetLedgerRepository,
    SqliteExecutionRepository,
    SqliteLeaseRepository,
    SqliteStepJournalRepository,
)

__all__ = ["SqliteStore"]


class SqliteStore:
    """A store in one SQLite file; several `App` instances may share the file.

    Args:
        path: The database file; its folder is created when missing.
    """

    def __init__(self, path: str | Path) -> None:
        self._db = SqliteDatabase(Path(path))
        self._executions = SqliteExecutionRepository(self._db)
        self._journal = SqliteStepJournalRepository(self._db)
        self._leases = SqliteLeaseRepository(self._db)
        self._pauses = SqlitePausedExecutionRepository(self._db)
        self._records = SqliteExecutionRecordRepository(self._db)
        self._ledger = SqliteBudgetLedgerRepository(self._db)
        self._branches = SqliteBranchRepository(self._db)

    @property
    def path(self) -> Path:
        """The database file."""
        return self._db.path

    @property
    def database(self) -> SqliteDatabase:
        """The connection the repositories share."""
        return self._db

    @property
    def executions(self) -> SqliteExecutionRepository:
        return self._executions

    @property
    def journal(self) -> SqliteStepJournalRepository:
        return self._journal

    @property
    def leases(self) -> SqliteLeaseRepository:
        return self._leases

    @property
    def pauses(self) -> SqlitePausedExecutionRepository:
        return self._pauses

    @property
    def records(self) -> SqliteExecutionRecordRepository:
        return self._records

    @property
    def branches(self) -> SqliteBranchRepository:
        return self._branches

    @property
    def ledger(self) -> SqliteBudgetLedgerRepository:
        return self._ledger

    async def open(self) -> None:
        self._db.open()

    async def close(self) -> None:
        self._db.close()

    def __repr__(self) -> str:
        return f"SqliteStore({str(self.path)!r})"
