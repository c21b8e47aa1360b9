"""Claiming a waiting question: the doors that write a claim and end one (`App.claim`,
`App.release`); who may claim what is checked before, where the answer's checks are."""

from __future__ import annotations

import logging
from datetime import datetime

from agboss.engine.instance import Runtime
from agboss.observability import log_event
from agboss.records import PauseRecord
from agboss.store.writes import ClaimPause, ReleaseClaim, write_one

__all__ = ["claim_question", "release_question"]


async def claim_question(
    runtime: Runtime, pause: PauseRecord, by: str, until: datetime
) -> PauseRecord | None:
    """``by`` claims the waiting ``pause`` until ``until`` (or renews their claim): the pause
    as claimed; ``None`` when it no longer waits or someone else's claim holds."""
    now = runtime.clock.now()
    claimed = await write_one(
        runtime.store, ClaimPause(pause.tenant_id, pause.pause_id, by, until, now)
    )
    if claimed is not None:
        _told(runtime, "run.claimed", "claimed", claimed, by)
    return claimed


async def release_question(runtime: Runtime, pause: PauseRecord, by: str) -> bool:
    """``by``'s claim on the waiting ``pause`` ends; ``False`` when they held none."""
    now = runtime.clock.now()
    released = await write_one(
        runtime.store, ReleaseClaim(pause.tenant_id, pause.pause_id, by, now)
    )
    if released:
        _told(runtime, "run.released", "released", pause, by)
    return released


def _told(runtime: Runtime, event: str, what: str, pause: PauseRecord, by: str) -> None:
    log_event(
        runtime.logger,
        logging.INFO,
        event,
        "%(by)s " + what + " the question on %(tool)s through %(channel)s of execution "
        "%(execution_id)s",
        by=by,
        tool=pause.ask.tool,
        channel=pause.channel,
        execution_id=pause.root_execution_id,
        tenant_id=pause.tenant_id,
    )
