"""Assembly's rule over decorator arguments: each value has the type its decorator declares.

A decorator only attaches what it is given; a string where an enum belongs
(``answered_by="manager"``) or a number where a `timedelta` belongs (``timeout=30``) would
otherwise start and fail at the first run, blaming something else. The declared types are
read from the spec dataclasses, so a new argument is checked without a new rule.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from datetime import timedelta
from enum import Enum
from typing import Any

from pydantic import BaseModel

from agboss.components import ComponentSpec, spec_of
from agboss.errors import AssemblyViolation
from agboss.flow import Flow
from agboss.policies import Budget

__all__ = ["argument_type_errors", "argument_type_violations", "reachable"]

_CHECKED_ELSEWHERE = frozenset(
    {
        "kind",
        "deps",  # container rules
        "tools",  # component.wrong-kind
        "channel",  # tool.channel-not-a-channel
        "reply_interpreter",  # reply-interpreter.not-an-interpreter
        "flow",  # flow.shape
        "pii",  # pii.not-a-rule
        "dependencies",  # container.not-a-registration
        "workflows",  # component.wrong-kind
        "channels",  # component.wrong-kind
        "mcp_servers",  # mcp.not-a-server
    }
)
"""Fields another rule checks with a sentence of its own."""

_EXAMPLES: dict[Any, str] = {
    timedelta: "a timedelta (for example timedelta(seconds=30))",
    str: "a string",
    int: "a whole number",
}


_HINTS: dict[type[ComponentSpec], dict[str, Any]] = {}
"""Each spec type's resolved annotations, read once per process (not per App.create)."""


def _hints(spec_type: type[ComponentSpec]) -> dict[str, Any]:
    found = _HINTS.get(spec_type)
    if found is None:
        # The specs name Flow and Budget only for type checkers; they are resolved here.
        found = typing.get_type_hints(spec_type, localns={"Flow": Flow, "Budget": Budget})
        _HINTS[spec_type] = found
    return found


def _fits(value: object, expected: Any) -> bool:
    origin = typing.get_origin(expected)
    if expected is Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, option) for option in typing.get_args(expected))
    if expected is type(None):
        return value is None
    if origin is type:
        [bound] = typing.get_args(expected)
        return isinstance(value, type) and (bound is Any or issubclass(value, bound))
    if origin is tuple:
        item = typing.get_args(expected)[0]
        return isinstance(value, tuple) and all(_fits(element, item) for element in value)
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(expected, type):
        return isinstance(value, expected)
    return True  # a form this rule does not read: another rule, or the type checker, does


def _wanted(expected: Any) -> str:
    union = typing.get_origin(expected) in (typing.Union, types.UnionType)
    options = [o for o in typing.get_args(expected) if o is not type(None)] if union else [expected]
    said = []
    for option in options:
        if isinstance(option, type) and issubclass(option, Enum):
            members = " or ".join(f"{option.__name__}.{member.name}" for member in option)
            said.append(f"a {option.__name__} ({members})")
        elif typing.get_origin(option) is type:
            [bound] = typing.get_args(option)
            said.append("a class" if bound is Any else f"a {bound.__name__} class")
        elif typing.get_origin(option) is tuple:
            said.append(f"a list of {_items(typing.get_args(option)[0])}")
        elif option in _EXAMPLES:
            said.append(_EXAMPLES[option])
        else:
            said.append(f"a {getattr(option, '__name__', option)}")
    none = " or None" if type(None) in typing.get_args(expected) else ""
    return " or ".join(said) + none


def _items(item: Any) -> str:
    """What a list's items are, by name: ``Remind``, ``str``, ``Remind or Escalate``."""
    union = typing.get_origin(item) in (typing.Union, types.UnionType)
    options = typing.get_args(item) if union else (item,)
    return " or ".join(getattr(option, "__name__", str(option)) for option in options)


def argument_type_errors(spec: ComponentSpec) -> list[str]:
    """What is wrong with the types of a component's decorator arguments, a sentence each."""
    hints = _hints(type(spec))
    errors = []
    for field in dataclasses.fields(spec):
        if field.name in _CHECKED_ELSEWHERE:
            continue
        value = getattr(spec, field.name)
        expected = hints[field.name]
        if not _fits(value, expected):
            if isinstance(value, BaseModel | type):
                shown = getattr(value, "__qualname__", repr(value))
            else:
                shown = repr(value)
            errors.append(f"{field.name}={shown} is {_article(value)}; give {_wanted(expected)}")
    return errors


def _article(value: object) -> str:
    name = type(value).__name__
    return f"an {name}" if name[:1].lower() in "aeiou" else f"a {name}"


def reachable(application: type[Any]) -> dict[type[Any], ComponentSpec]:
    """Every decorated class the application reaches through its specs' values (workflows,
    flows, launches, joins, agents' tools, channels, roles, interpreters), with its spec."""
    found: dict[type[Any], ComponentSpec] = {}
    seen: set[int] = set()
    todo: list[object] = [application]
    while todo:
        value = todo.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, type):
            spec = spec_of(value)
            if spec is not None:
                found[value] = spec
                todo.extend(getattr(spec, field.name) for field in dataclasses.fields(spec))
                todo.extend(value.__mro__[1:])  # the role a channel implements
        elif isinstance(value, tuple | list):
            todo.extend(value)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            todo.extend(getattr(value, field.name) for field in dataclasses.fields(value))
    return found


def argument_type_violations(application: type[Any]) -> list[AssemblyViolation]:
    """A violation for every decorator argument of the wrong type, in every component the
    application reaches (``[<kind>.argument-type]``)."""
    violations: list[AssemblyViolation] = []
    for cls, spec in reachable(application).items():
        label = spec.name if isinstance(spec.name, str) and spec.name else cls.__qualname__
        violations.extend(
            AssemblyViolation(f"{spec.kind.value}.argument-type", label, error)
            for error in argument_type_errors(spec)
        )
    return violations
