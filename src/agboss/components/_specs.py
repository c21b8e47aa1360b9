"""The frozen definitions a component decorator attaches to its class.

A decorator stores its spec in the class's own ``__dict__`` under `SPEC_ATTRIBUTE` and does
nothing else: no registry, no validation. `App.create` reads the specs of every component that
is reachable from an application and checks them all at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar, overload

from pydantic import BaseModel

from agboss.components._claims import Claims
from agboss.components._ladder import LadderStep
from agboss.components._quorum import Quorum
from agboss.enums import DecidedBy, OnExpiry, OnInterrupted, PauseAnswerer
from agboss.inputs import InputLimits
from agboss.mcp import McpServer
from agboss.pii import PiiRule
from agboss.policies import DEFAULT_HISTORY, History, RetryPolicy
from agboss.records import PendingCall

if TYPE_CHECKING:
    from agboss.flow import Flow
    from agboss.policies import Budget

__all__ = [
    "SPEC_ATTRIBUTE",
    "AgentSpec",
    "ApplicationSpec",
    "ChannelRoleSpec",
    "ChannelSpec",
    "ComponentKind",
    "ComponentSpec",
    "JoinComponentSpec",
    "ReplyInterpreterSpec",
    "ToolSpec",
    "WorkflowFinishSpec",
    "WorkflowSpec",
    "WorkflowStartSpec",
    "interrupted_default",
    "spec_of",
]

SPEC_ATTRIBUTE = "__agboss_spec__"

SpecT = TypeVar("SpecT", bound="ComponentSpec")


class ComponentKind(StrEnum):
    """The kinds of components; each kind's names end with its suffix."""

    AGENT = "agent"
    TOOL = "tool"
    CHANNEL = "channel"
    CHANNEL_ROLE = "channel-role"
    REPLY_INTERPRETER = "reply-interpreter"
    WORKFLOW = "workflow"
    WORKFLOW_START = "workflow-start"
    WORKFLOW_FINISH = "workflow-finish"
    JOIN = "join"
    APPLICATION = "application"

    @property
    def suffix(self) -> str:
        """The suffix every name of this kind ends with."""
        return "-channel" if self is ComponentKind.CHANNEL_ROLE else f"-{self.value}"

    @property
    def decorator(self) -> str:
        """The decorator that declares this kind."""
        return "@" + self.value.replace("-", "_")


