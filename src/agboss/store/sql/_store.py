"""`SqlStore`: the repositories and writes of a SQL database, over a `Driver`."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from agboss.errors import StoreSchemaError
from agboss.store.protocol import Fence, Signals
from agboss.store.sql._builds import SqlBuildRepository
from agboss.store.sql._delegations import SqlDelegationRepository
from agboss.store.sql._dialect import computed
from agboss.store.sql._driver import Driver
from agboss.store.sql._migrations import LATEST_VERSION, migration, newer_schema, schema_version
from agboss.store.sql._ops import shape_of, work_of
from agboss.store.sql._reads import (
    SqlBranchRepository,
    SqlBudgetLedgerRepository,
    SqlExecutionRecordRepository,
    SqlExecutionRepository,
    SqlPausedExecutionRepository,
    SqlStepJournalRepository,
)
from agboss.store.sql._standing import SqlStandingDecisionRepository
from agboss.store.writes import Results, Write

__all__ = ["SqlStore"]


class SqlStore:
    """A store in a SQL database; `agboss.store.SqliteStore` and
    `agboss.store.postgres.PostgresStore` are this over their drivers."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver
        self._executions = SqlExecutionRepository(driver)
        self._journal = SqlStepJournalRepository(driver)
        self._pauses = SqlPausedExecutionRepository(driver)
        self._records = SqlExecutionRecordRepository(driver)
        self._ledger = SqlBudgetLedgerRepository(driver)
        self._branches = SqlBranchRepository(driver)
        self._standing = SqlStandingDecisionRepository(driver)
        self._delegations = SqlDelegationRepository(driver)
        self._builds = SqlBuildRepository(driver)

    @property
    def driver(self) -> Driver:
        """What runs the statements."""
        return self._driver

    @property
    def executions(self) -> SqlExecutionRepository:
        return self._executions

    @property
    def journal(self) -> SqlStepJournalRepository:
        return self._journal

    @property
    def pauses(self) -> SqlPausedExecutionRepository:
        return self._pauses

    @property
    def records(self) -> SqlExecutionRecordRepository:
        return self._records

    @property
    def branches(self) -> SqlBranchRepository:
        return self._branches

    @property
    def ledger(self) -> SqlBudgetLedgerRepository:
        return self._ledger

    @property
    def standing(self) -> SqlStandingDecisionRepository:
        return self._standing

    @property
    def delegations(self) -> SqlDelegationRepository:
        return self._delegations

    @property
    def builds(self) -> SqlBuildRepository:
        return self._builds

    async def write(self, writes: Sequence[Write[Any]], *, fence: Fence | None = None) -> Results:
        if not writes and fence is None:
            return Results((), ())
        signals = [signal for write in writes for signal in write.announces()]
        notice = self._driver.announcing(signals) if signals else None
        values: list[Any] = computed(
            await self._driver.transact(
                work_of(writes, self._driver.dialect, notice),
                fence=fence,
                shape=shape_of(writes, fence, notice),
            )
        )
        if signals and notice is None:
            self._driver.announced(signals)
        return Results(writes, values)

    @property
    def signals(self) -> Signals:
        return self._driver.signals

    def session(self) -> AbstractAsyncContextManager[None]:
        return self._driver.session()

    async def open(self, *, migrate: bool = True) -> None:
        await self._driver.open()
        try:
            version = await self.schema_version()
            if version > LATEST_VERSION:
                raise newer_schema(version)
            if version < LATEST_VERSION:
                if not migrate:
                    raise StoreSchemaError(
                        f"the store's schema is at version {version}; this agboss works with "
                        f"version {LATEST_VERSION}",
                        hint="run `agboss migrate`, or open the store with migrate=True",
                    )
                await self.migrate()
        except BaseException:
            await self._driver.close()
            raise

    async def migrate(self) -> int:
        async with self._driver.migration_guard():
            version: int = await self._driver.transact(lambda: migration(self._driver.dialect))
        return version

    async def schema_version(self) -> int:
        # The migration's own reading of the version, run as plain reads: a plain start takes
        # no lock.
        steps = schema_version(self._driver.dialect)
        rows = None
        while True:
            try:
                statement = steps.send(rows)
            except StopIteration as done:
                version: int = done.value
                return version
            rows = await self._driver.read(statement)

    async def close(self) -> None:
        await self._driver.close()
