"""The PostgreSQL store: several instances on one database (the ``postgres`` extra).

Needs the ``postgres`` extra: ``pip install 'agboss[postgres]'``.
"""

try:
    import psycopg  # noqa: F401 - only to say which extra is missing
    import psycopg_pool  # noqa: F401 - the same
except ModuleNotFoundError as missing:
    raise ModuleNotFoundError(
        "agboss.store.postgres needs the postgres extra (psycopg): pip install 'agboss[postgres]'",
        name=missing.name,
    ) from missing

from agboss.store.postgres._store import PostgresStore

__all__ = ["PostgresStore"]
