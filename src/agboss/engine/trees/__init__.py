"""One tree in a pass: its lease and the pass's buffered writes (`_lease.py`), the frame a pass
runs an execution in and the journal keys of its steps (`_frame.py`), what waits in it and when
it wakes (`_waiting.py`, `_wakeups.py`), its records read back (`_reading.py`), its budgets, its
stored failures, and the application's hooks.
"""

from agboss.engine.trees._budgets import check_budgets, count_spend
from agboss.engine.trees._failures import failure_record, stored_error
from agboss.engine.trees._frame import (
    ATTEMPT,
    ATTEMPT_FAILED,
    TOOL_STEP,
    ExecutionFrame,
    PassState,
    attempt_key,
    execution_context,
    failed_key,
    intent_of,
    interrupted_key,
    maybe_await,
    step_context,
)
from agboss.engine.trees._hooks import ApplicationHooks
from agboss.engine.trees._lease import (
    Held,
    Lease,
    PassStart,
    PassWrites,
    acquire_lease,
    commit_acquiring_lease,
)
from agboss.engine.trees._reading import PassChanges, PassEnd, TreeReader
from agboss.engine.trees._timeouts import run_within
from agboss.engine.trees._waiting import WAITING, Waiting, earliest
from agboss.engine.trees._wakeups import Wakeups

__all__ = [
    "ATTEMPT",
    "ATTEMPT_FAILED",
    "TOOL_STEP",
    "WAITING",
    "ApplicationHooks",
    "ExecutionFrame",
    "Held",
    "Lease",
    "PassChanges",
    "PassEnd",
    "PassStart",
    "PassState",
    "PassWrites",
    "TreeReader",
    "Waiting",
    "Wakeups",
    "acquire_lease",
    "attempt_key",
    "check_budgets",
    "commit_acquiring_lease",
    "count_spend",
    "earliest",
    "execution_context",
    "failed_key",
    "failure_record",
    "intent_of",
    "interrupted_key",
    "maybe_await",
    "run_within",
    "step_context",
    "stored_error",
]
