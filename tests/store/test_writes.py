"""What every write declares about itself, checked against the statements it runs."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from agboss.enums import ExecutionStatus
from agboss.store.protocol import ExecutionRow, Fence, StepEntry
from agboss.store.sql import _ops as ops
from agboss.store.writes import (
    AppendStep,
    BeginExecution,
    MarkPauseSent,
    ReleaseLease,
    RenewLease,
    RestTree,
    SetExecutionStatus,
    Write,
)

_CHANGES_EXECUTIONS = re.compile(r"(INSERT INTO|UPDATE) executions\b")


def _writes_executions(op: Callable[..., object]) -> bool:
    source = inspect.getsource(op)
    called = {getattr(ops, name, None) for name in re.findall(r"\b(_[a-z_]+)\(", source)}
    helpers = [helper for helper in called if inspect.isfunction(helper)]
    return bool(_CHANGES_EXECUTIONS.search(source)) or any(
        _CHANGES_EXECUTIONS.search(inspect.getsource(helper)) for helper in helpers
    )


def test_a_write_that_changes_executions_rows_says_which() -> None:
    # An instance keeps a tree's outline and reads again only what its pass's writes say
    # they changed: a write that changes executions rows without saying so would leave
    # outputs stale.
    silent = [
        kind.__name__
        for kind, op in ops._OPS.items()
        if _writes_executions(op) and kind.changed_executions is Write.changed_executions
    ]
    assert silent == []


def test_the_check_sees_the_writes_that_change_executions() -> None:
    changing = {kind.__name__ for kind, op in ops._OPS.items() if _writes_executions(op)}
    assert {
        "AcquireLease",
        "AppendStep",
        "BeginExecution",
        "CancelExecutions",
        "InsertChild",
        "RestTree",
        "SetExecutionStatus",
    } <= changing
    assert "AddLedgerEntry" not in changing


def test_only_writes_whose_loss_recovery_re_derives_commit_without_waiting_for_the_disk() -> None:
    # Each is proven by the crash harness's `lose` trials; a new one is a decision, made there.
    # An instance's word that it runs or stopped (KeepInstance, LeaveInstance) decides nothing
    # of a tree: a lost one is said again by a later sweep, or lapses (tests/test_stranded.py).
    volatile = {kind.__name__ for kind in ops._OPS if not kind.durable}
    assert volatile == {
        "Announce",
        "BeginExecution",
        "FindStanding",
        "KeepInstance",
        "LeaveInstance",
        "MarkPauseSent",
        "ReleaseLease",
        "RenewLease",
        "RestTree",
        "SaveBranch",
    }
    now = datetime(2026, 1, 1, tzinfo=UTC)
    row = ExecutionRow.starting(
        execution_id="ex-1",
        parent=None,
        tenant_id="t",
        thread_id="th",
        owner_id="u",
        workflow="w",
        workflow_version="1",
        input_json="{}",
        now=now,
    )
    fence = Fence("ex-1", "a", 1)
    step = StepEntry("k", "tool-run", "{}", "{}")
    quiet = [
        [BeginExecution(row, "a", timedelta(seconds=30), now)],
        [RenewLease(fence, timedelta(seconds=30))],
        [MarkPauseSent("t", "p"), RestTree(fence, now, frozenset())],
    ]
    assert [ops.shape_of(writes, fence).durable for writes in quiet] == [False] * 3
    # Whatever else commits with them — a journal row, a status, an answer — waits for the disk.
    loud = [
        [AppendStep("ex-1", step, now), RestTree(fence, now, frozenset())],
        [SetExecutionStatus("ex-1", ExecutionStatus.PAUSED, now), ReleaseLease(fence)],
        [BeginExecution(row, "a", timedelta(seconds=30), now), AppendStep("ex-1", step, now)],
    ]
    assert [ops.shape_of(writes, fence).durable for writes in loud] == [True] * 3
