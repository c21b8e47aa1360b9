"""What deploys leave behind: the waiting trees no running build serves (docs/deploying.md)."""

from __future__ import annotations

from agboss.app._instance import Instance
from agboss.context import DEFAULT_TENANT_ID
from agboss.inputs import check_optional_id
from agboss.pauses import StrandedPage, list_stranded

__all__ = ["Deploys"]


class Deploys(Instance):
    """The deploys' part of `App`: `stranded`."""

    async def stranded(
        self, *, tenant_id: str | None = None, limit: int = 50, after: str | None = None
    ) -> StrandedPage:
        """The waiting execution trees whose version no running instance serves, oldest
        first: after a deploy that left a version behind, what waits for a build that serves
        it (the old one started again, or one whose workflow continues the version).

        A running instance is one that recovers (``App.create(recovers=True)``, the default)
        and has not closed: each says so in the store with every sweep, and one that stopped
        without closing is taken for gone after three sweeps' time (90 seconds). A stranded
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
