"""What deploys leave waiting: the trees no running build serves (`App.stranded`), and what a
deploy check reports — the trees the next build could not continue, and why, version by
version (docs/deploying.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from agboss.enums import ExecutionStatus

__all__ = [
    "NOT_SERVED",
    "BlockedVersion",
    "DeployCheck",
    "StrandedExecution",
    "StrandedPage",
]

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
class StrandedExecution:
    """A waiting execution tree a build does not serve: one no running instance serves, as
    `App.stranded` lists it, or one the next build could not continue, as a deploy check
    lists it.

    Attributes:
        execution_id: The root execution.
        tenant_id: Its tenant.
        thread_id: Its thread.
        owner_id: The thread's owner.
        workflow: The workflow's name.
        workflow_version: The version it began under: what a build must serve to move it.
        workflow_fingerprint: The build it began under (``None``: not known).
        status: Where it stands: paused on questions, waiting for a time, or running (a pass
            was cut off).
        began_at: When it began, on the application's Clock.
    """

    execution_id: str
    tenant_id: str
    thread_id: str
    owner_id: str
    workflow: str
    workflow_version: str
    workflow_fingerprint: str | None
    status: ExecutionStatus
    began_at: datetime


@dataclass(frozen=True, slots=True)
class StrandedPage:
    """One page of stranded execution trees.

    Attributes:
        entries: Oldest first.
        next: The cursor of the next page (``after=``), ``None`` on the last.
    """

    entries: list[StrandedExecution] = field(default_factory=list)
    next: str | None = None


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
    trees: list[StrandedExecution] = field(default_factory=list)
    complete: bool = True

    @property
    def passed(self) -> bool:
        """Whether the build continues every waiting tree: nothing would be stranded."""
        return not self.versions and not self.trees
