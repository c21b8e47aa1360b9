"""The writes of builds: each definition's parts kept (`RecordBuild`), a waiting tree moved to
a new build by its workflow's continuation (`ContinueTree`), and the running instances' word
of what they serve (`KeepInstance`, `LeaveInstance`). Exported by `agboss.store.writes`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from agboss.records import ContinuationRecord, PauseRecord
from agboss.store._builds import Served
from agboss.store._write import Write
from agboss.store.protocol import Fence

__all__ = ["ContinueTree", "KeepInstance", "LeaveInstance", "MovedCall", "RecordBuild"]


@dataclass(frozen=True, slots=True)
class RecordBuild(Write[None]):
    """Keeps each definition's parts by its fingerprint, once: what a later build compares
    its own with (`BuildRepository.parts`). A fingerprint kept before is left as it was.

    Attributes:
        definitions: ``(fingerprint, workflow, version, parts)`` of each definition.
    """

    definitions: tuple[tuple[str, str, str, Mapping[str, str]], ...]
    at: datetime


@dataclass(frozen=True, slots=True)
class MovedCall:
    """A waiting call as a continuation mapped it: its pause as asked now (the question and
    its step mapped; a decision's arguments too, replacing ``was``'s answer only if the pause
    still holds it), and its model turn's journal entry with the call mapped."""

    pause: PauseRecord
    was: PauseRecord
    turn_key: str
    turn_json: str


@dataclass(frozen=True, slots=True)
class ContinueTree(Write[None]):
    """A waiting tree moves to this build by its workflow's continuation (under its lease):
    its root runs under ``entry.to_version`` and ``entry.to_fingerprint`` from now on, each
    call in ``moved`` is asked as mapped, and the move is kept in its audit trail."""

    fence: Fence
    entry: ContinuationRecord
    moved: tuple[MovedCall, ...]
    build: RecordBuild | None
    """The parts of the build it moves to, when this instance has not kept them yet."""

    def changed_executions(self) -> tuple[str, ...]:
        return (self.fence.root_execution_id,)


@dataclass(frozen=True, slots=True)
class KeepInstance(Write[None]):
    """Says that an instance runs and moves the trees it serves, until ``until``: written
    when it opens and renewed with each of its sweeps, so that a tree whose version no
    running instance serves is known (`BuildRepository.serving`). Instances whose time
    passed long ago are removed with it.

    Attributes:
        instance_id: The instance (its lease holder id).
        application: Its application's name.
        served: What it serves.
        at: Now, on its clock.
        until: When it is taken for gone unless it says so again.
    """

    durable: ClassVar[bool] = False  # lost: the next sweep says it again (nothing decided)

    instance_id: str
    application: str
    served: tuple[Served, ...]
    at: datetime
    until: datetime


@dataclass(frozen=True, slots=True)
class LeaveInstance(Write[None]):
    """An instance closed: it serves nothing any more."""

    durable: ClassVar[bool] = False  # lost: its word lapses (nothing decided)

    instance_id: str
