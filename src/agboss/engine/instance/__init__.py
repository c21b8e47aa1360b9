"""What one instance holds: its `Runtime` (the store, the clock, the assembly, the models and
the intervals it runs by) and its `InstanceMemory` (the questions it asked, the pending entries
and tree outlines it read or wrote, each bounded there).
"""

from agboss.engine.instance._memory import Outline
from agboss.engine.instance._runtime import LEASE_TTL, RECOVERY_INTERVAL, RESUME_TIMEOUT, Runtime

__all__ = ["LEASE_TTL", "RECOVERY_INTERVAL", "RESUME_TIMEOUT", "Outline", "Runtime"]
