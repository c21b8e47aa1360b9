"""What this instance keeps of what it wrote and read, in one place — the store only stores.

Three things, each bounded here, the oldest going first:

- the questions it asked (`AskedHere`): an answer to one is checked without a read, its own
  write saying whether the question still waits;
- the pending entries of trees (`PendingKept`): how ``ExecutionOutput.pending`` lists a
  pause never changes while it waits (it is only ever closed, then no longer listed), so a
  tree's pending list is read as ids, and only the entries not kept are read whole — the
  questions this instance inserted are kept as it inserts them;
- the outlines of the trees its passes moved (`outline`), with the epoch of the lease the
  pass held: only a holder writes a tree's executions, so the next pass of this instance, one
  epoch later, reads again only what it changed, and any other epoch reads the tree whole.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Generic, TypeVar

from agboss.engine.instance._asked import AskedHere
from agboss.records import PauseRecord, PendingPause
from agboss.store import pending_pause
from agboss.store.protocol import ExecutionRow, Store, TreeNode

__all__ = ["InstanceMemory", "Outline", "PendingKept"]

K = TypeVar("K")
V = TypeVar("V")

PENDING_KEPT = 50_000
"""The pending entries kept (a few hundred bytes each)."""

OUTLINES_KEPT = 256
"""The trees whose outlines are kept."""


class _Kept(Generic[K, V]):
    """A bounded map, the least recently kept going first."""

    __slots__ = ("_bound", "_items")

    def __init__(self, bound: int) -> None:
        self._bound = bound
        self._items: OrderedDict[K, V] = OrderedDict()

    def keep(self, key: K, value: V) -> None:
        items = self._items
        items[key] = value
        items.move_to_end(key)
        while len(items) > self._bound:
            items.popitem(last=False)

    def get(self, key: K) -> V | None:
        return self._items.get(key)

    def take(self, key: K) -> V | None:
        return self._items.pop(key, None)


class PendingKept:
    """Pending entries, by their tree and pause id (not one that takes votes: its votes
    change while it waits, so it is read anew)."""

    __slots__ = ("_kept",)

    def __init__(self) -> None:
        self._kept: _Kept[tuple[str, str], PendingPause] = _Kept(PENDING_KEPT)

    def keep(self, root_execution_id: str, pause_id: str, entry: PendingPause) -> None:
        """Keeps the entry of the pause ``pause_id`` as the tree's pending list shows it."""
        if entry.votes is None:
            self._kept.keep((root_execution_id, pause_id), entry)

    async def listed(
        self, store: Store, root_execution_id: str, ids: Sequence[str] | None
    ) -> list[PendingPause]:
        """A tree's pending pauses as ``ExecutionOutput.pending`` lists them: ``ids``, their
        ids in that order when known (`Rested.pending_ids`), else read; only the entries
        not kept are read whole.

        Entries are kept by the pause's id (an entry does not show a channel pause's).
        """
        pauses = store.pauses
        if ids is None:
            ids = await pauses.pending_ids(root_execution_id)
        found = {pause_id: self._kept.get((root_execution_id, pause_id)) for pause_id in ids}
        missing = [pause_id for pause_id, entry in found.items() if entry is None]
        if missing:
            entries = await pauses.list_pending(root_execution_id, missing)
            for pause_id, read in zip(missing, entries, strict=True):
                found[pause_id] = read
                self.keep(root_execution_id, pause_id, read)
        listed: list[PendingPause] = []
        for pause_id in ids:
            entry = found[pause_id]
            assert entry is not None  # kept, or read now
            listed.append(entry)
        return listed


@dataclass(frozen=True, slots=True)
class Outline:
    """A tree's outline as this instance last read it, under the lease epoch it held."""

    epoch: int
    nodes: list[TreeNode]
    ids: frozenset[str]


@dataclass
class InstanceMemory:
    """What this instance keeps, bounded: see the module's docstring."""

    asked: AskedHere = field(default_factory=AskedHere)
    """The questions it asked lately: answered without a read."""
    pending: PendingKept = field(default_factory=PendingKept)
    """Pending entries: a tree's pending list read as ids."""
    outlines: _Kept[str, Outline] = field(default_factory=lambda: _Kept(OUTLINES_KEPT))
    """The outlines of the trees its passes moved, by root."""
    build_kept: bool = False
    """Whether its build's definitions are in the store: kept with its first begin."""
    serving_until: datetime | None = None
    """Until when the store has its word that it runs (`keep_serving`)."""

    def asked_here(self, pause: PauseRecord, row: ExecutionRow) -> None:
        """A question this instance just stored: kept to be answered without a read, and as
        its tree's pending list shows it."""
        self.asked.keep(pause, row)
        self.pending.keep(pause.root_execution_id, pause.pause_id, pending_pause(pause))
