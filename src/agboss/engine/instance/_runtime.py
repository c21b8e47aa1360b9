"""What every pass of an `App` shares: the assembly, the store, the clock, models, the holder."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from datetime import timedelta

from agboss.assembly import Assembly
from agboss.clock import Clock
from agboss.engine.instance._memory import InstanceMemory
from agboss.models import ModelResolver
from agboss.store.protocol import Store

__all__ = ["LEASE_TTL", "RECOVERY_INTERVAL", "RESUME_TIMEOUT", "Runtime"]

LEASE_TTL = timedelta(seconds=30)
"""How long a pass's lease lasts without renewal; renewed every third of it."""

RESUME_TIMEOUT = timedelta(seconds=60)
"""How long a resume waits for another instance to end its pass on the tree."""

RECOVERY_INTERVAL = timedelta(seconds=30)
"""How often the recovery sweep runs, on the application's Clock."""


@dataclass(slots=True)
class Runtime:
    """The services of one `App` instance.

    Attributes:
        assembly: The checked application.
        store: The durable store.
        clock: The application's Clock.
        models: Resolves model names to providers.
        holder: This instance's id as a lease holder.
        logger: Where warnings (``channel.withdraw-failed``, …) go.
    """

    assembly: Assembly
    store: Store
    clock: Clock
    models: ModelResolver
    holder: str = field(default_factory=lambda: f"app-{uuid.uuid4().hex[:12]}")
    logger: logging.Logger = field(default_factory=lambda: logging.getLogger("agboss"))
    lease_ttl: timedelta = LEASE_TTL
    resume_timeout: timedelta = RESUME_TIMEOUT
    prompts: dict[str, str] = field(default_factory=dict)
    """Each reply interpreter's instructions (its prompt and prompt URLs), by name."""
    memory: InstanceMemory = field(default_factory=InstanceMemory)
    """What this instance keeps of what it wrote and read (`InstanceMemory`)."""
