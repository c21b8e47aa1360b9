"""Joins: where a launch's branches come back together."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from pydantic import BaseModel

__all__ = ["BranchResult", "JoinHandler", "JoinInput", "QuorumOutcome"]

OutT = TypeVar("OutT", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class BranchResult:
    """What one branch of a launch came to.

    Attributes:
        index: The branch's position in the launch (its item's index for a per-item launch).
        component: The name of the agent or workflow the branch ran.
        item_index: The item of a per-item launch, ``None`` otherwise.
        output: The branch's output DTO, if it succeeded.
        error: What it failed with, if it failed (under `Failure.COLLECT`).
        child_execution_id: The child execution, for a workflow branch.
    """

    index: int
    component: str
    item_index: int | None
    output: BaseModel | None = None
    error: BaseException | None = None
    child_execution_id: str | None = None

    @property
    def succeeded(self) -> bool:
        """Whether the branch finished with an output."""
        return self.output is not None


@dataclass(frozen=True, slots=True)
class QuorumOutcome:
    """How a quorum join was decided.

    Attributes:
        reached: Whether enough branches succeeded (for groups: whether a group won).
        winner: The winning group's name, for ``join_quorum_groups``.
        counted: How many branches succeeded before it was decided.
        deadline_passed: Whether it was decided by its deadline.
    """

    reached: bool
    winner: str | None = None
    counted: int = 0
    deadline_passed: bool = False


@dataclass(frozen=True, slots=True)
class JoinInput:
    """What a join gets.

    Attributes:
        input: The DTO the launch was started with.
        results: The branches that finished (succeeded, or failed under `Failure.COLLECT`), in
            launch order; a quorum join lists only those counted before it was decided.
        error: For an ``on_join_error`` handler: the error the launch failed with.
        quorum: For a quorum join: how it was decided.
    """

    input: BaseModel
    results: list[BranchResult] = field(default_factory=list)
    error: BaseException | None = None
    quorum: QuorumOutcome | None = None

    @property
    def outputs(self) -> list[BaseModel]:
        """The outputs of the branches that succeeded, in launch order."""
        return [result.output for result in self.results if result.output is not None]


class JoinHandler(ABC, Generic[OutT]):
    """What a ``@join`` class implements: ``join`` turns the branches' results into one DTO.

    ``join`` may be a plain method or an ``async def``.
    """

    @abstractmethod
    def join(self, input: JoinInput) -> OutT | Awaitable[OutT]:
        """Brings the branches' results together."""
