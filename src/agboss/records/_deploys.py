"""What deploys leave waiting: the trees no running build serves (`App.stranded`), what a
deploy check reports — the trees the next build could not continue, and why, version by
version — and a waiting tree moved to a new build by its workflow's continuation: the calls it
maps (`PendingCall`) and the audit entry of the move (`ContinuationRecord`) (docs/deploying.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agboss.enums import ExecutionStatus

__all__ = [
    "NOT_SERVED",
    "BlockedVersion",
    "ContinuationRecord",
    "ContinuedCall",
    "DeployCheck",
    "PendingCall",
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


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A tool call a waiting tree of an earlier version waits on, as its workflow's
    continuation maps it to this build (``@workflow(continuation=...)``): return it as it is,
    or with another ``tool`` of the same agent and ``arguments`` valid for that tool's input
    (``dataclasses.replace(call, tool=..., arguments=...)``).

    Attributes:
        workflow: The tree's workflow.
        version: The version the tree began under.
        agent: The agent whose call waits.
        tool: The tool called.
        arguments: The arguments it runs with: the model's, or those its approver's decision
            put in their place.
        call_id: The model's id of the call (kept whatever the mapping returns).
    """

    workflow: str
    version: str
    agent: str
    tool: str
    arguments: Mapping[str, Any]
    call_id: str


class ContinuedCall(BaseModel):
    """One call a continuation mapped, in the audit trail.

    Attributes:
        execution_id: The execution it waits in.
        step: Its step's key.
        agent: The agent whose call it is.
        before_tool: The tool it called under the earlier build.
        before_arguments: Its arguments then.
        tool: The tool it calls now.
        arguments: Its arguments now.
    """

    model_config = ConfigDict(frozen=True)

    execution_id: str
    step: str
    agent: str
    before_tool: str
    before_arguments: dict[str, Any]
    tool: str
    arguments: dict[str, Any]


class ContinuationRecord(BaseModel):
    """A waiting tree moved to a new build by its workflow's continuation (``record.
    continuations``): from which version and build to which, when, and each call it changed.

    Attributes:
        continued_at: When (ISO 8601, the application's Clock).
        from_version: The version the tree ran under before.
        to_version: The version it runs under since.
        from_fingerprint: The build before (``None``: not known).
        to_fingerprint: The build since.
        calls: Each waiting call the continuation changed (one it returned as it was is not
            listed).
    """

    model_config = ConfigDict(frozen=True)

    continued_at: str
    from_version: str
    to_version: str
    from_fingerprint: str | None
    to_fingerprint: str
    calls: list[ContinuedCall] = Field(default_factory=list)
