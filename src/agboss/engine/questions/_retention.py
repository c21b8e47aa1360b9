"""The decision log's retention: the door that cuts a tenant's oldest entries, the chain's cut
recorded with it so that what is kept stays verifiable."""

from __future__ import annotations

import logging
from datetime import datetime

from agboss.engine.instance import Runtime
from agboss.observability import log_event
from agboss.store.writes import CutDecisionLog

__all__ = ["cut_decisions"]


async def cut_decisions(runtime: Runtime, tenant_id: str, before: datetime) -> int:
    """Removes a tenant's decision log entries decided before ``before`` (from the start of
    its chain, never one after an entry kept), recording where it was cut; how many."""
    cut = CutDecisionLog(tenant_id, before)
    removed: int = (await runtime.store.write([cut]))[cut]
    log_event(
        runtime.logger,
        logging.INFO,
        "audit.cut",
        "%(count)d decision log entries of tenant %(tenant_id)s decided before %(before)s "
        "removed; the chain's cut is recorded",
        count=removed,
        tenant_id=tenant_id,
        before=before.isoformat(),
    )
    return removed
