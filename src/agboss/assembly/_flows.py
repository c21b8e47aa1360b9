"""Assembly's rules over flows: workflows compiled (once, also as children), their steps'
components taken and typed against each other, launches and joins, agents' tools."""

from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel

from agboss.assembly._definitions import WorkflowDefinition
from agboss.assembly._serving import pattern_problem
from agboss.assembly._walk import Walk
from agboss.components import (
    AgentSpec,
    ChannelRoleSpec,
    ChannelSpec,
    ComponentKind,
    ComponentSpec,
    JoinComponentSpec,
    ToolHandler,
    ToolSpec,
    WorkflowFinishSpec,
    WorkflowSpec,
    WorkflowStartSpec,
    spec_of,
)
from agboss.enums import OnInterrupted
from agboss.flow import (
    CompiledBranch,
    CompiledLaunch,
    Flow,
    FlowGraph,
    FlowNode,
    LaunchSpec,
    StepKind,
)
from agboss.mcp import McpServer

__all__ = ["FlowRules"]


def _handler_types(cls: type[Any]) -> tuple[object, object] | None:
    """The ``(In, Out)`` a class gives `ToolHandler`, where it names them."""
    for klass in cls.__mro__:
        for base in getattr(klass, "__orig_bases__", ()):
            if typing.get_origin(base) is ToolHandler:
                args = typing.get_args(base)
                if len(args) == 2:
                    return args[0], args[1]
    return None


class FlowRules(Walk):
    """The flow rules, mixed into the assembler."""

    # ---- flows ---------------------------------------------------------------------

    def definition(self, cls: type[Any], where: str) -> WorkflowDefinition | None:
        """A workflow's compiled definition (compiled once, also as a child)."""
        if cls in self.definitions:
            return self.definitions[cls]
        spec = self.take(cls, WorkflowSpec, ComponentKind.WORKFLOW, where)
        if spec is None:
            return None
        for pattern in spec.continues:
            problem = pattern_problem(pattern)
            if problem is not None:
                self.violate("workflow.continues", spec.name, problem)
        if spec.continuation is not None and not spec.continues:
            self.violate(
                "workflow.continuation",
                spec.name,
                "declares a continuation but continues no earlier version; name the versions "
                "whose waiting trees it maps: continues=[...]",
            )
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
            if isinstance(tool, McpServer):  # its tools are made by the MCP rules
                continue
            spec = self.take(tool, ToolSpec, ComponentKind.TOOL, f"the tools of {agent.name}")
            if spec is not None and tool not in self.checked_tools:
                self.checked_tools.add(tool)
                self.check_tool_types(tool, spec)
                if spec.on_interrupted is OnInterrupted.ASK and spec.channel is None:
                    self.violate(
                        "tool.ask-without-channel",
                        spec.name,
                        "declares on_interrupted=OnInterrupted.ASK but has no channel to ask; "
                        "give it channel=..., or choose OnInterrupted.RERUN or FAIL",
                    )
                policy = spec.retry_policy
                if policy is not None and policy.max_attempts > 1 and not policy.retry_on:
                    self.violate(
                        "tool.retry-on-missing",
                        spec.name,
                        "declares a retry_policy that names no exception to retry: a tool's "
                        "run is tried again only on what it names, as in "
                        "RetryPolicy(retry_on=(GatewayTimeout,))",
                    )
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
