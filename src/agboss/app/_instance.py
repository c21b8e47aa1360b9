"""What each part of `App` reads: the instance's runtime, its engine, its input limits."""

from __future__ import annotations

from agboss.engine import Engine, Runtime
from agboss.inputs import InputLimits, check_id, check_optional_id
from agboss.pauses import Credentials

__all__ = ["Instance"]


class Instance:
    """The base of `App`'s parts: the instance's runtime and engine, set by `App`."""

    _runtime: Runtime
    _engine: Engine

    @property
    def _limits(self) -> InputLimits:
        return self._runtime.assembly.spec.limits

    def _credentials(
        self, pause_id: object, tenant_id: object, owner_id: object, answered_by: object
    ) -> Credentials:
        """An answer's identifiers, checked at the edge."""
        limits = self._limits
        return Credentials(
            pause_id=check_id(pause_id, "pause_id", limits),
            tenant_id=check_optional_id(tenant_id, "tenant_id", limits),
            owner_id=check_optional_id(owner_id, "owner_id", limits),
            answered_by=check_optional_id(answered_by, "answered_by", limits),
        )
