"""The durable store: the protocol (repositories that read, `Store.write` that changes), the
writes, and the SQL stores (one implementation, a driver per database)."""

from agboss.store._url import DEFAULT_SQLITE_PATH, store_from
from agboss.store.protocol import (
    BranchRepository,
    BranchRow,
    BudgetLedgerRepository,
    ExecutionRecordRepository,
    ExecutionRepository,
    ExecutionRow,
    Fence,
    LedgerEntry,
    PausedExecutionRepository,
    StepEntry,
    StepJournalRepository,
    Store,
    ThreadRow,
    TreeNode,
)
from agboss.store.sqlite import (
    SqliteExecutionRecordRepository,
    SqlitePausedExecutionRepository,
    SqliteStore,
)

__all__ = [
    "DEFAULT_SQLITE_PATH",
    "BranchRepository",
    "BranchRow",
    "BudgetLedgerRepository",
    "ExecutionRecordRepository",
    "ExecutionRepository",
    "ExecutionRow",
    "Fence",
    "LedgerEntry",
    "PausedExecutionRepository",
    "SqliteExecutionRecordRepository",
    "SqlitePausedExecutionRepository",
    "SqliteStore",
    "StepEntry",
    "StepJournalRepository",
    "Store",
    "ThreadRow",
    "TreeNode",
    "store_from",
]
