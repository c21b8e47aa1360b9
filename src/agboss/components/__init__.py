"""Components: the decorators, the specs they attach, and the base classes handlers implement."""

from agboss.components._channels import (
    ApprovalAsk,
    ChannelAnswered,
    ChannelAsk,
    ChannelHandler,
    ChannelOf,
    ChannelOutcome,
    ChannelReminder,
    ChannelWithdrawal,
)
from agboss.components._decorators import (
    agent,
    application,
    channel,
    channel_role,
    join,
    reply_interpreter,
    tool,
    workflow,
    workflow_finish,
    workflow_start,
)
from agboss.components._handlers import ToolHandler
from agboss.components._joins import BranchResult, JoinHandler, JoinInput, QuorumOutcome
from agboss.components._ladder import Escalate, LadderStep, Remind
from agboss.components._quorum import Quorum, QuorumAsk
from agboss.components._specs import ComponentKind, spec_of

__all__ = [
    "ApprovalAsk",
    "BranchResult",
    "ChannelAnswered",
    "ChannelAsk",
    "ChannelHandler",
    "ChannelOf",
    "ChannelOutcome",
    "ChannelReminder",
    "ChannelWithdrawal",
    "ComponentKind",
    "Escalate",
    "JoinHandler",
    "JoinInput",
    "LadderStep",
    "Quorum",
    "QuorumAsk",
    "QuorumOutcome",
    "Remind",
    "ToolHandler",
    "agent",
    "application",
    "channel",
    "channel_role",
    "join",
    "reply_interpreter",
    "spec_of",
    "tool",
    "workflow",
    "workflow_finish",
    "workflow_start",
]
