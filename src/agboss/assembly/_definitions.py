"""A checked application, as assembly gives it: `Assembly` and what it is made of."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, TypeVar

from agboss.assembly._container import Container
from agboss.components import (
    AgentSpec,
    ApplicationSpec,
    ChannelRoleSpec,
    ComponentSpec,
    LadderStep,
    ToolSpec,
    WorkflowSpec,
)
from agboss.enums import OnExpiry, PauseAnswerer
from agboss.flow import FlowGraph
from agboss.pii import PiiOutside, PiiPolicy
from agboss.policies import DEFAULT_MODEL_RETRY, RetryPolicy
from agboss.store.protocol import Served

__all__ = ["Assembly", "SpecT", "ToolChannel", "WorkflowDefinition"]

SpecT = TypeVar("SpecT", bound=ComponentSpec)


@dataclass(frozen=True, slots=True)
class WorkflowDefinition:
    """A workflow of the application with its compiled flow.

    Attributes:
        cls: The ``@workflow`` class.
        spec: Its spec.
        graph: Its compiled flow.
        parts: What its journal depends on, part by part (``flow``, ``agent:<name>``,
            ``tool:<name>``, ``role:<name>``, ``workflow:<child>``), each with its digest.
        fingerprint: One digest of every part, stored with each execution it begins: the
            same fingerprint, the same journal semantics.
    """

    cls: type[Any]
    spec: WorkflowSpec
    graph: FlowGraph
    parts: Mapping[str, str] = field(default_factory=dict)
    fingerprint: str = ""


@dataclass(frozen=True, slots=True)
class ToolChannel:
    """The channel that approves a tool's calls, as the tool names it.

    Attributes:
        named: The class the tool names (a role, or a concrete channel named as is).
        implementation: The concrete ``@channel`` class whose ``send`` runs.
        name: The channel's name as pauses report it (the role's name for a role).
        answered_by: Who may answer its pauses.
        role: The role's spec, when the tool names a role.
        expires_after: How long its questions wait (the tool's, else the role's; ``None``:
            as long as it takes).
        on_expiry: What the deadline decides.
        ladder: Its role's ladder: what happens to a question before its deadline.
        escalations: The channels its ladder's `Escalate` steps ask instead, each with the
            question's deadline, ``on_expiry`` and ladder.
        handoffs: The channels a person may hand its questions to (`App.reassign`): every
            other role of the application that approves the same DTO and has one
            implementation, each with the question's deadline, ``on_expiry``, ladder and
            escalations.
    """

    named: type[Any]
    implementation: type[Any]
    name: str
    answered_by: PauseAnswerer
    role: ChannelRoleSpec | None
    expires_after: timedelta | None = None
    on_expiry: OnExpiry = OnExpiry.REJECT
    ladder: tuple[LadderStep, ...] = ()
    escalations: tuple[ToolChannel, ...] = ()
    handoffs: tuple[ToolChannel, ...] = ()

    def asking(self, channel: str) -> ToolChannel:
        """The channel a pause asked under the name ``channel`` is answered through: this one,
        or the one its ladder escalated the question to, or a person handed it to."""
        if channel == self.name:
            return self
        found = next(
            (each for each in (*self.escalations, *self.handoffs) if each.name == channel), None
        )
        return self if found is None else found  # a role this build no longer asks

    def handed_to(self, role: type[Any] | str) -> ToolChannel | None:
        """The channel its questions are asked through when handed to ``role`` (the role's
        class, or its name): this one, or one of `handoffs`; ``None`` if none is."""
        return next(
            (each for each in (self, *self.handoffs) if each.named is role or each.name == role),
            None,
        )

    def escalated_to(self, role: type[Any]) -> ToolChannel | None:
        """The channel an `Escalate` step to ``role`` asks, if the application has it."""
        return next((each for each in self.escalations if each.named is role), None)


@dataclass(frozen=True, slots=True)
class Assembly:
    """A checked application: every component by class, the flows compiled, the container."""

    application: type[Any]
    spec: ApplicationSpec
    workflows: dict[type[Any], WorkflowDefinition]
    workflows_by_name: dict[str, WorkflowDefinition]
    components: dict[type[Any], ComponentSpec]
    tool_channels: dict[type[Any], ToolChannel]
    container: Container
    agent_tools: dict[str, dict[str, tuple[type[Any], ToolSpec]]] = field(default_factory=dict)
    """Each agent's tools by name, by the agent's name (indexed once, read on every turn)."""
    declares_budgets: bool = False
    """Whether the application or any workflow declares a budget (else nothing is checked)."""
    error_classes: tuple[type[BaseException], ...] = ()
    """The classes ``.on_join_error(...)`` names: a stored failure of one is read back as it."""
    pii_outside: PiiOutside = field(default_factory=lambda: PiiOutside({}, {}))
    """Each workflow's PII policy, and what masks the application's pending asks, records and
    channels' asks with it."""
    served: tuple[Served, ...] = ()
    """The trees this build moves, by their root's workflow and version: its own, and those
    its workflows continue (`Served`)."""

    def pii_policy(self, workflow: str) -> PiiPolicy:
        """The PII rules in force in an execution of a workflow."""
        return self.pii_outside.policy(workflow)

    def component_spec(self, cls: type[Any], spec_type: type[SpecT]) -> SpecT:
        """The spec of a component of this application."""
        found = self.components[cls]
        assert isinstance(found, spec_type)
        return found

    def tools_by_name(self, agent: AgentSpec) -> dict[str, tuple[type[Any], ToolSpec]]:
        """An agent's tools, by name."""
        return self.agent_tools[agent.name]

    def model_retry(self, agent: AgentSpec) -> RetryPolicy:
        """How an agent's model calls are tried again: its own policy, else the
        application's, else `DEFAULT_MODEL_RETRY`."""
        return agent.retry_policy or self.spec.retry_policy or DEFAULT_MODEL_RETRY

    def tool_definition(self, tool: str) -> str | None:
        """A tool's part of the fingerprints of the workflows that run it (``tool:<name>``: its
        schemas, channel and ``on_interrupted``), as this build defines it; ``None`` when no
        workflow runs it."""
        part = f"tool:{tool}"
        return next(
            (d.parts[part] for d in self.workflows_by_name.values() if part in d.parts), None
        )

    @property
    def continues_by_mapping(self) -> bool:
        """Whether a workflow of this build moves the waiting trees of an earlier version to
        itself by a continuation (``@workflow(continuation=...)``)."""
        return any(d.spec.continuation is not None for d in self.workflows_by_name.values())

    def serves(self, workflow: str, version: str) -> bool:
        """Whether this build moves a tree whose root began as ``workflow`` ``version``."""
        return any(each.workflow == workflow and each.serves(version) for each in self.served)

    def tool_named(self, agent: str, tool: str) -> tuple[type[Any], ToolSpec] | None:
        """An agent's tool by the names a pause records; ``None`` when this build has no such
        agent or tool (a pause stored by an earlier version)."""
        return self.agent_tools.get(agent, {}).get(tool)
