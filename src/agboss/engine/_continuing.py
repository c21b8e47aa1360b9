"""A waiting tree moved to this build on purpose, by its workflow's continuation (issue 55).

A workflow that continues earlier versions may say how their waiting trees' calls become its
own: ``@workflow(version="2.0.0", continues=["1.*"], continuation=renamed)``. When this build
next moves such a tree — a pass, or the first answer to it this build reads — the
continuation maps each call the tree waits on (`PendingCall`), and one commit under the tree's
lease makes the move: the root runs under this version and build from then on (a build of the
earlier version no longer serves it), each mapped call is asked as mapped — its question, its
step, a decision's arguments, and the model's turn it came from, which a replay reads — and
the move with every call it changed joins the tree's audit trail (``record.continuations``).

A continuation that raises, or maps a call to a tool the agent lacks or asks no one about, or
to arguments the tool does not take, moves nothing: `ContinuationFailedError`, and the tree
waits as it was. Only approvals are mapped: a question a tool asked mid-call, or whether to
run again a call that may have run, is asked of the call as it was, whose tool must keep its
name.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from pydantic import ValidationError

from agboss.assembly import WorkflowDefinition
from agboss.engine.instance import Runtime, build_record
from agboss.engine.runs import describe_validation_error
from agboss.engine.trees import PassWrites, Wakeups
from agboss.enums import PauseKind, PauseStatus
from agboss.errors import ContinuationFailedError
from agboss.models import ChatResponse
from agboss.observability import log_event
from agboss.records import (
    ContinuationRecord,
    ContinuedCall,
    PauseRecord,
    PendingCall,
    call_digest,
)
from agboss.store.protocol import ExecutionRow
from agboss.store.writes import ContinueTree, MovedCall

__all__ = ["continue_tree", "continue_waiting", "moves_by_continuation", "unmappable"]

_WAITING = (PauseStatus.PENDING, PauseStatus.RESOLVED)
"""The statuses of a question a tree waits on: pending, or answered and not yet taken."""


def moves_by_continuation(runtime: Runtime, root: ExecutionRow) -> WorkflowDefinition | None:
    """The definition whose continuation moves the tree of ``root`` to this build when it
    next moves here (``None``: it runs as it began — its own version, or one continued
    without a continuation, or not served)."""
    definition = runtime.assembly.workflows_by_name.get(root.workflow)
    if (
        definition is None
        or definition.spec.continuation is None
        or root.workflow_version == definition.spec.version
        or not runtime.assembly.serves(root.workflow, root.workflow_version)
    ):
        return None
    return definition


async def continue_tree(runtime: Runtime, writes: PassWrites, root: ExecutionRow) -> ExecutionRow:
    """Moves the tree of ``root`` to this build by its workflow's continuation, if it is one
    to move (`moves_by_continuation`), in one commit under the lease ``writes`` holds.

    Returns:
        The root as it runs now: under this build's version and fingerprint once moved.

    Raises:
        ContinuationFailedError: The continuation could not map a call; nothing is written.
    """
    definition = moves_by_continuation(runtime, root)
    if definition is None:
        return root
    changed = [
        (pause, mapped)
        for pause in await runtime.store.pauses.find_by_root(root.execution_id, _WAITING)
        if (mapped := _mapped(runtime, definition, root, pause)) is not None
    ]
    moved = await _moved_turns(runtime, root, changed)
    now = runtime.clock.now()
    entry = ContinuationRecord(
        continued_at=now.isoformat(),
        from_version=root.workflow_version,
        to_version=definition.spec.version,
        from_fingerprint=root.fingerprint,
        to_fingerprint=definition.fingerprint,
        calls=[_said(each) for each in moved],
    )
    await writes.commit_one(
        ContinueTree(writes.lease.fence, entry, tuple(moved), build_record(runtime))
    )
    runtime.memory.build_kept = True  # its parts were kept with the move
    log_event(
        runtime.logger,
        logging.INFO,
        "run.continued",
        "execution tree %(execution_id)s of %(workflow)s moved from version %(from_version)s "
        "to %(to_version)s by its continuation, %(calls)d call(s) mapped",
        execution_id=root.execution_id,
        workflow=root.workflow,
        tenant_id=root.tenant_id,
        from_version=entry.from_version,
        to_version=entry.to_version,
        calls=len(entry.calls),
    )
    return replace(
        root, workflow_version=definition.spec.version, fingerprint=definition.fingerprint
    )


async def continue_waiting(
    runtime: Runtime, wakeups: Wakeups, root_execution_id: str, row: ExecutionRow
) -> bool:
    """Moves a waiting tree to this build by its workflow's continuation before an answer to
    one of its questions is read here (``row``: the execution the question waits in): its
    lease acquired once free, the move committed, the lease freed — so that the answer is
    read against the call as this build makes it.

    Returns:
        Whether its questions are to be read again (it moved, here or meanwhile elsewhere).

    Raises:
        ContinuationFailedError: The continuation could not map a call; nothing is written.
        LeaseBusyError: Another instance's pass held the tree past ``resume_timeout``.
    """
    if not runtime.assembly.continues_by_mapping:
        return False  # no read of a child's root for a build that maps nothing
    root: ExecutionRow | None = row
    if row.execution_id != root_execution_id:
        root = await runtime.store.executions.find_by_id(root_execution_id)
    if root is None or moves_by_continuation(runtime, root) is None:
        return False
    held = await wakeups.acquire_when_free(
        root_execution_id,
        "its questions are read once this build's continuation moved it",
        "answer again once that pass ended",
    )
    writes = PassWrites(held.lease)
    try:
        now = held.acquired.row
        if now is not None:
            await continue_tree(runtime, writes, now)
    finally:
        await writes.release()
    return True


async def unmappable(
    runtime: Runtime, limit: int
) -> list[tuple[ExecutionRow, ContinuationFailedError]]:
    """The waiting trees this build's continuations could not move to it, each with why: a
    dry run of each continuation on every call the trees of the versions it maps wait on
    (nothing is written), for the deploy check.

    Args:
        runtime: This build.
        limit: The most trees to look at per version; one more failing than ``limit`` is
            returned when there are more (the caller says it listed them all or not).
    """
    assembly = runtime.assembly
    store = runtime.store
    mapping = sorted(n for n, d in assembly.workflows_by_name.items() if d.spec.continuation)
    calls = await store.builds.calls(mapping) if mapping else []
    versions = sorted({(call.workflow, call.version) for call in calls})
    failed: list[tuple[ExecutionRow, ContinuationFailedError]] = []
    for workflow, version in versions:
        for root in await store.builds.waiting_trees(workflow, version, limit + 1):
            definition = moves_by_continuation(runtime, root)
            if definition is None:
                continue  # its own version, or one this build does not serve: said elsewhere
            try:
                for pause in await store.pauses.find_by_root(root.execution_id, _WAITING):
                    _mapped(runtime, definition, root, pause)
            except ContinuationFailedError as error:
                failed.append((root, error))
                if len(failed) > limit:
                    return failed
    return failed


def _failed(root: ExecutionRow, pause: PauseRecord, why: str) -> ContinuationFailedError:
    return ContinuationFailedError(
        f"the continuation of {root.workflow} could not move execution tree "
        f"{root.execution_id} from version {root.workflow_version}: for the call of "
        f"{pause.ask.tool} by the agent {pause.agent}, {why}"
    )


def _mapped(
    runtime: Runtime, definition: WorkflowDefinition, root: ExecutionRow, pause: PauseRecord
) -> PauseRecord | None:
    """The pause as this build asks it, its call mapped (``None``: the call stays as it is)."""
    assembly = runtime.assembly
    if pause.ask.kind is not PauseKind.APPROVAL:
        if assembly.tool_named(pause.agent, pause.ask.tool) is None:
            raise _failed(root, pause, "a question asked of the call itself is not mapped")
        return None
    decision = None if pause.answer is None else pause.answer.decision
    override = None if decision is None else decision.override_arguments
    arguments = pause.ask.arguments if override is None else override
    call = PendingCall(
        workflow=root.workflow,
        version=root.workflow_version,
        agent=pause.agent,
        tool=pause.ask.tool,
        arguments=MappingProxyType(json.loads(json.dumps(arguments))),  # the caller's own copy
        call_id=pause.ask.call_id,
    )
    continuation = definition.spec.continuation
    assert continuation is not None  # moves_by_continuation said so
    try:
        made = continuation(call)
    except Exception as error:  # the user's function: its failure is said, the tree kept
        raise _failed(root, pause, f"it raised {type(error).__name__}: {error}") from error
    if not isinstance(made, PendingCall):
        raise _failed(root, pause, f"it returned {type(made).__name__}, not a PendingCall")
    if (made.agent, made.call_id) != (call.agent, call.call_id):
        raise _failed(root, pause, "it changed the call's agent or id, which stay")
    found = assembly.tool_named(pause.agent, made.tool)
    channel = None if found is None else assembly.tool_channels.get(found[0])
    if found is None or channel is None:
        raise _failed(
            root, pause, f"it names the tool {made.tool}, which the agent lacks or asks no one"
        )
    if channel.asking(pause.channel).name != pause.channel:
        # Its question was sent there: its answer, and any withdrawal, stay with that channel.
        raise _failed(root, pause, f"it names the tool {made.tool}, not asked of {pause.channel}")
    try:
        valid = found[1].input.model_validate(dict(made.arguments))
    except ValidationError as error:
        raise _failed(
            root, pause, f"its arguments for {made.tool}: {describe_validation_error(error)}"
        ) from error
    now = valid.model_dump(mode="json")
    digest = call_digest(pause.pause_id, made.tool, assembly.tool_definition(made.tool), now)
    if made.tool == pause.ask.tool and now == arguments and pause.ask.digest in (None, digest):
        return None  # the same call, of the same tool as this build defines it
    mapped = {"tool": made.tool, "arguments": now}
    step = pause.step
    if step.tool_call is not None:
        step = step.model_copy(update={"tool_call": step.tool_call.model_copy(update=mapped)})
    answer = pause.answer
    if answer is not None:
        # A decision given before the move is bound to the call as mapped, in the move's
        # audit entry: the call runs as decided, mapped by a continuation the record keeps.
        bound: dict[str, object] = {"digest": digest}
        if override is not None:
            bound |= {"override_arguments": now, "override_digest": digest}
        answer = answer.model_copy(update={"decision": answer.decision.model_copy(update=bound)})
    ask = pause.ask.model_copy(update={**mapped, "digest": digest})
    return replace(pause, ask=ask, step=step, answer=answer)


async def _moved_turns(
    runtime: Runtime, root: ExecutionRow, changed: list[tuple[PauseRecord, PauseRecord]]
) -> list[MovedCall]:
    """Each mapped call (``(as read, as mapped)``) with its model turn's journal entry, every
    mapped call of that turn mapped in it (a replay rebuilds the conversation from it, and runs
    the calls it names): each turn read once, whatever number of its calls were mapped."""
    turns: dict[tuple[str, str], ChatResponse] = {}
    for was, pause in changed:
        key = (was.execution_id, _turn_key(was))
        turn = turns.get(key)
        if turn is None:
            entry = (await runtime.store.journal.load(*key)).get(key[1])
            if entry is None:
                raise _failed(root, was, "its model turn is not in the journal")
            turn = ChatResponse.model_validate_json(entry.result_json)
        mapped = {"name": pause.ask.tool, "arguments": _json(pause.ask.arguments)}
        calls = tuple(
            call.model_copy(update=mapped) if call.id == was.ask.call_id else call
            for call in turn.tool_calls
        )
        turns[key] = turn.model_copy(update={"tool_calls": calls})
    return [
        MovedCall(
            pause,
            was,
            _turn_key(was),
            turns[was.execution_id, _turn_key(was)].model_dump_json(),
        )
        for was, pause in changed
    ]


def _turn_key(pause: PauseRecord) -> str:
    """The journal key of the model turn a pause's call came from (its step's sibling)."""
    scope, _, _ = pause.step_key.rpartition("/")
    return f"{scope}/model"


def _json(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, separators=(",", ":"))


def _said(moved: MovedCall) -> ContinuedCall:
    return ContinuedCall(
        execution_id=moved.pause.execution_id,
        step=moved.pause.step_key,
        agent=moved.pause.agent,
        before_tool=moved.was.ask.tool,
        before_arguments=moved.was.ask.arguments,
        tool=moved.pause.ask.tool,
        arguments=moved.pause.ask.arguments,
    )
