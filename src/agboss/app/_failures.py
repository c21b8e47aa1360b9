"""The trees that failed: listed for an operator, and retried from their journal after a fix."""

from __future__ import annotations

from datetime import datetime

from agboss.app._instance import Instance
from agboss.context import DEFAULT_TENANT_ID
from agboss.engine import call_said
from agboss.enums import ExecutionStatus
from agboss.inputs import check_flag, check_id, check_optional_id
from agboss.pauses import (
    ExecutionPage,
    FailedPage,
    executions_query,
    failed_query,
    list_executions,
    list_failed,
)
from agboss.records import ExecutionOutput

__all__ = ["FailedTrees"]


class FailedTrees(Instance):
    """The execution trees of `App` an operator acts on: `executions`, `failed`, `retry`."""

    async def executions(
        self,
        *,
        status: ExecutionStatus | str | None = None,
        owner_id: str | None = None,
        workflow: str | None = None,
        since: datetime | None = None,
        tenant_id: str | None = None,
        limit: int = 50,
        after: str | None = None,
    ) -> ExecutionPage:
        """The execution trees, newest change first: those waiting, paused, running, failed
        or completed — each with what it waits on.

        A paused tree lists the questions it waits on (masked; a channel's without its id), a
        resting one (``waiting``: a retry's wait) when it moves by itself; each entry has what
        was asked of it, masked by its workflow's PII rules, as the inbox shows it. Read by
        keyset from an index, so a page costs the same however many there are.

        Args:
            status: Only trees of this `ExecutionStatus` (or its value); ``None``: all.
            owner_id: Only the executions of this owner's threads.
            workflow: Only those of this workflow (its name).
            since: Only those that changed at or after it (timezone-aware).
            tenant_id: The tenant; the default tenant when ``None``.
            limit: The most entries on the page, 1 to 500.
            after: ``page.next`` of the page before; ``None`` for the first page.

        Raises:
            DtoValidationError: An argument is not one of the above.
        """
        limits = self._limits
        query = executions_query(
            tenant_id=check_optional_id(tenant_id, "tenant_id", limits) or DEFAULT_TENANT_ID,
            status=status,
            owner_id=check_optional_id(owner_id, "owner_id", limits),
            workflow=check_optional_id(workflow, "workflow", limits),
            since=since,
            limit=limit,
            after=after,
        )
        return await list_executions(self._runtime, query)

    async def failed(
        self,
        *,
        tenant_id: str | None = None,
        owner_id: str | None = None,
        limit: int = 50,
        after: str | None = None,
    ) -> FailedPage:
        """The execution trees that failed, newest first: what a fix or a retry takes on.

        Each entry has its failure's code, sentence and hint, masked by the workflow's PII
        rules. Read by keyset from an index, so a page costs the same however many failed.

        Args:
            tenant_id: The tenant; the default tenant when ``None``.
            owner_id: Only the executions of this owner's threads.
            limit: The most entries on the page, 1 to 500.
            after: ``page.next`` of the page before; ``None`` for the first page.

        Raises:
            DtoValidationError: An argument is not one of the above.
        """
        limits = self._limits
        query = failed_query(
            tenant_id=check_optional_id(tenant_id, "tenant_id", limits) or DEFAULT_TENANT_ID,
            owner_id=check_optional_id(owner_id, "owner_id", limits),
            limit=limit,
            after=after,
        )
        return await list_failed(self._runtime, query)

    async def retry(
        self,
        execution_id: str,
        *,
        tenant_id: str | None = None,
        retried_by: str | None = None,
        record: bool = False,
        call_ran: bool | None = None,
        call_result: str | None = None,
    ) -> ExecutionOutput:
        """Runs a failed execution tree again from its journal, in place.

        What ran returns its journaled result (model calls, tool runs: a tool is not run
        again), recorded decisions are kept (an answered pause is not asked again), and the
        step that failed runs again — on the code deployed now, which is why an operator
        retries after a fix. A question the failure withdrew is asked again under a new pause
        id (the old one answers `NotPausedError`). The tree keeps its ids; the retry and the
        failure it replaced stay in ``record.retries``. A child's id retries its root. Two
        instances retrying one tree at once: one runs it, the other gets its output then.

        Args:
            execution_id: The failed execution (``app.failed()`` lists them), or a child of it.
            tenant_id: Its tenant; the default tenant when ``None``.
            retried_by: Who asks for the retry, for the record (an operator's name).
            record: Return the execution record too.
            call_ran: For a tree a call cut off under ``OnInterrupted.FAIL`` failed
                (``tool.interrupted``), once a person checked whether it took effect: ``True``
                it did (the model reads that, and ``call_result``), ``False`` it did not (it
                runs once more, with the same idempotency key). Recorded in the audit trail as
                ``retried_by``'s answer to the question ``ASK`` would have asked.
            call_result: With ``call_ran=True``: what the call did, in the person's words.

        Returns:
            The tree's output after the retried pass: completed, paused on its questions, or
            — when another instance retried it meanwhile — as that retry left it.

        Raises:
            UnknownExecutionError: No such execution for this tenant.
            NotFailedError: The tree did not fail (it completed, was cancelled, or is still
                running or paused): nothing to retry.
            FinalFailureError: Its journal decided the failure (an agent's answers invalid after
                its validation attempts, its turns run out, a call cut off under
                ``OnInterrupted.FAIL`` with no ``call_ran``): a retry would fail the same way.
            VersionNotServedError: This build neither runs nor continues the tree's version
                (docs/deploying.md): retry it on one that does.
            LeaseBusyError: Another instance's pass held the tree past ``resume_timeout``.
            DtoValidationError: An id is not a non-blank string within the limits.
            AgbossError: The retried pass failed again: the error it failed with (the tree is
                failed again, and may be retried again).
        """
        limits = self._limits
        by = check_optional_id(retried_by, "retried_by", limits)
        return await self._engine.retry(
            check_id(execution_id, "execution_id", limits),
            tenant_id=check_optional_id(tenant_id, "tenant_id", limits) or DEFAULT_TENANT_ID,
            retried_by=by,
            record=check_flag(record, "record"),
            said=call_said(call_ran, call_result, by, limits),
        )
