"""The SQLite store: the embedded default."""

from agboss.store.sqlite.pauses import (
    SqliteExecutionRecordRepository,
    SqlitePausedExecutionRepository,
)
from agboss.store.sqlite.store import SqliteStore

__all__ = ["SqliteExecutionRecordRepository", "SqlitePausedExecutionRepository", "SqliteStore"]
