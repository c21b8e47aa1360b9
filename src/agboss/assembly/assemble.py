"""Assembly: from an ``@application`` class to a checked `Assembly`, every rule at once.

The assembler walks everything reachable from the application (its workflows, their flows'
components, agents' tools, tools' channels, roles' interpreters, the listed channels), checks
every rule against all of them, and raises one `AssemblyError` listing every violation.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from agboss.assembly.container import Container, Provide
from agboss.components.channels import ChannelHandler
from agboss.components.handlers import ToolHandler
from agboss.components.specs import (
    AgentSpec,
    ApplicationSpec,
    ChannelRoleSpec,
    ChannelSpec,
    ComponentKind,
    ComponentSpec,
    JoinComponentSpec,
    ReplyInterpreterSpec,
    ToolSpec,
    WorkflowFinishSpec,
    WorkflowSpec,
    WorkflowStartSpec,
    spec_of,
)
from agboss.enums import DecidedBy, PauseAnswerer
from agboss.errors import AssemblyError, AssemblyViolation
from agboss.flow.dsl import Flow, LaunchSpec, StepKind
from agboss.flow.graph import CompiledBranch, CompiledLaunch, FlowGraph, FlowNode
from agboss.interpreters import ReplyInterpreterHandler
from agboss.models.provider import ModelResolver
from agboss.pii.outside import PiiOutside
from agboss.pii.policy import PiiPolicy
from agboss.pii.rules import PiiRule

__all__ = ["Assembly", "ToolChannel", "WorkflowDefinition", "assemble"]

SpecT = TypeVar("SpecT", bound=ComponentSpec)
_KEBAB = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


@dataclass(frozen=True, slots=True)
class WorkflowDefinition:
    """A workflow of the application with its compiled flow."""

    cls: type[Any]
    spec: WorkflowSpec
    graph: FlowGraph


@dataclass(frozen=True, slots=True)
class ToolChannel:
    """The channel that approves a tool's calls, as the tool names it.

    Attributes:
        named: The class the tool names (a role, or a concrete channel named as is).
        implementation: The concrete ``@channel`` class whose ``send`` runs.
        name: The channel's name as pauses report it (the role's name for a role).
        answered_by: Who may answer its pauses.
        role: The role's spec, when the tool names a role.
    """

    named: type[Any]
    implementation: type[Any]
    name: str
    answered_by: PauseAnswerer
    role: ChannelRoleSpec | None


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

    def tool_named(self, agent: str, tool: str) -> tuple[type[Any], ToolSpec] | None:
        """An agent's tool by the names a pause records; ``None`` when this build has no such
        agent or tool (a pause stored by an earlier version)."""
        return self.agent_tools.get(agent, {}).get(tool)


def _handler_types(cls: type[Any]) -> tuple[object, object] | None:
    """The ``(In, Out)`` a class gives `ToolHandler`, where it names them."""
    for klass in cls.__mro__:
        for base in getattr(klass, "__orig_bases__", ()):
            if typing.get_origin(base) is ToolHandler:
                args = typing.get_args(base)
                if len(args) == 2:
                    return args[0], args[1]
    return None


@dataclass
class _Assembler:
    application: type[Any]
    resolver: ModelResolver
    violations: list[AssemblyViolation] = field(default_factory=list)
    components: dict[type[Any], ComponentSpec] = field(default_factory=dict)
    definitions: dict[type[Any], WorkflowDefinition | None] = field(default_factory=dict)
    compiling: set[type[Any]] = field(default_factory=set)
    checked_tools: set[type[Any]] = field(default_factory=set)

    def violate(self, rule: str, component: str, message: str) -> None:
        self.violations.append(AssemblyViolation(rule, component, message))

    def take(
        self, cls: object, spec_type: type[SpecT], kind: ComponentKind, where: str
    ) -> SpecT | None:
        """The spec of a referenced class, recording it; a violation if it is not that kind."""
        spec = spec_of(cls, spec_type)
        label = getattr(cls, "__qualname__", repr(cls))
        if spec is None:
            self.violate(
                "component.wrong-kind",
                label,
                f"is listed in {where} but is not a {kind.decorator} class; "
                f"decorate it with {kind.decorator}(...) or remove it from {where}",
            )
            return None
        assert isinstance(cls, type)
        if cls not in self.components:
            self.components[cls] = spec
        return spec

    # ---- the walk --------------------------------------------------------------------

    def run(self) -> Assembly:
        app_spec = spec_of(self.application, ApplicationSpec)
        if app_spec is None:
            label = getattr(self.application, "__qualname__", repr(self.application))
            raise AssemblyError(
                label,
                [
                    AssemblyViolation(
                        "component.wrong-kind",
                        label,
                        "App.create takes an @application class; decorate it with "
                        "@application(name=..., workflows=[...])",
                    )
                ],
            )
        self.components[self.application] = app_spec
        if not app_spec.workflows:
            self.violate(
                "application.no-workflows",
                app_spec.name,
                "lists no workflows; add them with @application(workflows=[...])",
            )
        workflows: dict[type[Any], WorkflowDefinition] = {}
        for cls in app_spec.workflows:
            definition = self.definition(cls, "workflows=[...]")
            if definition is not None:
                workflows[cls] = definition
        for cls in app_spec.channels:
            self.take(cls, ChannelSpec, ComponentKind.CHANNEL, "channels=[...]")
        tool_channels = self.check_channels(app_spec)
        self.check_names()
        self.check_pii(app_spec.name, app_spec.pii)
        for definition in self.definitions.values():
            if definition is not None:
                self.check_pii(definition.spec.name, definition.spec.pii)
        self.check_models()
        self.check_handlers()
        container = Container(self.registrations(app_spec))
        self.violations.extend(container.check(self.components))
        if self.violations:
            raise AssemblyError(app_spec.name, self.violations)
        agent_tools = {
            spec.name: {
                tool_spec.name: (tool, tool_spec)
                for tool in spec.tools
                if isinstance(tool_spec := self.components[tool], ToolSpec)
            }
            for spec in self.components.values()
            if isinstance(spec, AgentSpec)
        }
        pii = {
            d.spec.name: PiiPolicy.of(app_spec.pii, d.spec.pii)
            for d in self.definitions.values()
            if d is not None
        }
        return Assembly(
            application=self.application,
            spec=app_spec,
            workflows=workflows,
            workflows_by_name={d.spec.name: d for d in self.definitions.values() if d is not None},
            components=self.components,
            tool_channels=tool_channels,
            container=container,
            agent_tools=agent_tools,
            pii_outside=PiiOutside(
                {
                    agent: {name: spec.input for name, (_, spec) in tools.items()}
                    for agent, tools in agent_tools.items()
                },
                pii,
            ),
            declares_budgets=app_spec.budget is not None
            or any(d is not None and d.spec.budget is not None for d in self.definitions.values()),
            error_classes=tuple(
                dict.fromkeys(
                    error
                    for definition in self.definitions.values()
                    if definition is not None
                    for node in definition.graph.nodes.values()
                    if node.launch is not None
                    for error, _ in node.launch.join.error_handlers
                )
            ),
        )

    def registrations(self, app_spec: ApplicationSpec) -> list[Provide]:
        registrations: list[Provide] = []
        for item in app_spec.dependencies:
            if isinstance(item, Provide):
                registrations.append(item)
            else:
                self.violate(
                    "container.not-a-registration",
                    app_spec.name,
                    f"dependencies=[...] holds {item!r}; list provide(Type, ...) registrations",
                )
        return registrations

    # ---- flows ---------------------------------------------------------------------

    def definition(self, cls: type[Any], where: str) -> WorkflowDefinition | None:
        """A workflow's compiled definition (compiled once, also as a child)."""
        if cls in self.definitions:
            return self.definitions[cls]
        spec = self.take(cls, WorkflowSpec, ComponentKind.WORKFLOW, where)
        if spec is None:
            return None
        if cls in self.compiling:
            self.violate(
                "flow.recursive-workflow",
                spec.name,
                "runs itself as a child, directly or through others; a workflow tree is finite",
            )
            return None
        self.compiling.add(cls)
        graph = self.compile(spec)
        self.compiling.discard(cls)
        definition = None if graph is None else WorkflowDefinition(cls, spec, graph)
        self.definitions[cls] = definition
        return definition

    def compile(self, workflow: WorkflowSpec) -> FlowGraph | None:
        flows = [item for item in workflow.flow if isinstance(item, Flow)]
        unfinished = [item for item in workflow.flow if not isinstance(item, Flow)]
        if unfinished or len(flows) != 1:
            self.violate(
                "flow.shape",
                workflow.name,
                "flow=[...] must hold exactly one chain from start(...) to .to_finish(...)"
                + (" (a chain does not end with .to_finish(...))" if unfinished else ""),
            )
            return None
        flow = flows[0]
        where = f"the flow of {workflow.name}"
        specs: list[ComponentSpec | None] = []
        for step in flow.steps:
            if step.kind is StepKind.START:
                specs.append(
                    self.take(
                        step.component, WorkflowStartSpec, ComponentKind.WORKFLOW_START, where
                    )
                )
            elif step.kind is StepKind.AGENT:
                specs.append(self.take_agent(step.component, where))
            elif step.kind is StepKind.WORKFLOW:
                assert step.component is not None
                child = self.definition(step.component, where)
                specs.append(None if child is None else child.spec)
            elif step.kind is StepKind.LAUNCH:
                specs.append(self.take_launch(workflow, step.launch))
            else:
                specs.append(
                    self.take(
                        step.component, WorkflowFinishSpec, ComponentKind.WORKFLOW_FINISH, where
                    )
                )
        if any(spec is None for spec in specs):
            return None
        return self.type_flow(workflow, flow, [s for s in specs if s is not None])

    def take_agent(self, cls: object, where: str) -> AgentSpec | None:
        agent = self.take(cls, AgentSpec, ComponentKind.AGENT, where)
        if agent is not None:
            self.take_tools(agent)
        return agent

    def take_launch(
        self, workflow: WorkflowSpec, launch: LaunchSpec | None
    ) -> ComponentSpec | None:
        """Checks a launch's components and join; the join's spec stands for the launch."""
        assert launch is not None
        assert launch.join is not None
        where = f"a launch of {workflow.name}"
        ok = True
        for component in launch.components:
            if launch.workflows:
                ok = self.definition(component, where) is not None and ok
            else:
                ok = self.take_agent(component, where) is not None and ok
        if not launch.components:
            self.violate("flow.empty-launch", workflow.name, "a launch names no branches")
            ok = False
        if launch.max_concurrency is not None and launch.max_concurrency < 1:
            self.violate(
                "flow.max-concurrency",
                workflow.name,
                f"max_concurrency={launch.max_concurrency}; give 1 or more, or None for all",
            )
            ok = False
        join = self.take(launch.join.handler, JoinComponentSpec, ComponentKind.JOIN, where)
        handlers = [
            self.take(handler, JoinComponentSpec, ComponentKind.JOIN, f"on_join_error of {where}")
            for _, handler in launch.join.error_handlers
        ]
        if join is None or any(handler is None for handler in handlers):
            return None
        for handler in handlers:
            assert handler is not None
            if handler.output is not join.output:
                self.violate(
                    "flow.type-mismatch",
                    workflow.name,
                    f"the error handler {handler.name} returns {handler.output.__name__} but "
                    f"the join {join.name} returns {join.output.__name__}; they must agree",
                )
                ok = False
        for group in launch.join.groups:
            strangers = [c for c in group.branches if c not in launch.components]
            if strangers or group.min < 1:
                self.violate(
                    "flow.quorum-group",
                    workflow.name,
                    f"quorum group {group.name!r} must name branches of its launch and need "
                    "at least one of them",
                )
                ok = False
        if launch.join.quorum is not None and not 1 <= launch.join.quorum <= _max_branches(launch):
            self.violate(
                "flow.quorum",
                workflow.name,
                f"join_quorum(min={launch.join.quorum}) can never be reached by "
                f"{len(launch.components)} branches",
            )
            ok = False
        return join if ok else None

    def type_flow(
        self, workflow: WorkflowSpec, flow: Flow, specs: list[ComponentSpec]
    ) -> FlowGraph | None:
        start = specs[0]
        assert isinstance(start, WorkflowStartSpec)
        current: type[BaseModel] = start.input
        ok = True
        if flow.returns is not None and flow.returns is not start.input:
            self.violate(
                "flow.type-mismatch",
                workflow.name,
                f"start({start.name}).returns({flow.returns.__name__}) but the start takes "
                f"{start.input.__name__}; they must be the same DTO",
            )
            ok = False
        ids = [f"{index}:{spec.name}" for index, spec in enumerate(specs)]
        nodes: dict[str, FlowNode] = {}
        for index, (step, spec) in enumerate(zip(flow.steps, specs, strict=True)):
            following = specs[index + 1] if index + 1 < len(specs) else None
            node_input = current
            launch: CompiledLaunch | None = None
            if isinstance(spec, AgentSpec):
                ok = self.check_input(workflow, spec.name, spec.input, current) and ok
                output = spec.output or _takes(following)
                if output is None:
                    self.violate(
                        "flow.type-unknown",
                        workflow.name,
                        f"what {spec.name} answers with is not known; declare "
                        "@agent(output=...) or the next agent's input=",
                    )
                    ok = False
                    output = current
                current = output
            elif isinstance(spec, WorkflowSpec):
                child = self.definitions[step.component]  # type: ignore[index]
                assert child is not None
                child_input = child.graph.start_node.input
                ok = self.check_input(workflow, spec.name, child_input, current) and ok
                current = child.graph.finish_output
            elif isinstance(spec, JoinComponentSpec):
                assert step.launch is not None
                launch = self.compile_launch(workflow, step.launch, current)
                ok = launch is not None and ok
                current = spec.output
            elif isinstance(spec, WorkflowFinishSpec) and spec.output is not current:
                self.violate(
                    "flow.type-mismatch",
                    workflow.name,
                    f"{spec.name} returns {spec.output.__name__} but the node before it "
                    f"returns {current.__name__}",
                )
                ok = False
            nodes[ids[index]] = FlowNode(
                node_id=ids[index],
                kind=step.kind,
                component=step.component,
                name=spec.name,
                input=node_input,
                output=current,
                next=ids[index + 1] if index + 1 < len(ids) else None,
                launch=launch,
            )
        return FlowGraph(start=ids[0], nodes=nodes) if ok else None

    def check_input(
        self,
        workflow: WorkflowSpec,
        name: str,
        takes: type[BaseModel] | None,
        given: type[BaseModel],
    ) -> bool:
        if takes is None or takes is given:
            return True
        self.violate(
            "flow.type-mismatch",
            workflow.name,
            f"{name} takes {takes.__name__} but the node before it returns {given.__name__}",
        )
        return False

    def compile_launch(
        self, workflow: WorkflowSpec, launch: LaunchSpec, current: type[BaseModel]
    ) -> CompiledLaunch | None:
        item: type[BaseModel] | None = None
        given = current
        if launch.over is not None:
            item = _item_type(current, launch.over)
            if item is None:
                self.violate(
                    "flow.each-over",
                    workflow.name,
                    f"over={launch.over!r} is not a list-of-DTO field of {current.__name__}; "
                    "name a field typed list[SomeDto]",
                )
                return None
            given = item
        ok = True
        branches: list[CompiledBranch] = []
        for component in launch.components:
            if launch.workflows:
                child = self.definitions[component]
                assert child is not None
                ok = (
                    self.check_input(workflow, child.spec.name, child.graph.start_node.input, given)
                    and ok
                )
                branches.append(
                    CompiledBranch(component, child.spec.name, True, child.graph.finish_output)
                )
                continue
            agent = self.components[component]
            assert isinstance(agent, AgentSpec)
            ok = self.check_input(workflow, agent.name, agent.input, given) and ok
            if agent.output is None:
                self.violate(
                    "flow.type-unknown",
                    workflow.name,
                    f"{agent.name} runs in a launch, so what it answers with must be declared: "
                    "@agent(output=...)",
                )
                ok = False
                continue
            branches.append(CompiledBranch(component, agent.name, False, agent.output))
        join = launch.join
        assert join is not None
        join_spec = self.components[join.handler]
        if not ok:
            return None
        return CompiledLaunch(
            branches=tuple(branches),
            over=launch.over,
            item=item,
            max_concurrency=launch.max_concurrency,
            failure=launch.failure,
            join=join,
            join_name=join_spec.name,
            groups=join.groups,
        )

    def take_tools(self, agent: AgentSpec) -> None:
        for tool in agent.tools:
            spec = self.take(tool, ToolSpec, ComponentKind.TOOL, f"the tools of {agent.name}")
            if spec is not None and tool not in self.checked_tools:
                self.checked_tools.add(tool)
                self.check_tool_types(tool, spec)
            if spec is not None and spec.channel is not None:
                channel = spec.channel
                if (
                    spec_of(channel, ChannelRoleSpec) is None
                    and spec_of(channel, ChannelSpec) is None
                ):
                    self.violate(
                        "tool.channel-not-a-channel",
                        spec.name,
                        f"channel={getattr(channel, '__qualname__', channel)!r} is neither a "
                        "@channel_role nor a @channel class",
                    )

    def check_pii(self, component: str, rules: tuple[Any, ...]) -> None:
        kinds: set[str] = set()
        for rule in rules:
            if not isinstance(rule, PiiRule):
                self.violate(
                    "pii.not-a-rule",
                    component,
                    f"pii=[...] holds {rule!r}; give PiiRule(kind, replace_with_token() | "
                    "mask() | block_with_refusal()) items",
                )
            elif rule.kind in kinds:
                self.violate(
                    "pii.duplicate-kind",
                    component,
                    f"pii=[...] has two rules for {rule.kind!r}; keep one per kind",
                )
            else:
                kinds.add(rule.kind)

    def check_tool_types(self, tool: type[Any], spec: ToolSpec) -> None:
        """``@tool(input=, output=)`` against the class's ``ToolHandler[In, Out]``: ``run``
        gets the input DTO and its result is checked as the output DTO."""
        declared = _handler_types(tool)
        if declared is None:
            return
        handler_in, handler_out = declared
        if isinstance(handler_in, type) and not issubclass(spec.input, handler_in):
            self.violate(
                "tool.handler-input",
                spec.name,
                f"declares input={spec.input.__name__} but its class is "
                f"ToolHandler[{handler_in.__name__}, ...]: run() would get a "
                f"{spec.input.__name__}",
            )
        if isinstance(handler_out, type) and not issubclass(handler_out, spec.output):
            self.violate(
                "tool.handler-output",
                spec.name,
                f"declares output={spec.output.__name__} but its class is "
                f"ToolHandler[..., {handler_out.__name__}]: run() returns a "
                f"{handler_out.__name__}",
            )

    # ---- channels ------------------------------------------------------------------

    def check_channels(self, app_spec: ApplicationSpec) -> dict[type[Any], ToolChannel]:
        listed = [cls for cls in app_spec.channels if spec_of(cls, ChannelSpec) is not None]
        for cls in listed:  # the roles the listed channels implement take part too
            for base in cls.__mro__[1:]:
                role_spec = spec_of(base, ChannelRoleSpec)
                if role_spec is not None:
                    self.components.setdefault(base, role_spec)
        tool_channels: dict[type[Any], ToolChannel] = {}
        for cls, spec in list(self.components.items()):
            if not isinstance(spec, ToolSpec) or spec.channel is None:
                continue
            named = spec.channel
            role = spec_of(named, ChannelRoleSpec)
            if role is not None:
                self.components.setdefault(named, role)
                if role.approves is None:
                    self.violate(
                        "tool.question-role",
                        spec.name,
                        f"names the question role {role.name}; a tool can only name an "
                        "approval role (approves=...) today",
                    )
                    continue
                if role.approves is not spec.input:
                    self.violate(
                        "channel.approves-mismatch",
                        spec.name,
                        f"takes {spec.input.__name__} but its channel {role.name} approves "
                        f"{role.approves.__name__}; they must be the same DTO",
                    )
                implementations = [c for c in listed if issubclass(c, named)]
                if not implementations:
                    self.violate(
                        "channel.role-unimplemented",
                        role.name,
                        f"{spec.name} asks it, but no @channel in channels=[...] implements it; "
                        f"add a @channel class that subclasses {named.__qualname__}",
                    )
                    continue
                if len(implementations) > 1:
                    names = ", ".join(spec_of(c, ChannelSpec).name for c in implementations)  # type: ignore[union-attr]
                    self.violate(
                        "channel.role-ambiguous",
                        role.name,
                        f"is implemented by {len(implementations)} channels ({names}); one "
                        "implementation per application (choosing per environment is not "
                        "supported yet): list only one of them",
                    )
                    continue
                tool_channels[cls] = ToolChannel(
                    named, implementations[0], role.name, role.answered_by, role
                )
            else:
                concrete = spec_of(named, ChannelSpec)
                if concrete is None:
                    continue  # reported by tool.channel-not-a-channel
                self.components.setdefault(named, concrete)
                tool_channels[cls] = ToolChannel(
                    named, named, concrete.name, PauseAnswerer.THREAD_OWNER, None
                )
        self.check_interpreters()
        return tool_channels

    def check_roles(self) -> None:
        for spec in list(self.components.values()):
            if not isinstance(spec, ChannelRoleSpec):
                continue
            question = spec.asks is not None or spec.answers is not None
            if (spec.approves is None) == (not question) or (
                question and (spec.asks is None or spec.answers is None)
            ):
                self.violate(
                    "channel-role.shape",
                    spec.name,
                    "a role names either approves= (an approval role) or both asks= and "
                    "answers= (a question role)",
                )

    def check_interpreters(self) -> None:
        self.check_roles()
        owners: dict[type[Any], list[str]] = {}
        for spec in list(self.components.values()):
            if isinstance(spec, ChannelRoleSpec) and spec.reply_interpreter is not None:
                owners.setdefault(spec.reply_interpreter, []).append(spec.name)
                interpreter = spec_of(spec.reply_interpreter, ReplyInterpreterSpec)
                if interpreter is None:
                    self.violate(
                        "reply-interpreter.not-an-interpreter",
                        spec.name,
                        f"reply_interpreter={spec.reply_interpreter.__qualname__} is not a "
                        "@reply_interpreter class; decorate it with @reply_interpreter(...)",
                    )
                else:
                    self.components.setdefault(spec.reply_interpreter, interpreter)
                    self.check_interpreter(spec, spec.reply_interpreter, interpreter)
        for cls, roles in owners.items():
            if len(roles) > 1:
                self.violate(
                    "channel.shared-interpreter",
                    cls.__qualname__,
                    f"is the reply interpreter of {len(roles)} roles ({', '.join(roles)}); "
                    "one interpreter belongs to one role: give each role its own class",
                )

    def check_interpreter(
        self, role: ChannelRoleSpec, cls: type[Any], spec: ReplyInterpreterSpec
    ) -> None:
        if spec.decided_by is DecidedBy.CODE:
            method = getattr(cls, "interpret", None)
            inherited = getattr(ReplyInterpreterHandler, "interpret", None)
            if method is None or method is inherited or inspect.isabstract(cls):
                self.violate(
                    "reply-interpreter.no-interpret-method",
                    spec.name,
                    f"is DecidedBy.CODE but {cls.__qualname__} does not implement "
                    "interpret(input); subclass ReplyInterpreterHandler[Args] and define it",
                )
            return
        if spec.model is None:
            self.violate(
                "reply-interpreter.no-model",
                spec.name,
                "is DecidedBy.MODEL but names no model; add model='provider/model-name'",
            )
            return
        if role.approves is None and self.resolver.decision_model(spec.model) is not None:
            answer = role.answers.__name__ if role.answers is not None else "its answer DTO"
            self.violate(
                "reply-interpreter.decision-model",
                spec.name,
                f"reads replies of the question role {role.name} on the decision model "
                f"{spec.model!r}, which only answers yes / no; {answer} needs more than a "
                "yes / no can give: use a chat model",
            )

    # ---- rules over every component ------------------------------------------------

    def check_names(self) -> None:
        by_name: dict[str, list[type[Any]]] = {}
        for cls, spec in self.components.items():
            by_name.setdefault(spec.name, []).append(cls)
            suffix = spec.kind.suffix
            if not _KEBAB.match(spec.name) or not spec.name.endswith(suffix):
                self.violate(
                    "name.kind-suffix",
                    spec.name or cls.__qualname__,
                    f"a {spec.kind.decorator} name must be kebab-case and end with "
                    f"'{suffix}' (e.g. 'refund{suffix}')",
                )
        for name, classes in by_name.items():
            if len(classes) > 1:
                listed = ", ".join(cls.__qualname__ for cls in classes)
                self.violate(
                    "name.duplicate",
                    name,
                    f"is the name of {len(classes)} components ({listed}); names are unique "
                    "in an application",
                )

    def check_models(self) -> None:
        for spec in self.components.values():
            if not isinstance(spec, AgentSpec | ReplyInterpreterSpec) or spec.model is None:
                continue
            if self.resolver.provider_for(spec.model) is None:
                self.violate(
                    "model.unserved",
                    spec.name,
                    f"names the model {spec.model!r}, which no provider serves; pass "
                    "App.create(providers=[...]) a provider whose serves= matches it",
                )

    def check_handlers(self) -> None:
        for cls, spec in self.components.items():
            if isinstance(spec, ToolSpec):
                _require_method(self, cls, spec, "run", ToolHandler, "ToolHandler[In, Out]")
            elif isinstance(spec, ChannelSpec):
                _require_method(
                    self, cls, spec, "send", ChannelHandler, "ChannelOf or ChannelHandler"
                )


