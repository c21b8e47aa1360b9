"""A delegation: one person's questions answered by another, within a scope, until a date or
revoked — "ada's questions go to bo until Friday".

Granted with `App.delegate`, revoked with `App.revoke_delegation`; kept by the store, so every
instance and every restart sees it. The delegate answers (or votes) as themselves *for* the
person who delegated: the audit trail and the decision log say "bo for ada". A delegate never
answers what they could not have answered had the question been theirs to claim, and a quorum
counts a person once — their own vote, or one they cast for another, never both.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime

__all__ = ["Delegation", "new_delegation_id"]


def new_delegation_id() -> str:
    """A delegation's id: ``dl-`` and 64 random bits, as hex (not a secret: revoking one takes
    the application's own call, not its id alone)."""
    return "dl-" + secrets.token_hex(8)


@dataclass(frozen=True, slots=True)
class Delegation:
    """One person's questions answered by another.

    Attributes:
        delegation_id: Its id (``dl-…``): `App.revoke_delegation` takes it.
        tenant_id: The tenant it holds in.
        principal: Whose questions: the person who delegates (an ``owner_id`` or an
            ``answered_by``, as the application authenticates them).
        delegate: Who answers them meanwhile.
        role: Only the questions of this role (or channel), by name; ``None``: any.
        tool: Only the questions about this tool's calls, by name; ``None``: any.
        granted_by: Who granted it, as the application authenticated them.
        reason: Why, as they said it.
        granted_at: When it was granted, on the application's clock.
        until: When it ends by itself; ``None``: until revoked.
        revoked_at: When it was revoked; ``None`` while it holds.
        revoked_by: Who revoked it.
    """

    delegation_id: str
    tenant_id: str
    principal: str
    delegate: str
    role: str | None
    tool: str | None
    granted_by: str
    reason: str | None
    granted_at: datetime
    until: datetime | None = None
    revoked_at: datetime | None = None
    revoked_by: str | None = None

    def holds(self, now: datetime) -> bool:
        """Whether it stands at ``now``: not revoked, not ended."""
        return self.revoked_at is None and (self.until is None or now < self.until)

    def covers(self, *, role: str, tool: str, now: datetime) -> bool:
        """Whether it hands the delegate a question of ``role`` about ``tool`` at ``now``."""
        return (
            self.holds(now)
            and (self.role is None or self.role == role)
            and (self.tool is None or self.tool == tool)
        )
