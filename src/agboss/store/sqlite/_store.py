"""`SqliteStore`: the embedded default store, one SQLite file in WAL mode."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from agboss.store.sql import SqlExecutionRecordRepository, SqlPausedExecutionRepository, SqlStore
from agboss.store.sqlite._driver import Durability, SqliteDriver

__all__ = [
    "Durability",
    "SqliteExecutionRecordRepository",
    "SqlitePausedExecutionRepository",
    "SqliteStore",
]

SqlitePausedExecutionRepository = SqlPausedExecutionRepository
"""The pauses of a SQLite store (the SQL stores' one implementation)."""

SqliteExecutionRecordRepository = SqlExecutionRecordRepository
"""The audit trail of a SQLite store (the SQL stores' one implementation)."""


class SqliteStore(SqlStore):
    """A store in one SQLite file; several `App` instances (and processes) may share it.

    Args:
        path: The database file; its folder is created when missing.
        busy_timeout: How long a write waits while another process writes, before it fails
            with `StoreBusyError` (the event loop never waits: writes run on the store's own
            thread).
        durability: What its commits survive: `Durability.POWER_LOSS` (the default: the
            commits that acknowledge something wait for the disk) or
            `Durability.PROCESS_CRASH` (none waits: faster, and a power loss may roll back
            the last commits).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        busy_timeout: timedelta = timedelta(seconds=5),
        durability: Durability = Durability.POWER_LOSS,
    ) -> None:
        self._sqlite = SqliteDriver(Path(path), busy_timeout=busy_timeout, durability=durability)
        super().__init__(self._sqlite)

    @property
    def path(self) -> Path:
        """The database file."""
        return self._sqlite.path

    @property
    def durability(self) -> Durability:
        """What its commits survive."""
        return self._sqlite.durability

    def __repr__(self) -> str:
        return f"SqliteStore({str(self.path)!r})"
