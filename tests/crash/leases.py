"""A holder's lease ended at once: what waiting out its time to live would do, without the wait.

A killed or stalled holder's lease stays held until it expires (the worker's is 0.6 s); the
harness used to sleep past it before every recovery. Setting its expiry to the epoch is the
same state a clock that moved on leaves (the holder and epoch kept, so a stale holder's fenced
write is refused as it would be), reached in a statement.
"""

from __future__ import annotations

import sqlite3

import psycopg
from psycopg import sql

from tests.crash.lost import schema_of, sqlite_path

__all__ = ["expire_leases"]


def expire_leases(url: str) -> None:
    """Ends every lease held in the store at ``url`` (SQLite or a test's PostgreSQL schema)."""
    path = sqlite_path(url)
    if path is not None:
        with sqlite3.connect(path, timeout=30) as connection:
            connection.execute("UPDATE leases SET expires_at = 0 WHERE holder IS NOT NULL")
        return
    server, schema = schema_of(url)
    with psycopg.connect(server, autocommit=True) as connection:
        connection.execute(
            sql.SQL("UPDATE {} SET expires_at = 0 WHERE holder IS NOT NULL").format(
                sql.Identifier(schema, "leases")
            )
        )
