"""Questions: asking a channel and its escalation ladder, quorums and votes, claiming and
reassigning, validating and interpreting a decision, withdrawing the questions a tree no
longer needs, cancelling a thread, standing decisions, and the call an interrupted attempt
left in doubt.
"""

from agboss.engine.questions._asking import Approval, ask_approval, spoken
from agboss.engine.questions._ballots import cast_vote
from agboss.engine.questions._cancelling import cancel_thread
from agboss.engine.questions._channels import (
    TOOL_INPUT,
    TOOL_INTERRUPTED,
    emit_pause_event,
    handed_to,
    handoffs_of,
    lacking,
    not_served,
    question_spec,
    shows_answers,
    tool_of,
)
from agboss.engine.questions._claiming import claim_question, release_question
from agboss.engine.questions._cut_off import CallSaid, call_said, said_of_cut_off
from agboss.engine.questions._decisions import (
    bound_decision,
    decided_digest,
    not_as_decided,
    validate_decision,
)
from agboss.engine.questions._delegating import (
    DelegationGrant,
    delegate,
    delegated_by,
    list_delegations,
    revoke_delegation,
)
from agboss.engine.questions._interpreting import Interpretation, interpret_reply
from agboss.engine.questions._reassigning import Handed, Handoff, reassign_question
from agboss.engine.questions._retention import cut_decisions
from agboss.engine.questions._standing import Grant, grant, list_standing, revoke
from agboss.engine.questions._withdrawing import mark_shown, tell_owed_withdrawals, withdraw_closed

__all__ = [
    "TOOL_INPUT",
    "TOOL_INTERRUPTED",
    "Approval",
    "CallSaid",
    "DelegationGrant",
    "Grant",
    "Handed",
    "Handoff",
    "Interpretation",
    "ask_approval",
    "bound_decision",
    "call_said",
    "cancel_thread",
    "cast_vote",
    "claim_question",
    "cut_decisions",
    "decided_digest",
    "delegate",
    "delegated_by",
    "emit_pause_event",
    "grant",
    "handed_to",
    "handoffs_of",
    "interpret_reply",
    "lacking",
    "list_delegations",
    "list_standing",
    "mark_shown",
    "not_as_decided",
    "not_served",
    "question_spec",
    "reassign_question",
    "release_question",
    "revoke",
    "revoke_delegation",
    "said_of_cut_off",
    "shows_answers",
    "spoken",
    "tell_owed_withdrawals",
    "tool_of",
    "validate_decision",
    "withdraw_closed",
]
