"""Assembly: from an ``@application`` class to a checked `Assembly`, every rule at once.

The assembler walks everything reachable from the application (its workflows, their flows'
components, agents' tools, tools' channels, roles' interpreters, the listed channels), checks
every rule against all of them, and raises one `AssemblyError` listing every violation. The
rule families live beside it: flows (`_flows`), channels (`_channels`).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from agboss.assembly._channels import ChannelRules
from agboss.assembly._container import Container, Provide
from agboss.assembly._definitions import Assembly, ToolChannel, WorkflowDefinition
from agboss.assembly._fingerprints import fingerprint_of, parts_of
from agboss.assembly._flows import FlowRules
from agboss.assembly._mcp import McpRules, McpTool, McpWiring
from agboss.assembly._serving import served_by
from agboss.assembly._types import argument_type_violations
from agboss.components import (
    AgentSpec,
    ApplicationSpec,
    ChannelHandler,
    ChannelSpec,
    ComponentKind,
    ComponentSpec,
    ReplyInterpreterSpec,
    ToolHandler,
    ToolSpec,
    spec_of,
)
from agboss.errors import AssemblyError, AssemblyViolation
from agboss.models import ModelResolver
from agboss.pii import PiiOutside, PiiPolicy, PiiRule

__all__ = ["Assembly", "ToolChannel", "WorkflowDefinition", "assemble"]


_KEBAB = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


class _Assembler(FlowRules, ChannelRules, McpRules):
    """One assembly: the walk, and the rules over every component."""

    # ---- the walk --------------------------------------------------------------------

    def fingerprinted(
        self,
        definition: WorkflowDefinition,
        tool_channels: dict[type[Any], ToolChannel],
        agent_tools: dict[str, dict[str, tuple[type[Any], ToolSpec]]],
    ) -> WorkflowDefinition:
        """A definition with what its journal depends on, and its fingerprint."""
        parts = parts_of(definition, self.components, tool_channels, agent_tools)
        return replace(definition, parts=parts, fingerprint=fingerprint_of(parts))

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
        # Argument types first: the other rules read the arguments as what they declare.
        mistyped = argument_type_violations(self.application)
        if mistyped:
            label = app_spec.name if isinstance(app_spec.name, str) else "the application"
            raise AssemblyError(label, mistyped)
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
        self.check_mcp(app_spec)
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
                for tool in self.agent_tool_classes(spec, app_spec)
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
        fingerprinted = {
            cls: self.fingerprinted(d, tool_channels, agent_tools)
            for cls, d in self.definitions.items()
            if d is not None
        }
        return Assembly(
            application=self.application,
            spec=app_spec,
            workflows={cls: fingerprinted[cls] for cls in workflows},
            workflows_by_name={d.spec.name: d for d in fingerprinted.values()},
            components=self.components,
            tool_channels=tool_channels,
            container=container,
            agent_tools=agent_tools,
            served=served_by(d.spec for d in fingerprinted.values()),
            pii_outside=PiiOutside(
                {
                    agent: {name: spec.input for name, (_, spec) in tools.items()}
                    for agent, tools in agent_tools.items()
                },
                pii,
                {
                    d.spec.name: d.graph.start_node.input
                    for d in self.definitions.values()
                    if d is not None
                },
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
        # The instance's own come last: the container keeps the last registration of a type.
        return [*registrations, *self.dependencies]

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

    # ---- rules over every component ------------------------------------------------

    def check_names(self) -> None:
        by_name: dict[str, list[type[Any]]] = {}
        for cls, spec in self.components.items():
            if issubclass(cls, McpTool):  # named by its server, checked by the MCP rules
                continue
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


def assemble(
    application: type[Any],
    resolver: ModelResolver,
    mcp: McpWiring | None = None,
    channels: Mapping[type[Any], type[Any]] | None = None,
    dependencies: Sequence[Provide] = (),
) -> Assembly:
    """Checks an application and everything it reaches.

    Args:
        application: The ``@application`` class.
        resolver: Resolves the model names it uses.
        mcp: What `App.create` listed of the MCP servers it declares (`declared_servers`).
        channels: The implementation `App.create` chose for each role it names.
        dependencies: `App.create`'s registrations, each replacing the application's of its
            type.

    Raises:
        AssemblyError: Listing every violation found.
    """
    assembler = _Assembler(application, resolver)
    assembler.mcp = mcp or McpWiring()
    assembler.chosen = dict(channels or {})
    assembler.dependencies = tuple(dependencies)
    return assembler.run()
