"""What `App.execute`, `App.resume` and `App.cancel` return: `ExecutionOutput`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from pydantic import BaseModel

from agboss.dto import ToolCallApprovalAskDto
from agboss.enums import ExecutionStatus, PauseAnswerer
from agboss.errors import DtoValidationError
from agboss.records._model import ExecutionRecord, Spend
from agboss.records._votes import PauseVotes

__all__ = ["ExecutionOutput", "PendingPause"]

OutT = TypeVar("OutT", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class PendingPause:
    """A pause the execution waits on.

    Attributes:
        pause_id: What `App.resume` takes; ``None`` for a `PauseAnswerer.CHANNEL` pause, whose
            id only its channel was sent.
        pause_ref: Its reference (`agboss.pause_ref`): what may leave the server in the id's
            place — a screen's list, a link, a button — for every pause, a channel's too.
        answered_by: Who may answer it.
        agent: The agent whose tool call waits.
        channel: The channel asked: a role's name, or a concrete channel's.
        item_index: The item of the nearest per-item launch it waits in — through child
            workflows: a grandchild's pause under a per-item child has that child's item —
            ``None`` outside one.
        child_execution_id: The child execution it waits in, ``None`` in the root.
        ask: The question: the tool call and its arguments.
        votes: Its quorum and the votes cast so far, when its role takes several approvals.
    """

    pause_id: str | None
    pause_ref: str
    answered_by: PauseAnswerer
    agent: str
    channel: str
    item_index: int | None
    child_execution_id: str | None
    ask: ToolCallApprovalAskDto
    votes: PauseVotes | None = None


@dataclass(frozen=True, slots=True)
class ExecutionOutput:
    """Where an execution stands after a call, and what it returned.

    Attributes:
        thread_id: The conversation.
        execution_id: The root execution.
        status: `ExecutionStatus.COMPLETED`, `PAUSED`, `CANCELLED`, or `WAITING` — nothing
            pending, the tree rests until ``wake_at`` (a retry's wait); a failed execution
            raises instead.
        output: The finish's output DTO when completed, else ``None``.
        pending: Every waiting pause; empty unless paused. The thread owner's pauses (which
            carry their ``pause_id``) come first, then the channels', each in the order asked.
            A child's output (in ``children``) lists the waiting pauses of its own subtree.
        children: The child executions' outputs, oldest first (a sequence built when first
            read: a tree of many children costs nothing until they are looked at).
        record: The execution record with ``record=True``, else ``None``.
        spend: What the execution spent.
        wake_at: When a resting tree moves by itself (a retry's next attempt is due), on the
            application's Clock; else ``None``.
        workflow_version: The version of the workflow it runs (``None`` where not read: a
            cancellation's output).
        workflow_fingerprint: What its journal depends on, as the build it began under
            defined it, digested (`ExecutionRecord.workflow_fingerprint`).
    """

    thread_id: str
    execution_id: str
    status: ExecutionStatus
    output: BaseModel | None = None
    pending: list[PendingPause] = field(default_factory=list)
    children: Sequence[ExecutionOutput] = field(default_factory=list)
    record: ExecutionRecord | None = None
    spend: Spend = field(default_factory=Spend)
    wake_at: datetime | None = None
    workflow_version: str | None = None
    workflow_fingerprint: str | None = None

    def output_as(self, dto: type[OutT]) -> OutT:
        """The output as the finish's DTO, typed for the caller.

        Raises:
            DtoValidationError: The execution has no output of that type (not completed, or
                another DTO).
        """
        if not isinstance(self.output, dto):
            raise DtoValidationError(
                f"execution {self.execution_id} has no {dto.__name__} output "
                f"(status {self.status.value}, output {type(self.output).__name__})",
                hint="read output_as(...) only on a completed execution, with its finish's DTO",
            )
        return self.output
