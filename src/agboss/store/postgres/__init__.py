"""The PostgreSQL store: several instances on one database (the ``postgres`` extra)."""

from agboss.store.postgres.store import PostgresStore

__all__ = ["PostgresStore"]
