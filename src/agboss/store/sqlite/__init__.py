"""The SQLite store: the embedded default."""

from agboss.store.sqlite.store import SqliteStore

__all__ = ["SqliteStore"]
