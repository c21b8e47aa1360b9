"""The durable engine: passes over execution trees, journal replay, leases and recovery.

Its rooms, from the ground up: `instance`, `trees`, `questions`, `steps`, `runs`; the pass
(`_pass.py`) and the engine's doors (`_engine.py`) on top. Each exports from its `__init__`
what the others use, and this package what the rest of agboss uses.
"""

from agboss.engine._continuing import unmappable
from agboss.engine._engine import Engine
from agboss.engine.instance import (
    LEASE_TTL,
    RECOVERY_INTERVAL,
    RESUME_TIMEOUT,
    Runtime,
    blocked_versions,
    keep_serving,
    leave,
)
from agboss.engine.questions import (
    Grant,
    Handed,
    Handoff,
    Interpretation,
    bound_decision,
    call_said,
    cancel_thread,
    claim_question,
    cut_decisions,
    emit_pause_event,
    grant,
    handed_to,
    interpret_reply,
    lacking,
    list_standing,
    mark_shown,
    release_question,
    revoke,
    shows_answers,
    tool_of,
    validate_decision,
)
from agboss.engine.trees import TOOL_STEP, ExecutionFrame, Held, failure_record, intent_of

__all__ = [
    "LEASE_TTL",
    "RECOVERY_INTERVAL",
    "RESUME_TIMEOUT",
    "TOOL_STEP",
    "Engine",
    "ExecutionFrame",
    "Grant",
    "Handed",
    "Handoff",
    "Held",
    "Interpretation",
    "Runtime",
    "blocked_versions",
    "bound_decision",
    "call_said",
    "cancel_thread",
    "claim_question",
    "cut_decisions",
    "emit_pause_event",
    "failure_record",
    "grant",
    "handed_to",
    "intent_of",
    "interpret_reply",
    "keep_serving",
    "lacking",
    "leave",
    "list_standing",
    "mark_shown",
    "release_question",
    "revoke",
    "shows_answers",
    "tool_of",
    "unmappable",
    "validate_decision",
]
