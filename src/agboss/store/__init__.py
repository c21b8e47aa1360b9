"""The durable store: repository protocols and their implementations (one module per dialect)."""

from agboss.store.protocol import (
    ExecutionRepository,
    ExecutionRow,
    Fence,
    LeaseRepository,
    StepEntry,
    StepJournalRepository,
    Store,
    ThreadRow,
)
from agboss.store.sqlite import SqliteStore
from agboss.store.url import DEFAULT_SQLITE_PATH, store_from

__all__ = [
    "DEFAULT_SQLITE_PATH",
    "ExecutionRepository",
    "ExecutionRow",
    "Fence",
    "LeaseRepository",
    "SqliteStore",
    "StepEntry",
    "StepJournalRepository",
    "Store",
    "ThreadRow",
    "store_from",
]
