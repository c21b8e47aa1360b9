"""The build an instance runs, held against what waits in its store (issue 55).

"The same version" must mean "the same journal semantics": a build whose workflow's
definition changed while its version did not is refused while executions of that version
still wait, with what changed named part by part (`WorkflowDefinition.parts`) — else those
trees would read their journals under rules they were not begun with. A build that continues
earlier versions is refused while their waiting trees need what it lacks (`_continuing`).

An instance keeps its build's definitions' parts in the store, by fingerprint, with the first
tree it begins (in the same commit), for the builds after it.
"""

from __future__ import annotations

from collections.abc import Mapping

from agboss.assembly import Assembly, WorkflowDefinition
from agboss.engine.instance._continuing import Lacking, continued, lacking_to_continue
from agboss.engine.instance._runtime import RECOVERY_INTERVAL, Runtime
from agboss.errors import AssemblyError, AssemblyViolation
from agboss.records import BlockedVersion
from agboss.store.protocol import Store, WaitingBuild
from agboss.store.writes import KeepInstance, LeaveInstance, RecordBuild

__all__ = [
    "SERVING_LASTS",
    "blocked_versions",
    "build_record",
    "check_build",
    "keep_serving",
    "leave",
]

RULE = "workflow.changed-without-version"
CANNOT_CONTINUE = "workflow.cannot-continue"


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


def _changed(
    waiting: WaitingBuild, definition: WorkflowDefinition, before: Mapping[str, str] | None
) -> BlockedVersion:
    changed = (
        "what, is not known (it was stored without its parts)"
        if before is None
        else ", ".join(_changes(before, definition.parts))
    )
    return BlockedVersion(
        waiting.workflow,
        waiting.version,
        RULE,
        f"its definition changed while its version stayed {waiting.version}, and "
        f"{waiting.count} execution(s) begun under the earlier definition still wait "
        f"({changed}); give the workflow a new version (@workflow(version=...)), or let "
        "those executions end on the build that began them first",
    )


def _cannot_continue(lacking: Lacking) -> BlockedVersion:
    return BlockedVersion(
        lacking.workflow,
        lacking.version,
        CANNOT_CONTINUE,
        f"it continues version {lacking.version}, whose waiting execution trees need what "
        f"this build lacks ({lacking.said()}); keep those parts as they were, or drop "
        f"{lacking.version} from continues=[...] and let the build that began them finish them",
    )


async def blocked_versions(assembly: Assembly, store: Store) -> list[BlockedVersion]:
    """The versions whose waiting trees this build serves but cannot move as they are: its
    own version defined otherwise than they began with, and the versions it continues
    whose trees wait on what it lacks."""
    builds = store.builds
    here = assembly.workflows_by_name
    waiting = await builds.waiting(sorted(here))
    stale = [
        w
        for w in waiting
        if w.version == here[w.workflow].spec.version
        and w.fingerprint != here[w.workflow].fingerprint
    ]
    later = [w for w in waiting if continued(assembly, w.workflow, w.version)]
    # Read for every workflow that continues a version: trees begun before builds were
    # fingerprinted are not among the waiting builds, and their calls are checked too.
    continuing = sorted(name for name, d in here.items() if d.spec.continues)
    if not stale and not continuing:
        return []
    calls = await builds.calls(continuing) if continuing else []
    fingerprints = {w.fingerprint for w in (*stale, *later)}
    fingerprints.update(call.fingerprint for call in calls if call.fingerprint is not None)
    known = await builds.parts(sorted(fingerprints))
    lacking = lacking_to_continue(
        assembly,
        calls,
        known,
        waiting=[(w.workflow, w.version, w.fingerprint, w.count) for w in later],
    )
    return [
        *(_changed(w, here[w.workflow], known.get(w.fingerprint)) for w in stale),
        *(_cannot_continue(each) for each in lacking),
    ]


async def check_build(runtime: Runtime) -> None:
    """Refuses this build if a workflow's definition changed under a version that waits, or
    if it continues an earlier version whose waiting trees need what it lacks.

    Raises:
        AssemblyError: Listing each such workflow: ``workflow.changed-without-version``,
            with what changed, and ``workflow.cannot-continue``, with what is lacking.
    """
    blocked = await blocked_versions(runtime.assembly, runtime.store)
    if blocked:
        raise AssemblyError(
            runtime.assembly.spec.name,
            [AssemblyViolation(each.rule, each.workflow, each.message) for each in blocked],
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


SERVING_LASTS = 10 * RECOVERY_INTERVAL
"""How long an instance's word that it runs lasts (five minutes): said again by a sweep
before it lapses, so one that stopped without closing is taken for gone within it."""

SAID_AGAIN_WITHIN = 2 * RECOVERY_INTERVAL
"""How close to lapsing its word is when a sweep says it again: every eighth sweep, not every
one (a sweep that finds nothing to move writes nothing most of the time)."""


async def keep_serving(runtime: Runtime) -> None:
    """Says in the store that this instance runs and moves the trees it serves, for
    `SERVING_LASTS` (what `App.stranded` reads) — unless its word lasts long enough yet."""
    now = runtime.clock.now()
    kept = runtime.memory.serving_until
    if kept is not None and now + SAID_AGAIN_WITHIN < kept:
        return
    assembly = runtime.assembly
    until = now + SERVING_LASTS
    said = KeepInstance(runtime.holder, assembly.spec.name, assembly.served, now, until)
    await runtime.store.write([said])
    runtime.memory.serving_until = until


async def leave(runtime: Runtime) -> None:
    """Says in the store that this instance stopped: it serves nothing any more."""
    await runtime.store.write([LeaveInstance(runtime.holder)])
