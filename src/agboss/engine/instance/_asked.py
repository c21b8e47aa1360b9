"""The questions an instance asked lately, kept as stored, so that answering one needs no read.

An answer is checked against its pause and the execution it waits in (who may answer, the
decision's shape, the deadline): facts that never change while the pause waits. Whether it
still waits is decided by the answer's own write, under the pause row's lock, which records
nothing when it does not; the call then reads the pause and says why (`record_answer`). So a
pause answered, withdrawn or expired elsewhere meanwhile is refused as if it had been read.
"""

from __future__ import annotations

from collections import OrderedDict

from agboss.enums import PauseStatus
from agboss.records import PauseRecord
from agboss.store.protocol import ExecutionRow

__all__ = ["AskedHere"]

KEPT = 1_000
"""The most questions kept (a few kilobytes each; the oldest go first, and answering one
of those reads it, as an answer to another instance's question does)."""


class AskedHere:
    """Pending questions this instance stored, each with the execution it waits in, by
    ``(tenant_id, pause_id)``; each is handed out once (`take`), and is read after that."""

    __slots__ = ("_kept",)

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[str, str], tuple[PauseRecord, ExecutionRow]] = OrderedDict()

    def keep(self, pause: PauseRecord, row: ExecutionRow) -> None:
        """Keeps a question just stored, unless its record will change while it waits (one
        that takes votes) or it does not wait."""
        if pause.status is not PauseStatus.PENDING or pause.votes is not None:
            return
        kept = self._kept
        kept[(pause.tenant_id, pause.pause_id)] = (pause, row)
        if len(kept) > KEPT:
            kept.popitem(last=False)

    def take(self, tenant_id: str, pause_id: str) -> tuple[PauseRecord, ExecutionRow] | None:
        """The question as stored and its execution, if kept (and no longer kept)."""
        return self._kept.pop((tenant_id, pause_id), None)
