"""What every write declares about itself, checked against the statements it runs."""

from __future__ import annotations

import inspect
import re

from agboss.store.sql import ops
from agboss.store.writes import Write

_CHANGES_EXECUTIONS = re.compile(r"(INSERT INTO|UPDATE) executions\b")


def _writes_executions(op: object) -> bool:
    source = inspect.getsource(op)  # type: ignore[arg-type]
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
