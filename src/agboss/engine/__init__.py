"""The durable engine: passes over execution trees, journal replay, leases and recovery."""

from agboss.engine.engine import Engine
from agboss.engine.frame import ExecutionFrame
from agboss.engine.runtime import LEASE_TTL, RECOVERY_INTERVAL, Runtime

__all__ = ["LEASE_TTL", "RECOVERY_INTERVAL", "Engine", "ExecutionFrame", "Runtime"]