def _max_branches(launch: LaunchSpec) -> int:
    # A per-item launch has as many branches as items: only known at run time.
    return len(launch.components) if launch.over is None else 10**9


def _item_type(dto: type[BaseModel], field_name: str) -> type[BaseModel] | None:
    found = dto.model_fields.get(field_name)
    if found is None:
        return None
    args = typing.get_args(found.annotation)
    origin = typing.get_origin(found.annotation)
    item = args[0] if origin in (list, tuple) and args else None
    if isinstance(item, type) and issubclass(item, BaseModel):
        return item
    return None


def _takes(spec: ComponentSpec | None) -> type[BaseModel] | None:
    if isinstance(spec, AgentSpec):
        return spec.input
    if isinstance(spec, WorkflowFinishSpec):
        return spec.output
    return None


def _require_method(
    assembler: _Assembler,
    cls: type[Any],
    spec: ComponentSpec,
    method: str,
    base: type[Any],
    base_label: str,
) -> None:
    function: Callable[..., Any] | None = getattr(cls, method, None)
    inherited = getattr(base, method, None)
    if function is None or function is inherited or inspect.isabstract(cls):
        assembler.violate(
            f"{spec.kind.value}.no-{method}-method",
            spec.name,
            f"{cls.__qualname__} does not implement {method}(); subclass {base_label} and "
            f"define {method}",
        )


def assemble(application: type[Any], resolver: ModelResolver) -> Assembly:
    """Checks an application and everything it reaches.

    Raises:
        AssemblyError: Listing every violation found.
    """
    return _Assembler(application, resolver).run()
