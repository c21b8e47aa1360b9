"""Which trees a build moves: by their root's workflow, the versions it serves.

A build serves its own version of each workflow, and the earlier versions the workflow says
it continues (``@workflow(version="1.1.0", continues=["1.0.*"])``). Several builds can then
share one store in a rolling deploy: each moves only the trees it serves, and leaves the
others waiting for a build that does (docs/deploying.md).
"""

from __future__ import annotations

from collections.abc import Iterable

from agboss.components import WorkflowSpec
from agboss.store.protocol import Served

__all__ = ["pattern_problem", "served_by"]

WILDCARD = "*"


def pattern_problem(pattern: object) -> str | None:
    """What is wrong with one entry of ``continues=[...]``, if anything."""
    if not isinstance(pattern, str) or not pattern.strip():
        return f"continues=[...] holds {pattern!r}; each entry is a version, such as '1.0.0'"
    if WILDCARD in pattern[:-1]:
        return (
            f"continues=[...] holds {pattern!r}; '*' may only end an entry, as in '1.0.*' "
            "(every version that starts with '1.0.')"
        )
    return None


def _served(spec: WorkflowSpec) -> Served:
    exact = [spec.version]
    prefixes: list[str] = []
    for pattern in spec.continues:
        if pattern.endswith(WILDCARD):
            prefixes.append(pattern[: -len(WILDCARD)])
        else:
            exact.append(pattern)
    return Served(spec.name, tuple(dict.fromkeys(exact)), tuple(dict.fromkeys(prefixes)))


def served_by(specs: Iterable[WorkflowSpec]) -> tuple[Served, ...]:
    """What a build with these workflows serves, one `Served` per workflow, by name."""
    return tuple(_served(spec) for spec in sorted(specs, key=lambda spec: spec.name))
