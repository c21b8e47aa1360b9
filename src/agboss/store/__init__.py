"""The durable store: repository protocols and their implementations (one module per dialect)."""

from agboss.store.protocol import (
    ExecutionRecordRepository,
    ExecutionRepository,
    ExecutionRow,
    Fence,
    LeaseRepository,
    PausedExecutionRepository,
    StepEntry,
    StepJournalRepository,
    Store,
    ThreadRow,
)
from agboss.store.sqlite import (
    SqliteExecutionRecordRepository,
    SqlitePausedExecutionRepository,
    SqliteStore,
)
from agboss.store.url import DEFAULT_SQLITE_PATH, store_from

__all__ = [
    "DEFAULT_SQLITE_PATH",
    "ExecutionRecordRepository",
    "ExecutionRepository",
    "ExecutionRow",
    "Fence",
    "LeaseRepository",
    "PausedExecutionRepository",
    "SqliteExecutionRecordRepository",
    "SqlitePausedExecutionRepository",
    "SqliteStore",
    "StepEntry",
    "StepJournalRepository",
    "Store",
    "ThreadRow",
    "store_from",
]
