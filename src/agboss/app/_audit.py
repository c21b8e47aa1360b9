"""The decision log of `App`: read page by page and exported masked, verified, and cut by
retention."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from typing import TextIO

from agboss.app._instance import Instance
from agboss.audit import (
    Anchor,
    DecisionPage,
    ExportFormat,
    LogEntry,
    Verification,
    decision_page,
    verify_decisions,
    write_export,
)
from agboss.context import DEFAULT_TENANT_ID
from agboss.engine import cut_decisions
from agboss.errors import DtoValidationError
from agboss.inputs import check_optional_id

__all__ = ["DecisionLog"]

_MAX_PAGE = 500


class DecisionLog(Instance):
    """The decision log of `App`: `decisions`, `export_decisions`, `verify_decisions`,
    `cut_decisions`."""

    async def decisions(
        self,
        *,
        tenant_id: str | None = None,
        since: datetime | None = None,
        limit: int = 100,
        after: int | None = None,
    ) -> DecisionPage:
        """A page of the tenant's decision log, in the chain's order: every decision and
        every outcome that stands for one, masked by the workflows' PII rules.

        Args:
            tenant_id: The tenant; the default tenant when ``None``.
            since: Only entries decided at or after it (timezone-aware).
            limit: The most entries on the page, 1 to 500.
            after: ``page.next`` of the page before; ``None`` for the first page.

        Raises:
            DtoValidationError: An argument is not one of the above.
        """
        tenant = self._tenant(tenant_id)
        _check_page(since, limit, after)
        outside = self._runtime.assembly.pii_outside
        store = self._runtime.store
        return await decision_page(
            store, outside, tenant, after=after or 0, since=since, limit=limit
        )

    async def export_decisions(
        self,
        out: TextIO,
        *,
        tenant_id: str | None = None,
        since: datetime | None = None,
        form: ExportFormat = ExportFormat.JSONL,
    ) -> int:
        """Writes the tenant's decision log to ``out`` for an auditor, masked as `decisions`
        shows it, as JSON lines or CSV (`agboss.audit.read_export` reads it back).

        Args:
            out: Where to write (a text file, ``sys.stdout``).
            tenant_id: The tenant; the default tenant when ``None``.
            since: Only entries decided at or after it (timezone-aware).
            form: `ExportFormat.JSONL` or `ExportFormat.CSV`.

        Returns:
            How many entries were written.

        Raises:
            DtoValidationError: An argument is not one of the above.
        """
        tenant = self._tenant(tenant_id)
        _check_page(since, 1, None)
        try:
            form = ExportFormat(form)
        except ValueError as error:
            raise DtoValidationError(
                f"form={form!r} is not a format of an export", hint="pass 'jsonl' or 'csv'"
            ) from error
        entries = [entry async for entry in self._entries(tenant, since)]
        return write_export(entries, out, form)

    async def _entries(self, tenant: str, since: datetime | None) -> AsyncIterator[LogEntry]:
        after: int | None = 0
        while after is not None:
            page = await self.decisions(tenant_id=tenant, since=since, limit=_MAX_PAGE, after=after)
            for entry in page.entries:
                yield entry
            after = page.next

    async def verify_decisions(
        self, *, tenant_id: str | None = None, anchor: Anchor | str | None = None
    ) -> Verification:
        """Walks the tenant's decision log: the first entry edited, removed or reordered
        since it was written, if any (`agboss.audit.verify_decisions`, from the store alone).

        Args:
            tenant_id: The tenant; the default tenant when ``None``.
            anchor: A place and digest recorded earlier outside the store (the
                ``anchor`` of an earlier verification, or its ``"<seq>:<digest>"``): the log
                must still hold it.

        Raises:
            DtoValidationError: ``anchor`` is not an anchor.
        """
        tenant = self._tenant(tenant_id)
        if isinstance(anchor, str):
            try:
                anchor = Anchor.parse(anchor)
            except ValueError as error:
                raise DtoValidationError(
                    str(error), hint="give the anchor a verification printed"
                ) from error
        return await verify_decisions(self._runtime.store, tenant, anchor=anchor)

    async def cut_decisions(self, before: datetime, *, tenant_id: str | None = None) -> int:
        """Retention: removes the tenant's entries decided before ``before``, from the start
        of the chain, and records where it was cut — the rest stays verifiable. How many.

        Raises:
            DtoValidationError: ``before`` is not a timezone-aware datetime.
        """
        tenant = self._tenant(tenant_id)
        _check_moment(before, "before")
        return await cut_decisions(self._runtime, tenant, before)

    def _tenant(self, tenant_id: str | None) -> str:
        return check_optional_id(tenant_id, "tenant_id", self._limits) or DEFAULT_TENANT_ID


def _check_page(since: datetime | None, limit: int, after: int | None) -> None:
    if since is not None:
        _check_moment(since, "since")
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= _MAX_PAGE:
        raise DtoValidationError(
            f"limit={limit!r} must be a whole number from 1 to {_MAX_PAGE}",
            hint="page through more with after=page.next",
        )
    if after is not None and (not isinstance(after, int) or isinstance(after, bool) or after < 0):
        raise DtoValidationError(
            f"after={after!r} is not where a page ended", hint="pass page.next of the page before"
        )


def _check_moment(moment: object, name: str) -> None:
    if not isinstance(moment, datetime) or moment.tzinfo is None:
        raise DtoValidationError(
            f"{name} must be a timezone-aware datetime",
            hint="pass e.g. datetime(2026, 1, 1, tzinfo=UTC)",
        )
