"""The base classes that give components their typed methods."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable
from typing import Generic, TypeVar

from pydantic import BaseModel

__all__ = ["ToolHandler"]

InT = TypeVar("InT", bound=BaseModel)
OutT = TypeVar("OutT", bound=BaseModel)


class ToolHandler(ABC, Generic[InT, OutT]):
    """What a ``@tool`` class implements: ``run`` takes the tool's input DTO, returns its output.

    ``run`` may be a plain method or an ``async def``; the framework awaits either. A sync
    ``run`` runs in a worker thread so that it does not block the event loop.
    """

    @abstractmethod
    def run(self, args: InT) -> OutT | Awaitable[OutT]:
        """Runs the tool once for a validated input."""
