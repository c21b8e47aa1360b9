"""How stores keep times: integer microseconds since the epoch, in UTC."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["from_micros", "to_micros"]


def to_micros(moment: datetime) -> int:
    """A timezone-aware datetime as integer microseconds since the epoch."""
    return int(moment.timestamp() * 1_000_000)


def from_micros(micros: int) -> datetime:
    """The inverse of `to_micros`, in UTC."""
    return datetime.fromtimestamp(micros / 1_000_000, UTC)
