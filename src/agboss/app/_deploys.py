"""What deploys leave behind: the waiting trees no running build serves, and those the next
build could not continue (docs/deploying.md)."""

from __future__ import annotations

from dataclasses import replace

from agboss.app._instance import Instance
from agboss.assembly import Assembly
from agboss.context import DEFAULT_TENANT_ID
from agboss.engine import blocked_versions, unmappable
from agboss.errors import ContinuationFailedError, DtoValidationError
from agboss.inputs import check_optional_id
from agboss.pauses import StrandedPage, list_stranded, stranded_of
from agboss.records import NOT_SERVED, BlockedVersion, DeployCheck
from agboss.store.protocol import ExecutionRow, StrandedQuery

MOST_LISTED = 10_000
"""The most trees a deploy check lists."""

CONTINUATION_FAILS = "workflow.continuation-fails"
"""The rule of a version whose waiting trees the workflow's continuation cannot move."""

__all__ = ["Deploys"]


class Deploys(Instance):
    """The deploys' part of `App`: `stranded`, `deploy_check`."""

    async def stranded(
        self, *, tenant_id: str | None = None, limit: int = 50, after: str | None = None
    ) -> StrandedPage:
        """The waiting execution trees whose version no running instance serves, oldest
        first: after a deploy that left a version behind, what waits for a build that serves
        it (the old one started again, or one whose workflow continues the version).

        A running instance is one that recovers (``App.create(recovers=True)``, the default)
        and has not closed: each says so in the store with every sweep, and one that stopped
        without closing is taken for gone once its word lapses (five minutes). A stranded
        tree waits, never failed; its answers are recorded as they come.

        Args:
            tenant_id: The tenant; the default tenant when ``None``.
            limit: The most entries on the page, 1 to 500.
            after: ``page.next`` of the page before; ``None`` for the first page.

        Raises:
            DtoValidationError: An argument is not one of the above.
        """
        tenant = check_optional_id(tenant_id, "tenant_id", self._limits) or DEFAULT_TENANT_ID
        return await list_stranded(self._runtime, tenant_id=tenant, limit=limit, after=after)

    async def deploy_check(self, *, limit: int = 1000) -> DeployCheck:
        """Every waiting tree in the store that this build could not continue, and why:
        what it would strand if it replaced the running builds (`check_deploy` opens a build
        to run this on, before traffic moves).

        Args:
            limit: The most trees to list, 1 to 10,000 (``check.complete`` says if all were).

        Raises:
            DtoValidationError: ``limit`` is not a whole number from 1 to 10,000.
        """
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MOST_LISTED:
            raise DtoValidationError(
                f"limit={limit!r} must be a whole number from 1 to {MOST_LISTED}",
                hint="check.versions names every version blocked, whatever the limit",
            )
        runtime = self._runtime
        assembly = runtime.assembly
        versions = await blocked_versions(assembly, runtime.store)
        blocked = {(each.workflow, each.version) for each in versions}
        # What this build serves, less what it cannot continue: the trees outside it.
        served = tuple(
            replace(each, excluded=tuple(v for w, v in sorted(blocked) if w == each.workflow))
            for each in assembly.served
        )
        rows = await runtime.store.builds.stranded(StrandedQuery(None, served, limit=limit + 1))
        for row in rows[:limit]:
            if (row.workflow, row.workflow_version) not in blocked:
                blocked.add((row.workflow, row.workflow_version))
                versions.append(_not_served(assembly, row))
        # A version it maps by a continuation: the trees the continuation fails on, run dry.
        failing = await unmappable(runtime, limit)
        versions += _unmappable(failing[:limit])
        trees = [*rows[:limit], *(root for root, _ in failing)]
        return DeployCheck(
            application=assembly.spec.name,
            versions=versions,
            trees=[stranded_of(row) for row in trees[:limit]],
            complete=len(trees) <= limit,
        )


def _not_served(assembly: Assembly, row: ExecutionRow) -> BlockedVersion:
    workflow, version = row.workflow, row.workflow_version
    definition = assembly.workflows_by_name.get(workflow)
    if definition is None:
        said = (
            f"this build has no workflow {workflow}: keep a build that has it running until "
            f"its trees of version {version} end, or cancel them"
        )
    else:
        spec = definition.spec
        continued = f" and continues {', '.join(spec.continues)}" if spec.continues else ""
        said = (
            f"this build runs version {spec.version}{continued}, not {version}: add "
            f"{version!r} to continues=[...] if this build reads its journals, or keep a "
            "build that serves it running until its trees end"
        )
    return BlockedVersion(workflow, version, NOT_SERVED, said)


def _unmappable(
    failing: list[tuple[ExecutionRow, ContinuationFailedError]],
) -> list[BlockedVersion]:
    """Each version whose trees its workflow's continuation failed on, with the first why."""
    first: dict[tuple[str, str], ContinuationFailedError] = {}
    counted: dict[tuple[str, str], int] = {}
    for root, error in failing:
        version = (root.workflow, root.workflow_version)
        first.setdefault(version, error)
        counted[version] = counted.get(version, 0) + 1
    return [
        BlockedVersion(
            workflow,
            version,
            CONTINUATION_FAILS,
            f"its workflow's continuation cannot move {counted[workflow, version]} waiting "
            f"tree(s) of it to this build ({error.message}); fix the continuation, or keep the "
            "build that began them running until they end",
        )
        for (workflow, version), error in first.items()
    ]
