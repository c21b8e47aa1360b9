"""The one SQL implementation of the store, over a small dialect layer.

Statements are written once (`agboss.store.sql._reads`, `agboss.store.sql._ops`,
`agboss.store.sql._pause_ops`) with ``?``
placeholders and a ``{now}`` macro for the database's own clock; a `Dialect` renders them for
SQLite or PostgreSQL, and a `Driver` runs them (`agboss.store.sqlite`, `agboss.store.postgres`).
Schema changes are numbered migrations (`agboss.store.sql._migrations`).
"""

from agboss.store.sql._dialect import POSTGRES, SQLITE, Dialect, Later, Returns, Sql
from agboss.store.sql._driver import PLAIN, Driver, Shape, Work
from agboss.store.sql._reads import SqlExecutionRecordRepository, SqlPausedExecutionRepository
from agboss.store.sql._store import SqlStore

__all__ = [
    "PLAIN",
    "POSTGRES",
    "SQLITE",
    "Dialect",
    "Driver",
    "Later",
    "Returns",
    "Shape",
    "Sql",
    "SqlExecutionRecordRepository",
    "SqlPausedExecutionRepository",
    "SqlStore",
    "Work",
]
