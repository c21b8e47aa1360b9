"""What App.create(store=...) accepts."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest

from agboss import StoreError, StoreUnavailableError
from agboss.store import DEFAULT_SQLITE_PATH, SqliteStore, store_from
from agboss.store.postgres import PostgresStore
from tests.stores import POSTGRES_URL, needs_postgres


def test_no_store_is_the_default_sqlite_file() -> None:
    store = store_from(None)
    assert isinstance(store, SqliteStore)
    assert store.path == DEFAULT_SQLITE_PATH


def test_sqlite_urls_name_relative_and_absolute_files() -> None:
    relative = store_from("sqlite:///data/app.db")
    absolute = store_from("sqlite:////var/lib/app.db")
    assert isinstance(relative, SqliteStore)
    assert isinstance(absolute, SqliteStore)
    assert relative.path == Path("data/app.db")
    assert absolute.path == Path("/var/lib/app.db")


async def test_a_relative_sqlite_path_with_dot_dot_makes_no_folder_it_leaves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = store_from("sqlite:///relative/../app.db")
    assert isinstance(store, SqliteStore)
    await store.open()
    await store.close()
    assert (tmp_path / "app.db").exists()
    assert not (tmp_path / "relative").exists()


def test_a_postgresql_url_may_name_a_schema_of_its_own() -> None:
    store = store_from("postgresql://u:p@db.internal:5432/shop?schema=agboss&sslmode=require")
    assert isinstance(store, PostgresStore)
    assert store.schema == "agboss"
    assert store.driver.url == "postgresql://u:p@db.internal:5432/shop?sslmode=require"
    assert store.prepared_statements


def test_a_postgresql_url_may_turn_prepared_statements_off() -> None:
    store = store_from("postgresql://u:p@h/shop?prepared_statements=false&schema=a")
    assert isinstance(store, PostgresStore)
    assert not store.prepared_statements
    assert store.schema == "a"
    assert store.driver.url == "postgresql://u:p@h/shop"
    with pytest.raises(StoreError, match="neither true nor false"):
        store_from("postgresql://u:p@h/shop?prepared_statements=maybe")


def test_an_unknown_scheme_is_a_store_error() -> None:
    with pytest.raises(StoreError, match="not a store URL agboss knows"):
        store_from("mongodb://somewhere")


async def test_an_unreachable_postgresql_server_is_a_store_error() -> None:
    store = PostgresStore(
        "postgresql://nobody:x@127.0.0.1:1/none", open_timeout=timedelta(milliseconds=300)
    )
    with pytest.raises(StoreError, match="cannot be opened"):
        await store.open()


@needs_postgres
async def test_a_database_the_server_does_not_have_is_refused_at_once_in_its_words() -> None:
    assert POSTGRES_URL is not None
    server, _, _ = POSTGRES_URL.rpartition("/")
    store = PostgresStore(f"{server}/no_such_database_{uuid.uuid4().hex[:8]}")
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError, match=r'database "no_such_database_\w+" does not'):
        await store.open()
    assert time.monotonic() - started < 5  # not the pool's wait of 10 s
