"""The build an instance runs, held against what waits in its store (issue 55).

"The same version" must mean "the same journal semantics": a build whose workflow's
definition changed while its version did not is refused while executions of that version
still wait, with what changed named part by part (`WorkflowDefinition.parts`) — else those
trees would read their journals under rules they were not begun with. An instance keeps its
build's definitions' parts in the store, by fingerprint, with the first tree it begins (in the
same commit), for the builds after it.
"""

from __future__ import annotations

from collections.abc import Mapping

from agboss.assembly import WorkflowDefinition
from agboss.engine.instance._runtime import Runtime
from agboss.errors import AssemblyError, AssemblyViolation
from agboss.store.protocol import WaitingBuild
from agboss.store.writes import RecordBuild

__all__ = ["build_record", "check_build"]

RULE = "workflow.changed-without-version"


def _changes(before: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """What a definition changed, part by part: ``tool:refund-tool changed``."""
    said = []
    for name in sorted(before.keys() | now.keys()):
        if name not in now:
            said.append(f"{name} removed")
        elif name not in before:
            said.append(f"{name} added")
        elif before[name] != now[name]:
            said.append(f"{name} changed")
    return said


def _violation(
    waiting: WaitingBuild, definition: WorkflowDefinition, before: Mapping[str, str] | None
) -> AssemblyViolation:
    changed = (
        "what, is not known (it was stored without its parts)"
        if before is None
        else ", ".join(_changes(before, definition.parts))
    )
    return AssemblyViolation(
        RULE,
        waiting.workflow,
        f"its definition changed while its version stayed {waiting.version}, and "
        f"{waiting.count} execution(s) begun under the earlier definition still wait "
        f"({changed}); give the workflow a new version (@workflow(version=...)), or let "
        "those executions end on the build that began them first",
    )


async def check_build(runtime: Runtime) -> None:
    """Refuses this build if a workflow's definition changed under a version that waits.

    Raises:
        AssemblyError: Listing each such workflow (rule ``workflow.changed-without-version``),
            with what changed.
    """
    here = runtime.assembly.workflows_by_name
    stale = [
        waiting
        for waiting in await runtime.store.builds.waiting(sorted(here))
        if waiting.version == here[waiting.workflow].spec.version
        and waiting.fingerprint != here[waiting.workflow].fingerprint
    ]
    if not stale:
        return
    known = await runtime.store.builds.parts([waiting.fingerprint for waiting in stale])
    raise AssemblyError(
        runtime.assembly.spec.name,
        [_violation(w, here[w.workflow], known.get(w.fingerprint)) for w in stale],
    )


def build_record(runtime: Runtime) -> RecordBuild | None:
    """This build's definitions, to keep with the instance's first begin (each fingerprint
    once in the store); ``None`` once this instance kept them."""
    if runtime.memory.build_kept:
        return None
    definitions = tuple(
        (d.fingerprint, d.spec.name, d.spec.version, d.parts)
        for d in runtime.assembly.workflows_by_name.values()
    )
    return RecordBuild(definitions, runtime.clock.now())
