"""A pass as a value of its own: it runs a tree's flow until it rests and ends it.

`Pass.run` runs the flow (re-entering what moves), takes the answers recorded while it ran
(the drain), and ends the tree in one commit with the lease's release: rested on its questions
or its resting steps (with when it wakes), completed, or failed. What comes after — the
channels owed a withdraw, the record read back, the wake-up armed, the hooks — is the engine
door's that ran it (`Engine`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from pydantic import BaseModel

from agboss.engine.instance import Runtime
from agboss.engine.questions import tell_owed_withdrawals
from agboss.engine.runs import FlowRunner
from agboss.engine.trees import ExecutionFrame, PassState, PassWrites, Waiting, earliest
from agboss.enums import Decider, ExecutionStatus, Outcome, PauseResolution, PauseStatus
from agboss.errors import AgbossError, ExecutionFailedError, PassStoppingError
from agboss.observability import closed, log_event
from agboss.records import PauseRecord
from agboss.store import encode_failure
from agboss.store.protocol import ExecutionRow
from agboss.store.writes import (
    CancelPendingUnder,
    ReleaseLease,
    RestTree,
    SetExecutionStatus,
)

__all__ = ["Ended", "Pass", "resolved_pauses"]


class Ended(NamedTuple):
    """Where a pass left its tree."""

    status: ExecutionStatus
    output: BaseModel | None
    due: bool
    """Whether a channel is owed a withdraw."""
    pending_ids: tuple[str, ...] | None = None
    """The ids of the pending pauses of a tree that rested paused, read as it rested."""
    wake_at: datetime | None = None
    """When a tree that rested moves by itself (a retry's wait), if it does."""


@dataclass(slots=True)
class Pass:
    """One pass over a tree, holding its lease.

    Attributes:
        runtime: The application's runtime.
        flows: Runs a frame's flow.
        row: The tree's root, as the pass began.
        writes: The pass's buffered writes, under its lease.
        state: What the pass knows of its tree.
    """

    runtime: Runtime
    flows: FlowRunner
    row: ExecutionRow
    writes: PassWrites
    state: PassState

    async def run(self, resolved: Sequence[PauseRecord] | None) -> Ended:
        """Runs the flow until it rests; the last commit releases the lease. ``resolved``: the
        tree's resolved pauses when they were read with its lease (else they are read here)."""
        runtime, row, writes, state = self.runtime, self.row, self.writes, self.state
        root = row.execution_id
        if resolved is None:
            none: list[PauseRecord] = []
            resolved = await state.stored(lambda: resolved_pauses(runtime, row), none)
        tried: set[str] = set()
        while True:
            tried.update(pause.pause_id for pause in resolved)
            state.take(resolved)
            frame = ExecutionFrame(runtime, row, writes, state=state)
            try:
                outcome = await self.flows.run_flow(frame)
                # What the first run wrote is read back from here on.
                state.fresh, state.replay = False, None
            except PassStoppingError:
                raise  # not the tree's failure: another holder, or the sweep, carries on
            except Exception as raised:
                error = raised if isinstance(raised, AgbossError) else unexpected(row, raised)
                # Its tree ended before an answer: the pauses still waiting are cancelled.
                closing = close_pending(writes, root, runtime.clock.now())
                committed = await writes.commit(
                    [
                        *closing,
                        SetExecutionStatus(
                            root,
                            ExecutionStatus.FAILED,
                            runtime.clock.now(),
                            error_json=encode_failure(error),
                        ),
                        ReleaseLease(writes.lease.fence),
                    ]
                )
                for close in closing:
                    shut = committed[close]
                    closed(shut, Outcome.CANCELLED, Decider.FLOW, runtime.clock.now())
                log_event(
                    runtime.logger,
                    logging.INFO,
                    "run.failed",
                    "execution %(execution_id)s of %(workflow)s failed: %(code)s",
                    execution_id=root,
                    workflow=row.workflow,
                    tenant_id=row.tenant_id,
                    code=error.code,
                )
                if writes.withdrawals_due:
                    await tell_owed_withdrawals(runtime, root)
                if error is raised:
                    raise
                raise error from raised
            if isinstance(outcome, Waiting):
                # The drain: decisions recorded while this pass ran are taken by this pass —
                # on what it wrote, which the next run of the flow reads back. The check is
                # in the commit that rests the tree, unless the ids tried are too many to
                # send with it.
                check: frozenset[str] | None = frozenset(tried)
                if len(tried) > _TRIED_IN_ONE_STATEMENT:
                    resolved = await resolved_pauses(runtime, row)
                    if any(pause.pause_id not in tried for pause in resolved):
                        await writes.flush()
                        continue
                    check = None
                # A pass that re-entered every branch knows every step that rests; another
                # keeps the wake-up of those it did not re-enter (read with its lease).
                wake = earliest(outcome.wake_at, await self._kept_wake())
                # The branches it did not re-enter keep their resting steps' wake-up.
                kept = None if state.recovering or state.rested else row.resting_until
                rested = await writes.commit_one(
                    RestTree(
                        writes.lease.fence,
                        runtime.clock.now(),
                        check,
                        wake,
                        earliest(outcome.resting_until, kept),
                        self._resting_paths(outcome, kept),
                    )
                )
                if rested is None:  # an answer came: the lease is still held
                    resolved = await resolved_pauses(runtime, row)
                    continue
                if rested.cancelled:  # cancelled meanwhile (app.cancel): it stays cancelled
                    return Ended(ExecutionStatus.CANCELLED, None, due=True)
                waiting = wake is not None and not rested.pending_ids
                return Ended(
                    ExecutionStatus.WAITING if waiting else ExecutionStatus.PAUSED,
                    None,
                    due=writes.withdrawals_due,
                    pending_ids=rested.pending_ids,
                    wake_at=wake,
                )
            completed = SetExecutionStatus(
                root,
                ExecutionStatus.COMPLETED,
                runtime.clock.now(),
                output_json=outcome.model_dump_json(),
            )
            results = await writes.commit(
                [
                    *close_pending(writes, root, runtime.clock.now()),
                    completed,
                    ReleaseLease(writes.lease.fence),
                ]
            )
            if not results[completed]:  # cancelled meanwhile (app.cancel): it stays cancelled
                return Ended(ExecutionStatus.CANCELLED, None, due=True)
            return Ended(ExecutionStatus.COMPLETED, outcome, due=writes.withdrawals_due)

    def _resting_paths(self, outcome: Waiting, kept: datetime | None) -> tuple[str, ...] | None:
        """The branch paths of the steps left resting: this pass's, and those kept (``kept``:
        the wake-up of the branches it did not re-enter) — ``None`` when one is not known."""
        if outcome.resting_until is None and kept is None:
            return None  # nothing rests
        known = outcome.resting_until is None or bool(outcome.resting_paths)
        if not known or (kept is not None and self.row.resting_paths is None):
            return None  # a resting step whose branch is not known: every branch, when due
        kept_paths = () if kept is None else (self.row.resting_paths or ())
        return tuple(sorted({*outcome.resting_paths, *kept_paths}))

    async def _kept_wake(self) -> datetime | None:
        """The wake-up a pass keeps of the branches it did not re-enter: the tree's, as read
        with its lease — unless it has come (the pass was woken by a question's deadline or
        ladder step), or was the deadline or ladder step of a question this pass took the
        answer of, which no longer waits: then the earliest of the questions still waiting
        and of the resting steps (a read, only then)."""
        row, state = self.row, self.state
        kept = None if state.recovering else row.wake_at
        if kept is None:
            return None
        answered = state.resolved.values()
        if kept > self.runtime.clock.now() and not any(
            kept in (pause.expires_at, pause.next_step_at) for pause in answered
        ):
            return kept
        waiting = await self.runtime.store.pauses.find_by_root(
            row.root_execution_id, (PauseStatus.PENDING,)
        )
        return earliest(
            *(pause.expires_at for pause in waiting),
            *(pause.next_step_at for pause in waiting),
            None if state.rested else row.resting_until,  # re-entered: the flow's says
        )


async def resolved_pauses(runtime: Runtime, root: ExecutionRow) -> list[PauseRecord]:
    """The tree's resolved pauses, which no step has taken yet (a step takes its pause in the
    commit that journals it)."""
    return await runtime.store.pauses.find_by_root(root.execution_id, (PauseStatus.RESOLVED,))


def close_pending(writes: PassWrites, root: str, now: datetime) -> list[CancelPendingUnder]:
    """What closes the pauses still waiting in a tree that ends: nothing when none can wait
    (then the ending commit need not read which it closed: one round trip fewer)."""
    if not writes.may_have_pending:
        return []
    return [CancelPendingUnder(root, "", PauseResolution.CANCELLED, now)]


_TRIED_IN_ONE_STATEMENT = 64
"""The most pause ids a pass's resting commit checks itself (``NOT IN``); more are read."""


def unexpected(row: ExecutionRow, error: Exception) -> ExecutionFailedError:
    """What an error that is not agboss's own fails its tree with."""
    return ExecutionFailedError(
        f"execution {row.execution_id} failed on an unexpected error: {error!r}",
        hint="this is a bug in the application or in agboss, not a decision; the tree is "
        "marked failed so that the recovery sweep does not retry it forever",
    )
