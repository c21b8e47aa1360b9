"""The builds part of the store's protocol (`agboss.store.protocol` exports it): what each
build serves, the builds whose executions wait and what they wait on, and the trees no running
build serves (issue 55; docs/deploying.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from agboss.records import ContinuationRecord
    from agboss.store.protocol import ExecutionRow

__all__ = ["BuildRepository", "Served", "StrandedQuery", "WaitingBuild", "WaitingCall"]


@dataclass(frozen=True, slots=True)
class Served:
    """The trees of one workflow an instance moves, by the version their root began under
    (a build serves its own version, and the earlier ones it continues).

    Attributes:
        workflow: The workflow's name.
        versions: The versions served exactly.
        prefixes: A version that starts with one of these is served too (``continues=
            ["1.0.*"]``: ``"1.0."``; ``["*"]``: ``""``, every version).
        excluded: Versions not served whatever the others say (a deploy check's: those
            the build cannot continue).
    """

    workflow: str
    versions: tuple[str, ...]
    prefixes: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()

    def serves(self, version: str) -> bool:
        """Whether a tree of this workflow begun under ``version`` is moved here."""
        if version in self.excluded:
            return False
        return version in self.versions or version.startswith(self.prefixes)


@dataclass(frozen=True, slots=True)
class WaitingBuild:
    """Executions of one build that have not ended (running, paused or waiting).

    Attributes:
        workflow: Their workflow's name.
        version: Its version.
        fingerprint: Their build's fingerprint (`ExecutionRow.fingerprint`).
        count: How many.
    """

    workflow: str
    version: str
    fingerprint: str
    count: int


@dataclass(frozen=True, slots=True)
class WaitingCall:
    """A call the waiting trees of one build wait on: a tool's, asked through one channel.

    Attributes:
        workflow: Their root's workflow.
        version: Its version.
        fingerprint: Their root's build (``None``: begun before builds were fingerprinted).
        agent: The agent whose call waits.
        tool: The tool.
        channel: The channel that asks (a role's name, for a role).
        trees: How many trees wait on it.
    """

    workflow: str
    version: str
    fingerprint: str | None
    agent: str
    tool: str
    channel: str
    trees: int


@dataclass(frozen=True, slots=True)
class StrandedQuery:
    """Which waiting trees a listing of stranded ones reads: a tenant's trees still to move
    whose root's version none of ``served`` serves, oldest first.

    Attributes:
        tenant_id: The tenant (``None``: every tenant's, as a deploy check reads them).
        served: What the running instances serve (`BuildRepository.serving`).
        after: The keyset of the last of the page before: ``(created_at, execution_id)``.
        limit: The most to list.
    """

    tenant_id: str | None
    served: tuple[Served, ...]
    after: tuple[datetime, str] | None = None
    limit: int = 50


class BuildRepository(Protocol):
    """The builds that began executions: each workflow definition's parts, by fingerprint."""

    async def waiting(self, workflows: Sequence[str]) -> list[WaitingBuild]:
        """The builds of ``workflows`` whose executions have not ended, with how many; an
        execution begun before builds were fingerprinted is not among them."""
        ...

    async def parts(self, fingerprints: Sequence[str]) -> dict[str, dict[str, str]]:
        """Each known fingerprint's parts (`WorkflowDefinition.parts`); an unknown one is left
        out."""
        ...

    async def calls(self, workflows: Sequence[str]) -> list[WaitingCall]:
        """The calls the trees of ``workflows`` (by their root's) wait on: their questions
        pending, or answered and not yet taken by a pass."""
        ...

    async def waiting_trees(self, workflow: str, version: str, limit: int) -> list[ExecutionRow]:
        """The root executions of ``version`` of ``workflow`` still to move (running, paused,
        waiting), across tenants, oldest first by ``(created_at, execution_id)``: at most
        ``limit``."""
        ...

    async def continuations(self, root_execution_id: str) -> list[ContinuationRecord]:
        """A tree's moves to a new build by its workflow's continuation (`ContinueTree`),
        oldest first."""
        ...

    async def serving(self, now: datetime) -> list[Served]:
        """What the running instances serve: those whose `KeepInstance` lasts past ``now``,
        one `Served` per workflow."""
        ...

    async def stranded(self, query: StrandedQuery) -> list[ExecutionRow]:
        """A tenant's root executions still to move (running, paused, waiting) whose
        workflow and version none of ``query.served`` serves, oldest first by
        ``(created_at, execution_id)`` after ``query.after``."""
        ...
