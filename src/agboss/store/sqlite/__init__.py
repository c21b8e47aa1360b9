"""The SQLite store: one file, writes on a thread of their own."""

from agboss.store.sqlite._store import (
    Durability,
    SqliteExecutionRecordRepository,
    SqlitePausedExecutionRepository,
    SqliteStore,
)

__all__ = [
    "Durability",
    "SqliteExecutionRecordRepository",
    "SqlitePausedExecutionRepository",
    "SqliteStore",
]
