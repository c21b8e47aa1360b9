"""What a deploy check reports: the waiting trees the next build cannot continue, and why,
version by version (docs/deploying.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from agboss.enums import ExecutionStatus

__all__ = ["NOT_SERVED", "BlockedTree", "BlockedVersion", "DeployCheck"]

NOT_SERVED = "workflow.version-not-served"
"""The rule of a version the build neither runs nor continues (or a workflow it lacks)."""


@dataclass(frozen=True, slots=True)
class BlockedVersion:
    """A version of a workflow whose waiting trees the build cannot move as they are.

    Attributes:
        workflow: The workflow.
        version: The version the trees began under.
        rule: Why: ``workflow.version-not-served`` (the build neither runs nor continues
            it), ``workflow.changed-without-version`` (its own version, defined otherwise
            than the trees began with) or ``workflow.cannot-continue`` (a version it
            continues, whose trees wait on what it lacks).
        message: What, in a sentence that says what to do.
    """

    workflow: str
    version: str
    rule: str
    message: str


@dataclass(frozen=True, slots=True)
class BlockedTree:
    """A waiting execution tree the build cannot continue.

    Attributes:
        execution_id: The root execution.
        tenant_id: Its tenant.
        workflow: Its workflow.
        workflow_version: The version it began under (its `BlockedVersion` says why).
        status: Where it stands: paused, waiting, or running (a pass was cut off).
        began_at: When it began, on the application's Clock.
    """

    execution_id: str
    tenant_id: str
    workflow: str
    workflow_version: str
    status: ExecutionStatus
    began_at: datetime


@dataclass(frozen=True, slots=True)
class DeployCheck:
    """What a build would leave waiting if it replaced the running ones: every waiting tree
    it cannot continue, and why, version by version.

    Attributes:
        application: The application's name.
        versions: Each version blocked, with why.
        trees: Each tree blocked, oldest first (up to the check's limit).
        complete: Whether ``trees`` lists every one (``False``: the limit cut it).
    """

    application: str
    versions: list[BlockedVersion] = field(default_factory=list)
    trees: list[BlockedTree] = field(default_factory=list)
    complete: bool = True

    @property
    def passed(self) -> bool:
        """Whether the build continues every waiting tree: nothing would be stranded."""
        return not self.versions and not self.trees
