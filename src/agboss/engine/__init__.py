"""The durable engine: passes over execution trees, journal replay, leases and recovery."""

from agboss.engine._engine import Engine
from agboss.engine._frame import ExecutionFrame
from agboss.engine._runtime import LEASE_TTL, RECOVERY_INTERVAL, Runtime

__all__ = ["LEASE_TTL", "RECOVERY_INTERVAL", "Engine", "ExecutionFrame", "Runtime"]
