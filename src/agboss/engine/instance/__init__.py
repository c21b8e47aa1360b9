"""What one instance holds: its `Runtime` (the store, the clock, the assembly, the models and
the intervals it runs by) and its `InstanceMemory` (the questions it asked, the pending entries
and tree outlines it read or wrote, each bounded there) — and the build it runs, held against
what waits in its store (`check_build`).
"""

from agboss.engine.instance._builds import (
    SERVING_LASTS,
    blocked_versions,
    build_record,
    check_build,
    keep_serving,
    leave,
)
from agboss.engine.instance._memory import Outline
from agboss.engine.instance._runtime import LEASE_TTL, RECOVERY_INTERVAL, RESUME_TIMEOUT, Runtime

__all__ = [
    "LEASE_TTL",
    "RECOVERY_INTERVAL",
    "RESUME_TIMEOUT",
    "SERVING_LASTS",
    "Outline",
    "Runtime",
    "blocked_versions",
    "build_record",
    "check_build",
    "keep_serving",
    "leave",
]
