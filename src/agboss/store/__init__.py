"""The durable store: the protocol (repositories that read, `Store.write` that changes), the
writes, and the SQL stores (one implementation, a driver per database)."""

from agboss.store._failures import (
    decode_failure,
    encode_failure,
    failure_names,
    qualified_name,
    redacted,
)
from agboss.store._rows import pending_pause
from agboss.store._times import from_micros, to_micros
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
    "decode_failure",
    "encode_failure",
    "failure_names",
    "from_micros",
    "pending_pause",
    "qualified_name",
    "redacted",
    "store_from",
    "to_micros",
]
