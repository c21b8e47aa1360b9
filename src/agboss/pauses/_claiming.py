"""Claiming a waiting question (`App.claim`) and releasing it (`App.release`): who may claim
is who may answer — checked as an answer is — and the claim is written by the engine's door."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from agboss.components import Claims
from agboss.context import DEFAULT_TENANT_ID
from agboss.engine import claim_question, release_question, tool_of
from agboss.enums import PauseStatus
from agboss.errors import DtoValidationError, NotPausedError, UnknownPauseError
from agboss.pauses._answers import (
    Credentials,
    as_owner,
    check_not_owner,
    check_owner,
    closed_as,
    credential,
    expired,
    why_not_written,
)
from agboss.records import PauseRecord, pause_ref
from agboss.store.protocol import ExecutionRow

if TYPE_CHECKING:
    from agboss.engine import Engine

__all__ = ["ClaimReceipt", "claim_pause", "release_pause"]


@dataclass(frozen=True, slots=True)
class ClaimReceipt:
    """A claim, as `App.claim` made it.

    Attributes:
        pause_ref: The question's reference.
        claimed_by: Who handles it.
        claimed_until: Until when the claim holds, unless released or answered first.
    """

    pause_ref: str
    claimed_by: str
    claimed_until: datetime


async def claim_pause(engine: Engine, credentials: Credentials) -> ClaimReceipt:
    """Claims a waiting question for whoever may answer it; see `App.claim`."""
    pause, claimant = await _checked(engine, credentials)
    runtime = engine.runtime
    _, channel = tool_of(runtime, pause)
    lasts = (Claims() if channel.role is None else channel.role.claims).lasts
    until = runtime.clock.now() + lasts
    claimed = await claim_question(runtime, pause, claimant, until)
    if claimed is None:  # answered, closed or claimed by someone else since it was read
        raise await why_not_written(engine, pause)
    return ClaimReceipt(pause_ref(pause.pause_id), claimant, until)


async def release_pause(engine: Engine, credentials: Credentials) -> bool:
    """Ends the caller's claim on a waiting question; whether they held one. See
    `App.release`."""
    pause, claimant = await _checked(engine, credentials)
    return await release_question(engine.runtime, pause, claimant)


async def _checked(engine: Engine, credentials: Credentials) -> tuple[PauseRecord, str]:
    """The waiting question and who claims it, checked as an answer from them would be."""
    runtime = engine.runtime
    tenant = credentials.tenant_id or DEFAULT_TENANT_ID
    found = await runtime.store.pauses.find_with_execution(tenant, credentials.pause_id)
    if found is None:
        raise UnknownPauseError()
    pause, row = found
    tool_of(runtime, pause)  # refused here if this build lacks what answers it
    claimant = credential(pause, credentials.owner_id, credentials.answered_by)
    _check_claimant(engine, pause, row, claimant, await as_owner(engine, pause, row, claimant))
    if pause.status is not PauseStatus.PENDING:
        raise NotPausedError(closed_as(pause))
    if expired(pause, runtime.clock.now()):
        raise NotPausedError("expired")
    return pause, claimant


def _check_claimant(
    engine: Engine, pause: PauseRecord, row: ExecutionRow, claimant: str, standing_in: str
) -> None:
    if pause.votes is not None:
        raise DtoValidationError(
            "a question that takes several approvals is not claimed: each voter answers it",
            hint="vote on it with app.answer; claim questions one answer decides",
        )
    check_owner(pause, row, standing_in)  # the owner, or their delegate
    check_not_owner(engine, pause, row, claimant)
