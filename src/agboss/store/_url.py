"""Opening a store from what `App.create` is given: a URL, a store object, or nothing."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from agboss.errors import StoreError
from agboss.store.protocol import Store
from agboss.store.sqlite import Durability, SqliteStore

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
        path, _, query = rest.partition("?")
        return SqliteStore(
            Path(path[1:] if path.startswith("/") else path),
            durability=_durability(dict(parse_qsl(query, keep_blank_values=True)), store),
        )
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


def _durability(options: dict[str, str], url: str) -> Durability:
    """A SQLite URL's ``?durability=`` (``power-loss``, the default, or ``process-crash``)."""
    unknown = sorted(set(options) - {"durability"})
    if unknown:
        raise StoreError(
            f"{url!r} has options a SQLite store does not take: {', '.join(unknown)}",
            hint="a SQLite URL takes ?durability=power-loss or ?durability=process-crash",
        )
    given = options.get("durability", Durability.POWER_LOSS.value)
    try:
        return Durability(given)
    except ValueError:
        raise StoreError(
            f"durability={given!r} in {url!r} is not a durability a SQLite store knows",
            hint="give ?durability=power-loss (the default) or ?durability=process-crash",
        ) from None


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