@dataclass(frozen=True, slots=True, kw_only=True)
class ComponentSpec:
    """What every component has: a kind, a name and a description."""

    kind: ComponentKind
    name: str
    description: str
    deps: tuple[type[Any], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentSpec(ComponentSpec):
    """An agent: a model with a prompt and tools, answering with its output DTO."""

    prompt: str
    model: str
    tools: tuple[type[Any] | McpServer, ...] = ()
    input: type[BaseModel] | None = None
    output: type[BaseModel] | None = None
    max_tool_loop_iterations: int = 10
    max_validation_attempts: int = 3
    history: History = DEFAULT_HISTORY
    retry_policy: RetryPolicy | None = None
    """Its model calls' (``None``: the application's, else `DEFAULT_MODEL_RETRY`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec(ComponentSpec):
    """A tool an agent's model may call; with a channel, a call waits for a decision."""

    input: type[BaseModel]
    output: type[BaseModel]
    channel: type[Any] | None = None
    timeout: timedelta | None = None
    on_interrupted: OnInterrupted = OnInterrupted.RERUN
    retry_policy: RetryPolicy | None = None
    """Its runs' (``None``: a failure fails the step at once)."""
    expires_after: timedelta | None = None
    """Its questions' deadline, over its channel role's (``None``: the role's)."""
    on_expiry: OnExpiry | None = None
    """What its questions' deadline decides, over its role's (``None``: the role's)."""


def interrupted_default(declared: OnInterrupted | None, channel: object) -> OnInterrupted:
    """What a tool's interrupted call does: as declared, else asked of its channel if it has
    one (a person approved it once), else run again."""
    if declared is not None:
        return declared
    return OnInterrupted.RERUN if channel is None else OnInterrupted.ASK


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelSpec(ComponentSpec):
    """A concrete channel: the implementation of a role, or a channel a tool names as is."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelRoleSpec(ComponentSpec):
    """A channel role: what it approves (or asks and answers), who may answer, and who reads
    free-text replies."""

    answered_by: PauseAnswerer
    approves: type[BaseModel] | None = None
    asks: type[BaseModel] | None = None
    answers: type[BaseModel] | None = None
    reply_interpreter: type[Any] | None = None
    expires_after: timedelta | None = None
    """How long its questions wait for an answer (``None``: as long as it takes)."""
    on_expiry: OnExpiry = OnExpiry.REJECT
    """What a question's deadline decides when nobody answered."""
    ladder: tuple[LadderStep, ...] = ()
    """What happens to a question nobody answered yet, at given times before its deadline."""
    approvals: Quorum | int | None = None
    """How many approvals one question needs, and from whom (``None``: one answer decides)."""
    distinct_from_owner: bool = False
    """The thread's owner may not answer (nor vote on) its questions."""
    claims: Claims = field(default_factory=Claims)
    """How its questions are claimed: how long a claim holds, whether others answer."""

    @property
    def quorum(self) -> Quorum | None:
        """Its ``approvals`` as a `Quorum` (a number is a count from anyone who may answer)."""
        if isinstance(self.approvals, int):
            return Quorum(self.approvals)
        return self.approvals


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyInterpreterSpec(ComponentSpec):
    """Reads a free-text reply to a pause as the role's answer."""

    decided_by: DecidedBy
    model: str | None = None
    prompt: str | None = None
    prompt_urls: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkflowStartSpec(ComponentSpec):
    """Where a workflow begins: the DTO it is started with."""

    input: type[BaseModel]


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkflowFinishSpec(ComponentSpec):
    """Where a workflow ends: the DTO it returns."""

    output: type[BaseModel]


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinComponentSpec(ComponentSpec):
    """A join: brings a launch's branches together into its output DTO."""

    output: type[BaseModel]


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkflowSpec(ComponentSpec):
    """A workflow: a versioned flow of nodes from a start to a finish."""

    version: str
    flow: tuple[Flow, ...]
    budget: Budget | None = None
    pii: tuple[PiiRule, ...] = ()
    continues: tuple[str, ...] = ()
    """The earlier versions whose waiting trees this build moves too: each exact
    (``"1.0.0"``) or a prefix ending in ``*`` (``"1.0.*"``)."""
    continuation: Callable[[PendingCall], PendingCall] | None = None
    """Maps each waiting call of a tree of a version it continues to this build, when the
    tree next moves on it: the tree then runs under this version (``None``: the trees of
    versions it continues run as they began)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApplicationSpec(ComponentSpec):
    """An application: its workflows, its channels, and its pause policies."""

    workflows: tuple[type[Any], ...]
    channels: tuple[type[Any], ...] = ()
    pause_record_retention: timedelta = field(default=timedelta(hours=24))
    dependencies: tuple[Any, ...] = ()
    budget: Budget | None = None
    limits: InputLimits = field(default_factory=InputLimits)
    pii: tuple[PiiRule, ...] = ()
    mcp_servers: tuple[McpServer, ...] = ()
    retry_policy: RetryPolicy | None = None
    """Its agents' model calls' unless an agent declares one (``None``:
    `DEFAULT_MODEL_RETRY`)."""


@overload
def spec_of(cls: object) -> ComponentSpec | None: ...
@overload
def spec_of(cls: object, spec_type: type[SpecT]) -> SpecT | None: ...
def spec_of(cls: object, spec_type: type[ComponentSpec] = ComponentSpec) -> ComponentSpec | None:
    """The spec a decorator attached to exactly this class (not one inherited from a base).

    Args:
        cls: The class to read.
        spec_type: When given, a spec of another type reads as ``None``.
    """
    if not isinstance(cls, type):
        return None
    spec = cls.__dict__.get(SPEC_ATTRIBUTE)
    return spec if isinstance(spec, spec_type) else None
