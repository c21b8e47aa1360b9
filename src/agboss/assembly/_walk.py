"""What every rule family of assembly shares: the walk's state, ``take`` and ``violate``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agboss.assembly._container import Provide
from agboss.assembly._definitions import SpecT, WorkflowDefinition
from agboss.components import ComponentKind, ComponentSpec, spec_of
from agboss.errors import AssemblyViolation
from agboss.models import ModelResolver

__all__ = ["Walk"]


@dataclass
class Walk:
    """The state of one assembly: the components reached, the flows compiled, the
    violations found (reported together at the end)."""

    application: type[Any]
    resolver: ModelResolver
    violations: list[AssemblyViolation] = field(default_factory=list)
    components: dict[type[Any], ComponentSpec] = field(default_factory=dict)
    definitions: dict[type[Any], WorkflowDefinition | None] = field(default_factory=dict)
    compiling: set[type[Any]] = field(default_factory=set)
    checked_tools: set[type[Any]] = field(default_factory=set)
    chosen: dict[type[Any], type[Any]] = field(default_factory=dict)
    """The implementation `App.create(channels=...)` chose for each role it names."""
    dependencies: tuple[Provide, ...] = ()
    """`App.create(dependencies=...)`: registrations replacing the application's of a type."""
    refused_choices: set[type[Any]] = field(default_factory=set)
    """The roles whose choice was a violation: reported once, not again as unanswered."""

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
