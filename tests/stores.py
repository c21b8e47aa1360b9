"""The stores tests run against: SQLite always, PostgreSQL when a server is configured.

``AGBOSS_TEST_POSTGRES_URL`` names a database the tests may create schemas in (``.ci/run``
starts a local server and sets it). Each test gets a schema of its own, dropped after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from agboss.store import SqliteStore, Store
from agboss.testing import TestEnv, test_with

POSTGRES_URL = os.environ.get("AGBOSS_TEST_POSTGRES_URL")

NO_POSTGRES = "AGBOSS_TEST_POSTGRES_URL is not set (.ci/run sets it)"
"""The one reason a PostgreSQL test is skipped: the suite's last line counts the skips by it."""

needs_postgres = pytest.mark.skipif(POSTGRES_URL is None, reason=NO_POSTGRES)
"""The mark of every test that needs the PostgreSQL server."""

STORE_KINDS = ["sqlite", pytest.param("postgres", marks=needs_postgres)]


@asynccontextmanager
async def store_url(kind: str, folder: Path) -> AsyncIterator[str]:
    """A store URL of a kind, for `test_with(store=...)` (each instance opens its own)."""
    if kind == "sqlite":
        yield f"sqlite:///{folder / 'agboss.db'}"
        return
    assert POSTGRES_URL is not None
    schema = f"test_{uuid.uuid4().hex[:12]}"
    try:
        yield f"{POSTGRES_URL}?schema={schema}"
    finally:
        await drop_schema(schema)


@contextmanager
def command_url(kind: str, folder: Path) -> Iterator[str]:
    """A store URL of a kind for commands that open it themselves, each in its own event loop
    (the command line): outside any test's loop, its schema dropped after."""
    if kind == "sqlite":
        yield f"sqlite:///{folder / 'agboss.db'}"
        return
    schema = f"test_{uuid.uuid4().hex[:12]}"
    try:
        yield f"{POSTGRES_URL}?schema={schema}"
    finally:
        asyncio.run(drop_schema(schema))


@asynccontextmanager
async def env_on(
    kind: str, folder: Path, application: type[Any], **options: Any
) -> AsyncIterator[TestEnv]:
    """A test application (`test_with`) on a fresh store of a kind."""
    async with store_url(kind, folder) as url, test_with(application, store=url, **options) as env:
        yield env


async def drop_schema(schema: str) -> None:
    from psycopg import AsyncConnection, sql

    assert POSTGRES_URL is not None
    async with await AsyncConnection.connect(POSTGRES_URL, autocommit=True) as connection:
        await connection.execute(
            sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
        )


@asynccontextmanager
async def made_store(kind: str, folder: Path) -> AsyncIterator[Store]:
    """A fresh, not yet opened store of a kind; a PostgreSQL schema is dropped after."""
    if kind == "sqlite":
        yield SqliteStore(folder / "agboss.db")
        return
    from agboss.store.postgres import PostgresStore

    assert POSTGRES_URL is not None
    schema = f"test_{uuid.uuid4().hex[:12]}"
    try:
        yield PostgresStore(POSTGRES_URL, schema, max_connections=4)
    finally:
        await drop_schema(schema)


async def edit_rows(url: str, statement: str, *params: Any) -> int:
    """Runs one statement (``?`` placeholders) on the store at ``url`` behind agboss's back,
    as a database user could: how many rows it changed."""
    if url.startswith("sqlite:///"):
        path = url.removeprefix("sqlite:///")
        with contextlib.closing(sqlite3.connect(path)) as connection, connection:
            return connection.execute(statement, params).rowcount
    from psycopg import AsyncConnection, sql

    base, _, schema = url.partition("?schema=")
    async with await AsyncConnection.connect(base, autocommit=True) as connection:
        await connection.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        cursor = await connection.execute(statement.replace("?", "%s"), params)
        return cursor.rowcount
