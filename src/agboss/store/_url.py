"""Opening a store from what `App.create` is given: a URL, a store object, or nothing."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from agboss.errors import StoreError
from agboss.store.protocol import Store
from agboss.store.sqlite import SqliteStore

__all__ = ["DEFAULT_SQLITE_PATH", "store_from"]

DEFAULT_SQLITE_PATH = Path(".agboss") / "agboss.db"


def store_from(store: str | Path | Store | None) -> Store:
    """The store for ``App.create(store=...)``.

    Args:
        store: ``None`` for the default SQLite file under ``.agboss/``, a URL
            (``sqlite:///relative/file.db`` or ``sqlite:////absolute/file.db`` — three
            slashes then a path, as in SQLAlchemy — or ``postgresql://user:password@host/db``,
            with ``?schema=name`` to keep agboss's tables in a schema of their own and
            ``?prepared_statements=false`` behind a pooler in transaction mode), a SQLite
            file's path, or a store object.

    Raises:
        StoreError: The URL's scheme is not one agboss knows.
    """
    if store is None:
        return SqliteStore(DEFAULT_SQLITE_PATH)
    if isinstance(store, Path):
        return SqliteStore(store)
    if not isinstance(store, str):
        if not all(callable(getattr(store, name, None)) for name in ("open", "write", "close")):
            raise StoreError(
                f"store={store!r} is neither a store URL nor a store object",
                hint="pass 'sqlite:///relative.db', 'postgresql://…', a Path, or a Store",
            )
        return store
    scheme, separator, rest = store.partition("://")
    if separator and scheme == "sqlite":
        # sqlite:///relative.db and sqlite:////absolute.db, as SQLAlchemy reads them.
        return SqliteStore(Path(rest[1:] if rest.startswith("/") else rest))
    if separator and scheme in ("postgresql", "postgres"):
        try:
            from agboss.store.postgres import PostgresStore
        except ImportError as error:
            raise StoreError(
                "the PostgreSQL store needs psycopg, which is not installed",
                hint="pip install 'agboss[postgres]'",
            ) from error
        url, options = _options_of(store)
        return PostgresStore(
            url,
            options.get("schema"),
            prepared_statements=_flag(options.get("prepared_statements", "true"), store),
        )
    raise StoreError(
        f"{store!r} is not a store URL agboss knows",
        hint="pass 'sqlite:///relative.db', 'sqlite:////absolute/path.db', "
        "'postgresql://…', or a store object",
    )


_OURS = ("schema", "prepared_statements")


def _options_of(url: str) -> tuple[str, dict[str, str]]:
    """A PostgreSQL URL without agboss's own query parameters (``schema=``,
    ``prepared_statements=``), and those."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    ours = {key: value for key, value in query if key in _OURS}
    rest = urlencode([(key, value) for key, value in query if key not in _OURS])
    return urlunsplit(parts._replace(query=rest)), ours


def _flag(value: str, url: str) -> bool:
    lowered = value.lower()
    if lowered in ("true", "on", "1", "yes"):
        return True
    if lowered in ("false", "off", "0", "no"):
        return False
    raise StoreError(
        f"prepared_statements={value!r} in the store URL is neither true nor false",
        hint="write ?prepared_statements=false (behind a pooler in transaction mode) or leave "
        "it out",
    )
