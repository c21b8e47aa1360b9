"""What each part of `App` reads: the instance's runtime, its engine, its input limits."""

from __future__ import annotations

from agboss.engine import Engine, Runtime
from agboss.inputs import InputLimits

__all__ = ["Instance"]


class Instance:
    """The base of `App`'s parts: the instance's runtime and engine, set by `App`."""

    _runtime: Runtime
    _engine: Engine

    @property
    def _limits(self) -> InputLimits:
        return self._runtime.assembly.spec.limits
