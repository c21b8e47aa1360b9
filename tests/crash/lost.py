"""A commit lost as a power loss or a database server's crash loses it: the store put back as
it was before, after the process that made it (and whatever it did next) was killed.

A commit that does not wait for the disk (`Write.durable` is ``False`` for all its writes) can
be lost with every commit after it up to the next durable one, whose flush would have made it
durable too (a database writes its log in order). The worker (`tests.crash.worker`, plan
``lose:K``) copies the store before its K-th write (`keep`), makes it, goes on, and dies just
before its next durable write; the harness then puts the copy back (`put_back`) and recovers.

SQLite: the file copied with SQLite's backup, and put back with its log gone. PostgreSQL: the
test's schema's tables copied into a schema beside it, and put back in one transaction (the
sequences stay ahead, as after a server's crash).
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import psycopg
from psycopg import sql

__all__ = ["keep", "put_back", "schema_of", "sqlite_path"]


def sqlite_path(url: str) -> Path | None:
    return Path(url.removeprefix("sqlite:///")) if url.startswith("sqlite:///") else None


def schema_of(url: str) -> tuple[str, str]:
    """A PostgreSQL test URL's server (without the query) and schema."""
    parts = urlsplit(url)
    [schema] = parse_qs(parts.query)["schema"]
    return parts._replace(query="").geturl(), schema


def _tables(connection: psycopg.Connection[tuple[str]], schema: str) -> list[str]:
    found = connection.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = %s ORDER BY tablename", (schema,)
    ).fetchall()
    return [name for (name,) in found]


def keep(url: str) -> None:
    """Copies the store at ``url`` aside, as it is now (every commit so far)."""
    path = sqlite_path(url)
    if path is not None:
        with sqlite3.connect(path) as source, sqlite3.connect(_copy(path)) as copy:
            source.backup(copy)
        return
    server, schema = schema_of(url)
    with psycopg.connect(server, autocommit=True) as connection, connection.transaction():
        aside = schema + "_kept"
        connection.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(aside)))
        for table in _tables(connection, schema):
            connection.execute(
                sql.SQL("CREATE TABLE {} AS TABLE {}").format(
                    sql.Identifier(aside, table), sql.Identifier(schema, table)
                )
            )


def put_back(url: str) -> None:
    """Puts the store at ``url`` back as `keep` copied it: what came after is lost."""
    path = sqlite_path(url)
    if path is not None:
        for log in (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            log.unlink(missing_ok=True)
        shutil.copyfile(_copy(path), path)
        return
    server, schema = schema_of(url)
    aside = schema + "_kept"
    with psycopg.connect(server, autocommit=True) as connection, connection.transaction():
        tables = _tables(connection, schema)
        connection.execute(
            sql.SQL("TRUNCATE {}").format(
                sql.SQL(", ").join(sql.Identifier(schema, table) for table in tables)
            )
        )
        for table in tables:
            connection.execute(
                sql.SQL("INSERT INTO {} SELECT * FROM {}").format(
                    sql.Identifier(schema, table), sql.Identifier(aside, table)
                )
            )
        connection.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(aside)))


def _copy(path: Path) -> Path:
    return path.with_name(path.name + ".kept")
