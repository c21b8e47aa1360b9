"""A standing decision: a tool's calls approved ahead of time, within a scope, until revoked.

Granted with `App.allow`, revoked with `App.revoke`; kept by the store, so every instance and
every restart sees it. A call it covers is decided at once (`PauseResolution.DECIDED`), and
the audit entry names the decision (``standing:<decision_id>``) as what answered, never a
person.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime

from agboss.enums import StandingScope

__all__ = ["STANDING_RESPONDER", "StandingDecision", "new_decision_id"]

STANDING_RESPONDER = "standing:"
"""How an audit entry names a standing decision as its responder: this, then its id."""


def new_decision_id() -> str:
    """A standing decision's id: ``sd-`` and 64 random bits, as hex (not a secret: revoking
    one takes the application's own call, not its id alone)."""
    return "sd-" + secrets.token_hex(8)


@dataclass(frozen=True, slots=True)
class StandingDecision:
    """A tool's calls approved ahead of time.

    Attributes:
        decision_id: Its id (``sd-…``): `App.revoke` takes it; audit entries name it.
        tenant_id: The tenant it holds in.
        tool: The tool whose calls it approves, by name; ``None`` when it names a role.
        role: The channel role whose questions it approves (every tool that asks it), by
            name; ``None`` when it names a tool.
        scope: Where it holds: one thread, one owner's threads, or the tenant's.
        thread_id: The thread, for `StandingScope.THREAD`.
        owner_id: The owner, for `StandingScope.OWNER`.
        granted_by: Who granted it, as the application authenticated them.
        reason: Why, as they said it.
        granted_at: When it was granted, on the application's clock.
        until: When it lapses by itself; ``None``: until revoked.
        revoked_at: When it was revoked; ``None`` while it stands.
        revoked_by: Who revoked it.
    """

    decision_id: str
    tenant_id: str
    tool: str | None
    role: str | None
    scope: StandingScope
    thread_id: str | None
    owner_id: str | None
    granted_by: str
    reason: str | None
    granted_at: datetime
    until: datetime | None = None
    revoked_at: datetime | None = None
    revoked_by: str | None = None

    @property
    def responder(self) -> str:
        """What an audit entry names as the answer's responder."""
        return STANDING_RESPONDER + self.decision_id

    def stands(self, now: datetime) -> bool:
        """Whether it covers calls at ``now``: not revoked, not lapsed."""
        return self.revoked_at is None and (self.until is None or now < self.until)
