"""Finding stranded trees: a tenant's waiting execution trees whose version no running
instance serves — for an operator's screen or ``agboss executions stranded``, after a deploy
that left a version behind (docs/deploying.md). A stranded tree waits, never failed; a build
that serves its version moves it when it runs.

"Running" is what the instances that recover say in the store (`KeepInstance`, said again by
their sweeps before it lapses): an instance that stopped without closing is taken for gone
once its word lapsed (five minutes: `SERVING_LASTS`). An instance that does not recover (the
command line) moves no tree it did not begin or answer, and serves nothing.
"""

from __future__ import annotations

from agboss.engine import Runtime
from agboss.pauses._pages import check_limit, execution_keyset, next_cursor
from agboss.records import StrandedExecution, StrandedPage
from agboss.store.protocol import ExecutionRow, StrandedQuery

__all__ = ["list_stranded", "stranded_of"]


async def list_stranded(
    runtime: Runtime, *, tenant_id: str, limit: int, after: str | None
) -> StrandedPage:
    """One page of a tenant's stranded trees, oldest first.

    Raises:
        DtoValidationError: ``limit`` is not 1 to 500, or ``after`` not a cursor a page gave.
    """
    check_limit(limit)
    keyset = execution_keyset(after, "a page of stranded executions")
    builds = runtime.store.builds
    served = tuple(await builds.serving(runtime.clock.now()))
    found = await builds.stranded(
        StrandedQuery(tenant_id, served, after=keyset, limit=limit + 1)  # one more: a next?
    )
    following = next_cursor(found, limit, lambda row: (row.created_at, row.execution_id))
    return StrandedPage(entries=[stranded_of(row) for row in found[:limit]], next=following)


def stranded_of(row: ExecutionRow) -> StrandedExecution:
    """A waiting root, as a listing of stranded trees shows it."""
    return StrandedExecution(
        execution_id=row.execution_id,
        tenant_id=row.tenant_id,
        thread_id=row.thread_id,
        owner_id=row.owner_id,
        workflow=row.workflow,
        workflow_version=row.workflow_version,
        workflow_fingerprint=row.fingerprint,
        status=row.status,
        began_at=row.created_at,
    )
