"""The PostgreSQL store: several instances on one database (the ``postgres`` extra)."""

from agboss.store.postgres._store import PostgresStore

__all__ = ["PostgresStore"]
