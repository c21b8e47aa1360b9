"""Opening a store from what `App.create` is given: a URL, a store object, or nothing."""

from __future__ import annotations

from pathlib import Path

from agboss.errors import StoreError
from agboss.store.protocol import Store
from agboss.store.sqlite import SqliteStore

__all__ = ["DEFAULT_SQLITE_PATH", "store_from"]

DEFAULT_SQLITE_PATH = Path(".agboss") / "agboss.db"


def store_from(store: str | Path | Store | None) -> Store:
    """The store for ``App.create(store=...)``.

    Args:
        store: ``None`` for the default SQLite file under ``.agboss/``, a URL
            (``sqlite:///path/to/file.db``), a SQLite file's path, or a store object.

    Raises:
        StoreError: The URL's scheme is not one agboss knows.
    """
    if store is None:
        return SqliteStore(DEFAULT_SQLITE_PATH)
    if isinstance(store, Path):
        return SqliteStore(store)
    if not isinstance(store, str):
        return store
    scheme, separator, rest = store.partition("://")
    if separator and scheme == "sqlite":
        # sqlite:///relative.db and sqlite:////absolute.db, as SQLAlchemy reads them.
        return SqliteStore(Path(rest[1:] if rest.startswith("/") else rest))
    if separator and scheme in ("postgresql", "postgres"):
        raise StoreError(
            "the PostgreSQL store is not part of this version yet",
            hint="use the default SQLite store (store=None or 'sqlite:///path.db')",
        )
    raise StoreError(
        f"{store!r} is not a store URL agboss knows",
        hint="pass 'sqlite:///path/to/file.db', or a store object",
    )
