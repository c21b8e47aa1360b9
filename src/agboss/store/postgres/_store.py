"""`PostgresStore`: several instances, on several machines, on one PostgreSQL database."""

from __future__ import annotations

from datetime import timedelta

from agboss.store.postgres._driver import PostgresDriver
from agboss.store.sql import SqlStore

__all__ = ["PostgresStore"]


class PostgresStore(SqlStore):
    """A store in a PostgreSQL database: for several instances on several machines.

    Args:
        url: ``postgresql://user:password@host:port/database``.
        schema: The schema its tables live in (created by the first migration if missing); the
            connection's default (``public``) when ``None``.
        max_connections: The size of the connection pool of each instance (a pass holds one).
        open_timeout: How long opening may wait for the server.
        lock_timeout: How long a statement waits for a lock another transaction holds before it
            fails with `StoreBusyError`.
        statement_timeout: How long one statement may run.
        prepared_statements: Whether statements sent often are prepared on each connection
            (the server then plans each once per connection); ``False`` behind a pooler in
            transaction mode, where a prepared statement does not follow the session (agboss
            also turns them off by itself the first time one is missing).
    """

    def __init__(
        self,
        url: str,
        schema: str | None = None,
        *,
        max_connections: int = 10,
        open_timeout: timedelta = timedelta(seconds=10),
        lock_timeout: timedelta = timedelta(seconds=5),
        statement_timeout: timedelta = timedelta(seconds=30),
        prepared_statements: bool = True,
    ) -> None:
        self._postgres = PostgresDriver(
            url,
            schema=schema,
            max_size=max_connections,
            open_timeout=open_timeout,
            lock_timeout=lock_timeout,
            statement_timeout=statement_timeout,
            prepared_statements=prepared_statements,
        )
        super().__init__(self._postgres)

    @property
    def schema(self) -> str | None:
        """The schema its tables live in (``None``: the connection's default)."""
        return self._postgres.schema

    @property
    def prepared_statements(self) -> bool:
        """Whether statements sent often are prepared on each connection (turned off by itself
        when a prepared statement went missing)."""
        return self._postgres.prepared_statements

    def __repr__(self) -> str:
        schema = f", schema={self.schema!r}" if self.schema else ""
        return f"PostgresStore(<url>{schema})"
