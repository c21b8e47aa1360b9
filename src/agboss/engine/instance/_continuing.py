"""What a build lacks to continue the waiting trees of an earlier version (issue 55).

A workflow that continues earlier versions (``@workflow(continues=["1.0.*"])``) moves their
waiting trees on its own definition. What those trees wait on must then be in it as they
began with it: each waiting call's tool in its agent, with the same schemas and channel
(``tool:<name>``), the role that asks it (``role:<name>``), and the child workflows they run
(``workflow:<name>``); and every tool the earlier build had, by name (a call made before the
tree waited is replayed through its tool's name). Each is compared part by part with the parts
the earlier build kept in the store (`agboss.store.protocol.BuildRepository.parts`). The flow
itself is the workflow's to declare: continuing a version says that this flow reads its
journals. A workflow whose continuation maps the calls (``@workflow(continuation=...)``) needs
only the child workflows: its calls are mapped when the tree moves (each to a tool asked of the
same channel), and a call that ran replays from its journal.

`App.create` refuses a build that lacks any of it; the deploy check lists it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from agboss.assembly import Assembly, WorkflowDefinition
from agboss.store.protocol import WaitingCall

__all__ = ["Lacking", "continued", "lacking_to_continue"]


@dataclass(frozen=True, slots=True)
class Lacking:
    """What this build lacks to continue the waiting trees of one earlier build.

    Attributes:
        workflow: Their workflow.
        version: The version they began under.
        fingerprint: Their build (``None``: not known; only what is missing is found then).
        lacks: What is missing or changed, each with how many trees wait on it:
            ``("tool:book-expense-tool changed", 3)``.
    """

    workflow: str
    version: str
    fingerprint: str | None
    lacks: tuple[tuple[str, int], ...]

    def said(self) -> str:
        """The lacks in a sentence's words: ``tool:x changed (3 trees), …``."""
        return ", ".join(
            f"{what} ({trees} tree{'' if trees == 1 else 's'})" for what, trees in self.lacks
        )


def _compared(name: str, before: Mapping[str, str], now: Mapping[str, str]) -> str | None:
    """How a part the trees need differs now (``None``: as it was, or not known before)."""
    if name not in before:
        return None
    if name not in now:
        return f"{name} removed"
    return None if before[name] == now[name] else f"{name} changed"


def _call_lacks(
    assembly: Assembly,
    definition: WorkflowDefinition,
    call: WaitingCall,
    before: Mapping[str, str],
) -> Iterable[str]:
    if definition.spec.continuation is not None:
        # Its continuation maps the call to this build's when the tree moves, asked of the
        # same channel: a dry run of it on each waiting call is the deploy check's.
        return
    if assembly.tool_named(call.agent, call.tool) is None:
        yield f"the tool {call.tool} of the agent {call.agent} missing"
        return
    for name in (f"tool:{call.tool}", f"role:{call.channel}"):
        differs = _compared(name, before, definition.parts)
        if differs is not None:
            yield differs


def lacking_to_continue(
    assembly: Assembly,
    calls: Sequence[WaitingCall],
    parts: Mapping[str, Mapping[str, str]],
    *,
    waiting: Iterable[tuple[str, str, str | None, int]] = (),
) -> list[Lacking]:
    """What this build lacks to continue each earlier build it serves, from what that
    build's trees wait on.

    Args:
        assembly: This build.
        calls: What the waiting trees wait on (`BuildRepository.calls`).
        parts: The earlier builds' parts, by fingerprint (`BuildRepository.parts`).
        waiting: Waiting builds as ``(workflow, version, fingerprint, trees)``, whose child
            workflows are compared too (a tree may wait in a child without a call of its
            own waiting), and whose tools must all still be there by name.

    Returns:
        One `Lacking` per earlier build this build serves (not its own version) and lacks
        something of, in the order of the calls.
    """
    found: dict[tuple[str, str, str | None], dict[str, int]] = {}
    missing: set[tuple[str, str, str | None, str]] = set()  # a waiting call's tool, said
    for call in calls:
        definition = assembly.workflows_by_name.get(call.workflow)
        if definition is None or not continued(assembly, call.workflow, call.version):
            continue
        before = parts.get(call.fingerprint or "", {})
        build = (call.workflow, call.version, call.fingerprint)
        lacks = found.setdefault(build, {})
        for what in _call_lacks(assembly, definition, call, before):
            lacks[what] = lacks.get(what, 0) + call.trees
        if assembly.tool_named(call.agent, call.tool) is None:
            missing.add((*build, f"tool:{call.tool}"))
    for workflow, version, fingerprint, trees in waiting:
        definition = assembly.workflows_by_name.get(workflow)
        if definition is None or not continued(assembly, workflow, version):
            continue
        before = parts.get(fingerprint or "", {})
        lacks = found.setdefault((workflow, version, fingerprint), {})
        for name in sorted(before):
            if name.startswith("workflow:"):
                differs = _compared(name, before, definition.parts)
            elif (
                name.startswith("tool:")
                and name not in definition.parts
                and definition.spec.continuation is None
            ):
                # A call made before the tree waited replays through its tool's name.
                said = (workflow, version, fingerprint, name) in missing
                differs = None if said else f"{name} removed"
            else:
                continue
            if differs is not None:
                lacks[differs] = max(lacks.get(differs, 0), trees)
    return [
        Lacking(workflow, version, fingerprint, tuple(lacks.items()))
        for (workflow, version, fingerprint), lacks in found.items()
        if lacks
    ]


def continued(assembly: Assembly, workflow: str, version: str) -> bool:
    """Whether this build serves ``version`` of ``workflow`` as an earlier one it continues
    (not its own version)."""
    definition = assembly.workflows_by_name.get(workflow)
    return (
        definition is not None
        and version != definition.spec.version
        and assembly.serves(workflow, version)
    )
