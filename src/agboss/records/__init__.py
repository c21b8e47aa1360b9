"""Execution records and the pause audit trail."""

from agboss.records._decision_log import (
    DecisionChain,
    DecisionEntry,
    DecisionEvent,
    LoggedDecision,
    chain_digest,
    chain_genesis,
)
from agboss.records._delegations import Delegation, new_delegation_id
from agboss.records._deploys import (
    NOT_SERVED,
    BlockedVersion,
    ContinuationRecord,
    ContinuedCall,
    DeployCheck,
    PendingCall,
    StrandedExecution,
    StrandedPage,
)
from agboss.records._digests import SHOWN_DIGEST, call_digest, shown_digest
from agboss.records._model import (
    ChildExecutionRecord,
    ComponentRecord,
    ExecutionRecord,
    FailureRecord,
    LedgerRecord,
    RetryRecord,
    Spend,
    StepRecord,
    ToolCallRecord,
)
from agboss.records._outputs import ExecutionOutput, PendingPause
from agboss.records._pauses import (
    ExecutionPauseEvent,
    ExecutionResumeEvent,
    PauseAnswer,
    PauseAnswerRecord,
    PauseRecord,
    Reassignment,
    new_pause_id,
    secret_of,
    shown_pause_id,
)
from agboss.records._readings import DecisionReading
from agboss.records._refs import is_pause_ref, pause_ref
from agboss.records._standing import STANDING_RESPONDER, StandingDecision, new_decision_id
from agboss.records._votes import PauseVote, PauseVotes

__all__ = [
    "NOT_SERVED",
    "SHOWN_DIGEST",
    "STANDING_RESPONDER",
    "BlockedVersion",
    "ChildExecutionRecord",
    "ComponentRecord",
    "ContinuationRecord",
    "ContinuedCall",
    "DecisionChain",
    "DecisionEntry",
    "DecisionEvent",
    "DecisionReading",
    "Delegation",
    "DeployCheck",
    "ExecutionOutput",
    "ExecutionPauseEvent",
    "ExecutionRecord",
    "ExecutionResumeEvent",
    "FailureRecord",
    "LedgerRecord",
    "LoggedDecision",
    "PauseAnswer",
    "PauseAnswerRecord",
    "PauseRecord",
    "PauseVote",
    "PauseVotes",
    "PendingCall",
    "PendingPause",
    "Reassignment",
    "RetryRecord",
    "Spend",
    "StandingDecision",
    "StepRecord",
    "StrandedExecution",
    "StrandedPage",
    "ToolCallRecord",
    "call_digest",
    "chain_digest",
    "chain_genesis",
    "is_pause_ref",
    "new_decision_id",
    "new_delegation_id",
    "new_pause_id",
    "pause_ref",
    "secret_of",
    "shown_digest",
    "shown_pause_id",
]
