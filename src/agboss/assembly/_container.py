"""A small dependency container with two scopes: the application and the execution frame.

Components list the types their constructor takes in ``deps=[...]``; the container creates them
with those arguments. `ExecutionContext` is provided per execution frame; anything else is
registered on the application with `provide(...)`. Missing dependencies, cycles and scope
mistakes are assembly violations, reported all at once by `App.create`, never at run time.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar, cast

from agboss.components import ComponentSpec
from agboss.context import ExecutionContext
from agboss.errors import AssemblyViolation

__all__ = ["Container", "Provide", "Scope", "provide"]

T = TypeVar("T")


class Scope(StrEnum):
    """How long a provided object lives."""

    APP = "app"
    """One per `App`, created on first use."""
    EXECUTION = "execution"
    """One per execution frame (a step), so it may take `ExecutionContext`."""


class _Unset:
    def __repr__(self) -> str:
        return "<unset>"


_UNSET: Any = _Unset()


@dataclass(frozen=True, slots=True)
class Provide:
    """A registration: how the container makes one type. Made by `provide`."""

    provided: type[Any]
    factory: Callable[..., Any] | None
    instance: Any
    deps: tuple[type[Any], ...]
    scope: Scope

    @property
    def label(self) -> str:
        """The provided type's name, for messages."""
        return self.provided.__qualname__


def provide(
    type_: type[T],
    *,
    instance: T = _UNSET,
    factory: Callable[..., T] | None = None,
    deps: Sequence[type[Any]] = (),
    scope: Scope = Scope.APP,
) -> Provide:
    """Registers how to make ``type_`` for components that list it in ``deps``.

    With neither ``instance`` nor ``factory``, the type itself is called with ``deps``.

    Args:
        type_: The type components ask for.
        instance: The object to hand out (application scope).
        factory: Called with the resolved ``deps`` to make the object.
        deps: The types ``factory`` (or the type) takes, in order.
        scope: `Scope.APP` (one per App) or `Scope.EXECUTION` (one per frame).
    """
    return Provide(type_, factory, instance, tuple(deps), scope)


class Container:
    """Resolves components' and registrations' dependencies."""

    def __init__(self, registrations: Iterable[Provide]) -> None:
        self._registrations: dict[type[Any], Provide] = {}
        for registration in registrations:
            self._registrations[registration.provided] = registration
        self._app_instances: dict[type[Any], Any] = {}
        self._overrides: dict[type[Any], Callable[[Any], Any]] = {}

    @property
    def registrations(self) -> Mapping[type[Any], Provide]:
        """The registrations, by type."""
        return self._registrations

    def override(self, component: type[Any], wrap: Callable[[Any], Any]) -> None:
        """Wraps every instance of ``component`` the container makes (the test kit's mocks)."""
        self._overrides[component] = wrap

    def create(self, component: type[T], deps: Sequence[type[Any]], frame: object | None) -> T:
        """Makes an instance of a component, injecting its deps."""
        arguments = [self.resolve(dep, frame) for dep in deps]
        instance = component(*arguments)
        wrap = self._overrides.get(component)
        return cast(T, wrap(instance)) if wrap is not None else instance

    def resolve(self, type_: type[T], frame: object | None) -> T:
        """The object for a dependency type, in the given frame (``None`` outside one)."""
        if type_ is ExecutionContext:
            if frame is None:
                raise LookupError("ExecutionContext is only available inside an execution frame")
            return cast(T, frame)
        registration = self._registrations[type_]
        if registration.scope is Scope.APP:
            if type_ not in self._app_instances:
                self._app_instances[type_] = self._make(registration, None)
            return cast(T, self._app_instances[type_])
        return cast(T, self._make(registration, frame))

    def _make(self, registration: Provide, frame: object | None) -> Any:
        if registration.instance is not _UNSET:
            return registration.instance
        arguments: list[Any] = [self.resolve(dep, frame) for dep in registration.deps]
        factory = registration.factory or registration.provided
        return factory(*arguments)

    # ---- assembly checks ----------------------------------------------------------------

    def check(self, components: Mapping[type[Any], ComponentSpec]) -> list[AssemblyViolation]:
        """Every missing dependency, cycle, scope mistake and constructor mismatch."""
        violations: list[AssemblyViolation] = []
        for registration in self._registrations.values():
            violations.extend(self._check_registration(registration))
        for cls, spec in components.items():
            for dep in spec.deps:
                if dep is not ExecutionContext and dep not in self._registrations:
                    violations.append(_missing(spec.name, dep))
            violations.extend(_check_constructor(spec.name, cls, spec.deps))
        return violations

    def _check_registration(self, registration: Provide) -> list[AssemblyViolation]:
        violations: list[AssemblyViolation] = []
        for dep in registration.deps:
            if dep is ExecutionContext:
                if registration.scope is Scope.APP:
                    violations.append(_scope(registration.label, "ExecutionContext"))
            elif dep not in self._registrations:
                violations.append(_missing(registration.label, dep))
            elif (
                registration.scope is Scope.APP
                and self._registrations[dep].scope is Scope.EXECUTION
            ):
                violations.append(_scope(registration.label, dep.__qualname__))
        cycle = self._cycle_from(registration.provided, [])
        if (
            cycle
            and cycle[0] is registration.provided
            and min(cycle, key=lambda t: t.__qualname__) is registration.provided
        ):
            path = " → ".join(t.__qualname__ for t in (*cycle, cycle[0]))
            violations.append(
                AssemblyViolation(
                    "container.cycle",
                    registration.label,
                    f"its dependencies form a cycle ({path}); break it by providing one of "
                    "them with instance= or a factory that needs fewer deps",
                )
            )
        if registration.instance is _UNSET and registration.factory is None:
            violations.extend(
                _check_constructor(registration.label, registration.provided, registration.deps)
            )
        return violations

    def _cycle_from(self, type_: type[Any], path: list[type[Any]]) -> list[type[Any]]:
        if type_ in path:
            return path[path.index(type_) :]
        registration = self._registrations.get(type_)
        if registration is None or registration.instance is not _UNSET:
            return []
        for dep in registration.deps:
            found = self._cycle_from(dep, [*path, type_])
            if found:
                return found
        return []


def _missing(owner: str, dep: type[Any]) -> AssemblyViolation:
    return AssemblyViolation(
        "container.missing-dependency",
        owner,
        f"needs {dep.__qualname__}, which nothing provides; add "
        f"provide({dep.__qualname__}, ...) to @application(dependencies=[...])",
    )


def _scope(owner: str, dep: str) -> AssemblyViolation:
    return AssemblyViolation(
        "container.scope",
        owner,
        f"lives as long as the App but needs {dep}, which exists only per execution frame; "
        "register it with scope=Scope.EXECUTION",
    )


def _check_constructor(
    owner: str, cls: type[Any], deps: Sequence[type[Any]]
) -> list[AssemblyViolation]:
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):  # a builtin without a readable signature: trust deps
        return []
    try:
        signature.bind(*[object()] * len(deps))
    except TypeError:
        listed = ", ".join(dep.__qualname__ for dep in deps) or "nothing"
        return [
            AssemblyViolation(
                "component.constructor",
                owner,
                f"its constructor {cls.__qualname__}{signature} cannot take its deps "
                f"({listed}); make deps=[...] list exactly the constructor's parameters, in order",
            )
        ]
    return []
