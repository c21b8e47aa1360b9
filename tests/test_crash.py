"""The crash harness: a process killed before or after any store write of a pass, or stalled past
its lease, loses no recorded decision, leaves no tree stuck, and runs nothing twice.

Each trial runs one phase in a child process (`tests.crash.worker`) whose store counts every
`Store.write` and dies with SIGKILL just before or just after the K-th; a new instance then
recovers (the sweep), and whatever a caller would still do is done (a resume whose answer was
not recorded is retried, the pauses left are answered). The trial is compared with an
uninterrupted run: the same status, output and audit trail; each tool run once per journaled
step (one more for the step the kill cut off, whose journal row was not committed); the same
channels withdrawn.

Every trial also checks what a commit promised (`_answers_kept`, `_sends_kept`,
`_results_kept`). A commit that does not wait for the disk is lost as a power loss would lose
it, with what followed it up to the next commit that waits (`tests.crash.lost`).

CI runs a sample of the points (two per phase, one on each store: an early write on SQLite, a
late one on PostgreSQL); ``make crash`` (``AGBOSS_CRASH_ALL=1``) runs
every point, on SQLite and — with ``AGBOSS_TEST_POSTGRES_URL`` — PostgreSQL.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from agboss import (
    AgentFailedError,
    App,
    ExecutionStatus,
    FunctionProvider,
    PauseKind,
    PauseResolution,
    PauseStatus,
    StandingScope,
)
from agboss.mcp import McpInputRequest
from agboss.records import DecisionEvent
from agboss.records._outputs import ExecutionOutput
from tests.children import Child, start
from tests.crash import lost
from tests.crash.app import (
    BOOM,
    DELEGATE,
    ITEMS,
    LEAD,
    MCP_WORKFLOW,
    THREAD,
    CrashApplication,
    CrashApprovalChannel,
    CrashAskedWorkflow,
    CrashChildrenWorkflow,
    CrashEscalationWorkflow,
    CrashExpiryWorkflow,
    CrashGuardedWorkflow,
    CrashLadderWorkflow,
    CrashRetryWorkflow,
    CrashVotedWorkflow,
    CrashWorkflow,
    FilingCrashApplication,
    NextCrashApplication,
    crash_mcp_application,
    model,
)
from tests.crash.clock import clock_ahead_by
from tests.crash.leases import expire_leases
from tests.crash.worker import LEASE_TTL
from tests.stores import STORE_KINDS, store_url

CRASH_ALL = os.environ.get("AGBOSS_CRASH_ALL") == "1"
LOSE_ANY = os.environ.get("AGBOSS_CRASH_LOSE_ANY") == "1"
"""Loses each commit in turn, durable or not: what would go wrong if it did not wait for the
disk (the trials of a durable one are expected to fail; a way to decide, not a test)."""
PHASES = (
    "execute",
    "execute-new",
    "resume",
    "fail-fast",
    "children",
    "children-fail-fast",
    "mcp-execute",
    "mcp-resume",
    "guarded-resume",
    "asked-resume",
    "answered-resume",
    "retry",
    "wake",
    "expiry",
    "ladder",
    "escalate",
    "standing",
    "vote",
    "claim",
    "reassign",
    "delegate",
    "deploy",
    "continue",
    "answers",
)
"""Execute (on a thread the caller names; on a new thread, whose tree is written with its
first commit); resume one of three per-item pauses; resume one so that its branch fails under
FailFast; the same two in per-item child workflows; an MCP tool's call that asks a question
mid-call (its round journaled, its question a pause), then the answer that calls it again;
resume one of three per-item pauses whose tool must not run twice (``on_interrupted=FAIL``): a
trial may end with that branch failed (`ToolInterruptedError`, read by the join's error
handler) instead, but no tool runs twice; the same with the default of a tool with a channel
(``ASK``): a call cut off is asked about, the harness's person says it ran (a rejection the
model reads), and no tool runs twice; and that answer given with `App.answer`, whose move runs
in the background after the caller had its receipt; and `App.retry` of a tree whose first
item's model was down once its tool ran (FailFast withdrew the other two questions): the retry
replays the tool, asks the two again under new ids, and the tree finishes as it would have;
and a tree that rests (`ExecutionStatus.WAITING`) until its first item's model call, answered
503 with a second's ``Retry-After``, is due: the sweep moves it then; and a tree whose three
questions nobody answers: once their deadline passed (``expires_after``), the sweep moves it
and the deadline rejects each (`PauseResolution.EXPIRED`), its channel told once; and a tree
whose three questions' ladder reminds of each once its step is due (the sweep moves it), then
answered; and the same with a ladder that escalates each question to the lead's role, asked
under a new id, the first channel told, then answered; and an execute whose three calls a
standing decision (`App.allow`, granted before) decides at once, nobody asked — its tools
``ASK``: a call cut off is asked about (a standing yes does not decide that), none runs twice;
and two votes of three voters on one of three per-item questions whose role takes two
approvals (the first vote leaves it waiting, the second decides it), the others voted on
after: each vote counted once, in the audit; and one of three per-item questions claimed by
its owner, then answered: a claim whose commit returned holds after the kill (until the
answer); and one of three per-item questions handed by its owner to the lead's role
(`App.reassign`), then answered there: a reassignment whose commit returned holds after the
kill (the old id closed as reassigned, never answered; the new question asked once, sent by the
sweep if the kill came before it was); and the owner delegating their questions to another
(`App.delegate`), who answers one of three per-item questions for them: a delegation whose
commit returned holds after the kill, and the answer is recorded as the delegate's for the
owner; and a rolling deploy — the old build killed mid-pass
as it resumes one of three per-item pauses: a build of the next version that does not continue
the old one moves nothing of its tree, and one whose continuation moves it (its item calls
renamed) recovers it and finishes it as the old build would have; and that continuation
moving the old build's tree as the next build's instance, killed, resumes one of its pauses:
the move is whole or absent, and the tree finishes on the next build as the old one would
have, no tool run twice; and two of three per-item questions answered by reference as the
protocol doors answer them (AG-UI, A2A, MCP: checked, the first recorded without moving the tree,
the second answered moving it with both): each answer whose commit returned holds, and the
tree finishes as it would have."""

RESTING = ("execute", "execute-new", "mcp-execute", "retry", "expiry", "ladder", "escalate")
"""The phases whose passes make a commit that does not wait for the disk (they rest a tree once
its questions were sent): the others' commits all keep a promise."""

ONCE = ("guarded-resume", "asked-resume", "answered-resume", "standing")
"""The phases whose tools must not run twice (``FAIL`` or ``ASK``)."""

IN_FLIGHT = {"answers": 2}
"""The phases that move two answered calls in one pass: a kill can cut both off at once, and
each is run again once (the others move one call at a time)."""

INTERRUPTED = "ToolInterruptedError"
"""The note of a guarded trial whose call was cut off: its branch failed, nothing ran twice."""

ASKED_SPREAD = 0.5
"""Seconds past the first question's time at which a phase whose three questions fall due
together moves: they were asked moments apart, and a pass that found only some of them due
would make another pass's writes in one trial and not in another (a point the base run
reached must be the same write in every trial)."""

ANSWER = {"approved": True, "override_arguments": {"sure": True}}
"""The answer to the MCP tool's question."""

CHECKED = {"approved": False, "reason": "checked: it ran"}
"""The answer to whether a call that may have run runs again (``ASK``)."""


@dataclass
class Outcome:
    """What a finished trial left: compared with an uninterrupted run's."""

    status: ExecutionStatus
    output: dict[str, Any] | None
    audit: list[tuple[Any, ...]]
    tools: Counter[str] = field(default_factory=Counter)
    keys: dict[str, set[str]] = field(default_factory=dict)
    """The idempotency keys each item's tool ran with."""
    sends: Counter[str] = field(default_factory=Counter)
    reminds: Counter[str] = field(default_factory=Counter)
    withdraws: Counter[str] = field(default_factory=Counter)
    writes: int = 0
    fenced: int = 0
    volatile: list[int] = field(default_factory=list)
    """The writes whose commits did not wait for the disk."""
    broken: list[str] = field(default_factory=list)
    """What the trial lost of what a commit had promised (`_promises_kept`)."""


def _runs(path: Path, marker: str | None = None) -> list[str]:
    if not path.exists():
        return []
    lines = path.read_text().splitlines()
    if marker is not None and marker in lines:
        lines = lines[lines.index(marker) + 1 :]
    return lines


def _counted(lines: list[str], what: str) -> Counter[str]:
    return Counter(line.split()[1] for line in lines if line.startswith(what + " "))


async def _app(url: str, phase: str, args: list[str] | None = None) -> App:
    """The phase's application; with the worker's ``args``, on its clock (``wake AHEAD``).
    After a deploy, the recovering instance runs the next build, which moves the old one's
    trees to itself by its continuation."""
    application = (
        crash_mcp_application()
        if phase.startswith("mcp-")
        else FilingCrashApplication
        if phase in ("deploy", "continue") and args is not None
        else CrashApplication
    )
    ahead = float(args[1]) if args is not None and args[0] == "wake" else 0.0
    return await App.create(
        application, store=url, providers=[FunctionProvider(model)], clock=clock_ahead_by(ahead)
    )


def _ahead_to(due: float) -> str:
    """How far ahead a clock runs where ``due`` (a time stamp) is now: the wait skipped."""
    return str(max(due - time.time(), 0.0))


async def _failed(url: str) -> str:
    """A tree failed after its first item's tool ran: the model down for its closing call."""
    flag = Path(os.environ["AGBOSS_TEST_DOWN"])
    app = await _app(url, "retry")
    try:
        paused = await app.execute(CrashRetryWorkflow, ITEMS, owner_id="u", thread_id=THREAD)
        first = sorted(paused.pending, key=_item)[0]
        flag.touch()
        try:
            await app.resume(str(first.pause_id), decision={"approved": True}, owner_id="u")
        except AgentFailedError:
            pass
        finally:
            flag.unlink()
        assert (await app.failed()).entries, "the tree did not fail"
    finally:
        await app.close()
    return paused.execution_id


async def _resting(url: str) -> tuple[str, float]:
    """A tree that rests until its first item's model call may be tried again (a 503 asked a
    second; a third of the short lease is less): its root, and when it is due."""
    flag = Path(os.environ["AGBOSS_TEST_BUSY"])
    app = await App.create(
        CrashApplication, store=url, providers=[FunctionProvider(model)], lease_ttl=LEASE_TTL
    )
    try:
        paused = await app.execute(CrashWorkflow, ITEMS, owner_id="u", thread_id=THREAD)
        flag.touch()
        for pause in sorted(paused.pending, key=_item):
            rested = await app.resume(
                str(pause.pause_id), decision={"approved": True}, owner_id="u"
            )
        assert rested.status is ExecutionStatus.WAITING, rested
        assert rested.wake_at is not None
    finally:
        await app.close()
    return paused.execution_id, rested.wake_at.timestamp()


async def _expiring(url: str) -> tuple[str, float]:
    """A tree whose three questions nobody answers: its root, and when their deadline is."""
    app = await App.create(
        CrashApplication, store=url, providers=[FunctionProvider(model)], lease_ttl=LEASE_TTL
    )
    try:
        paused = await app.execute(CrashExpiryWorkflow, ITEMS, owner_id="u", thread_id=THREAD)
        assert paused.status is ExecutionStatus.PAUSED, paused
        assert paused.wake_at is not None
    finally:
        await app.close()
    return paused.execution_id, paused.wake_at.timestamp()


async def _laddered(url: str, workflow: type[Any]) -> tuple[str, float]:
    """A tree whose three questions wait on a ladder: its root, and when their step is due."""
    app = await App.create(
        CrashApplication, store=url, providers=[FunctionProvider(model)], lease_ttl=LEASE_TTL
    )
    try:
        paused = await app.execute(workflow, ITEMS, owner_id="u", thread_id=THREAD)
        assert paused.status is ExecutionStatus.PAUSED, paused
        assert paused.wake_at is not None
    finally:
        await app.close()
    return paused.execution_id, paused.wake_at.timestamp()


async def _prepare(phase: str, url: str) -> tuple[str | None, list[str]]:
    """The tree a phase starts from (three items paused) and the worker's arguments."""
    if phase in ("execute", "execute-new", "mcp-execute"):
        return None, [phase]
    if phase == "standing":  # the calls approved ahead of time, for the whole tenant
        app = await _app(url, phase)
        try:
            await app.allow(CrashApprovalChannel, scope=StandingScope.TENANT, granted_by="harness")
        finally:
            await app.close()
        return None, ["execute-asked"]  # it ends completed: found by the id the worker logs
    if phase == "wake":
        root, due = await _resting(url)
        return root, ["wake", _ahead_to(due)]
    if phase == "expiry":  # the questions' deadline passes; the sweep applies it
        root, due = await _expiring(url)
        return root, ["wake", _ahead_to(due + ASKED_SPREAD)]
    if phase in ("ladder", "escalate"):  # the questions' step is due; the sweep takes it
        ladder = CrashLadderWorkflow if phase == "ladder" else CrashEscalationWorkflow
        root, due = await _laddered(url, ladder)
        return root, ["wake", _ahead_to(due + ASKED_SPREAD)]
    if phase == "retry":
        root = await _failed(url)
        return root, ["retry", root]
    if phase == "mcp-resume":
        app = await _app(url, phase)
        try:
            workflow = app.assembly.workflows_by_name[MCP_WORKFLOW].cls
            paused = await app.execute(workflow, ITEMS, owner_id="u", thread_id=THREAD)
        finally:
            await app.close()
        [question] = paused.pending
        return paused.execution_id, [phase, str(question.pause_id)]
    children = phase.startswith("children")
    app = await _app(url, phase)
    try:
        paused = await app.execute(
            CrashChildrenWorkflow
            if children
            else CrashGuardedWorkflow
            if phase == "guarded-resume"
            else CrashAskedWorkflow
            if phase in ("asked-resume", "answered-resume")
            else CrashVotedWorkflow
            if phase == "vote"
            else CrashWorkflow,
            ITEMS,
            owner_id="u",
            thread_id=THREAD,
        )
    finally:
        await app.close()
    ids = [str(p.pause_id) for p in sorted(paused.pending, key=_item)]
    if phase == "answered-resume":
        return paused.execution_id, ["answer", ids[0]]
    if phase == "vote":
        return paused.execution_id, ["vote", ids[0]]
    if phase in ("claim", "reassign", "delegate"):
        return paused.execution_id, [phase, ids[0]]
    if phase == "answers":  # by reference, as a protocol door names them
        refs = [p.pause_ref for p in sorted(paused.pending, key=_item)]
        return paused.execution_id, [phase, refs[0], refs[1]]
    if phase in ("resume", "children", "guarded-resume", "asked-resume", "deploy"):
        return paused.execution_id, ["resume", ids[0]]
    if phase == "continue":
        return paused.execution_id, ["continue", ids[0]]
    return paused.execution_id, ["resume", ids[2], BOOM]


def _item(pending: Any) -> str:
    # A pause in a child execution is ordered by the child's place (…@<item index>).
    return pending.child_execution_id or str(pending.item_index or 0)


def _spawn(url: str, plan: str, log: Path, runs: Path, args: list[str]) -> Child:
    environment = {**os.environ, "AGBOSS_TEST_RUNS": str(runs)}
    return start(
        "tests.crash.worker",
        url,
        plan,
        str(log),
        *args,
        output=log.with_name("worker.out"),
        environment=environment,
    )


async def _answer_the_rest(
    app: App, root: str | None, args: list[str], log: Path
) -> ExecutionOutput:
    """What a caller still does: retry what was not recorded, answer what is left."""
    if root is None and args[0] in ("execute-new", "execute-asked"):  # a new thread: retried
        begun = [line.split()[1] for line in _runs(log) if line.startswith("begun ")]
        if begun and await app.store.executions.find_by_id(begun[0]) is not None:
            root = begun[0]
        else:  # if nothing was stored
            workflow = CrashWorkflow if args[0] == "execute-new" else CrashAskedWorkflow
            root = (await app.execute(workflow, ITEMS, owner_id="u")).execution_id
    elif root is None:  # execute: retried if the execution never began
        roots = await app.store.executions.find_roots("default", THREAD)
        if not roots:
            workflow = app.assembly.workflows_by_name[
                MCP_WORKFLOW if args == ["mcp-execute"] else "crash-workflow"
            ].cls
            started = await app.execute(workflow, ITEMS, owner_id="u", thread_id=THREAD)
            root = started.execution_id
        else:
            root = roots[0].execution_id
    elif args[0] == "wake":  # what was not moved, the sweep moves (on the worker's clock)
        await app.recover()
    elif args[0] == "vote":  # the votes not recorded are cast below, as on the others
        pass
    elif args[0] == "delegate":  # delegated again if it was not recorded; answered for u
        if not await app.store.delegations.held_by("default", DELEGATE, app.clock.now()):
            await app.delegate("u", to=DELEGATE, granted_by="u", reason="on leave")
        pause = await app.store.pauses.find_by_tenant_id_and_pause_id("default", args[1])
        assert pause is not None
        if pause.status is PauseStatus.PENDING:
            await app.resume(args[1], decision={"approved": True}, owner_id=DELEGATE)
    elif args[0] == "reassign":  # handed on again if the reassignment was not recorded
        pause = await app.store.pauses.find_by_tenant_id_and_pause_id("default", args[1])
        assert pause is not None
        if pause.status is PauseStatus.PENDING:
            await app.reassign(args[1], role=LEAD, reason="the lead knows", owner_id="u")
    elif args[0] == "answers":  # each answer not recorded is given again
        for ref in args[1:]:
            pause_id = await app.pause_id_of(ref, owner_id="u")
            pause = await app.store.pauses.find_by_tenant_id_and_pause_id("default", pause_id)
            assert pause is not None
            if pause.status is PauseStatus.PENDING:
                await app.resume(pause_id, decision={"approved": True}, owner_id="u")
    elif args[0] == "retry":  # retried again if the reopening was not recorded
        found = await app.store.executions.find_by_id(root)
        if found is not None and found.status is ExecutionStatus.FAILED:
            await app.retry(root, retried_by="harness")
    else:
        pause = await app.store.pauses.find_by_tenant_id_and_pause_id("default", args[1])
        assert pause is not None
        if pause.status is PauseStatus.PENDING:  # the answer was not recorded: retried
            decision: dict[str, Any] = dict(ANSWER) if args[0] == "mcp-resume" else {}
            decision["approved"] = True
            if len(args) > 2:
                decision["override_arguments"] = {"item_id": args[2]}
            await app.resume(args[1], decision=decision, owner_id="u")
    current = await app.get(root)
    while current.status is ExecutionStatus.PAUSED and current.pending:
        first = sorted(current.pending, key=_item)[0]
        asks = McpInputRequest.of(first.ask.arguments) is not None
        decision = (
            CHECKED
            if first.ask.kind is PauseKind.INTERRUPTED
            else ANSWER
            if asks
            else {"approved": True}
        )
        owner = "u"
        if first.votes is not None:  # the next voter who has not voted
            assert first.votes.eligible is not None
            owner = next(v for v in first.votes.eligible if first.votes.of(v) is None)
        current = await app.resume(str(first.pause_id), decision=decision, owner_id=owner)
    return await app.get(root, record=True)


async def _trial(
    kind: str, phase: str, plan: str, folder: Path, env: pytest.MonkeyPatch
) -> Outcome:
    folder.mkdir(parents=True)
    runs, log = folder / "runs.txt", folder / "writes.log"
    env.setenv("AGBOSS_TEST_RUNS", str(runs))  # this process's tools too (the recovery's)
    env.setenv("AGBOSS_TEST_DOWN", str(folder / "down"))
    env.setenv("AGBOSS_TEST_BUSY", str(folder / "busy"))
    async with store_url(kind, folder) as url:
        root, args = await _prepare(phase, url)
        worker = _spawn(url, plan, log, runs, args)
        code = await worker.exited()
        assert code in (0, -signal.SIGKILL), (code, worker.said())
        if code != 0:
            if plan.startswith("lose"):  # a power loss: what was not on the disk is gone
                lost.put_back(url)
            expire_leases(url)  # the killed holder's lease ends, as it would in 0.6 s
        with runs.open("a") as marker:
            marker.write("recovery\n")
        unserved = await _left_alone(url, root, runs) if phase == "deploy" else []
        app = await _app(url, phase, args)
        try:
            await app.recover()
            broken = unserved + await _answers_kept(app, _runs(log))
            if root is not None:  # recovered: finished, failed, or resting on a question
                found = await app.store.executions.find_by_id(root)
                assert found is not None
                assert found.status is not ExecutionStatus.RUNNING, plan
                if found.status is not ExecutionStatus.FAILED:
                    rested = await app.get(root)
                    assert rested.status is not ExecutionStatus.PAUSED or rested.pending, plan
            final = await _answer_the_rest(app, root, args, log)
            broken += await _sends_kept(app, _runs(runs))
            broken += await _chain_kept(app, final)
        finally:
            await app.close()
    broken += _results_kept(_runs(log), _runs(runs, "recovery"))
    assert final.record is not None
    if phase in ("deploy", "continue"):
        broken += _moved_once(final)
    lines = _runs(runs)
    counts = next(
        (line.split() for line in _runs(log) if line.startswith("writes ")), ["", "0", "", "0"]
    )
    return Outcome(
        status=final.status,
        output=None if final.output is None else final.output.model_dump(),
        audit=[
            (
                entry.step.item_index,
                entry.resolution,
                _responder(entry.responder),
                entry.on_behalf_of,
                None if entry.decision is None else entry.decision.approved,
                None if entry.decision is None else entry.decision.override_arguments,
                tuple(vote.voter for vote in entry.votes),
                entry.kind,
            )
            for entry in final.record.pauses
        ],
        tools=_counted(lines, "tool"),
        keys=_keys(lines),
        sends=_counted(lines, "send"),
        withdraws=_counted(lines, "withdraw"),
        reminds=_counted(lines, "remind"),
        writes=int(counts[1]),
        fenced=int(counts[3]),
        volatile=[int(line.split()[1]) for line in _runs(log) if line.startswith("volatile ")],
        broken=broken,
    )


async def _left_alone(url: str, root: str | None, runs: Path) -> list[str]:
    """What a build of the next version that does not continue the old one did to the old
    build's tree: its sweep must move nothing of it, and run nothing."""
    assert root is not None
    before = _runs(runs)
    app = await App.create(NextCrashApplication, store=url, providers=[FunctionProvider(model)])
    try:
        found = await app.store.executions.find_by_id(root)
        moved = await app.recover()
        after = await app.store.executions.find_by_id(root)
    finally:
        await app.close()
    problems = []
    if moved or _runs(runs) != before:
        problems.append(f"a build that does not serve the tree moved it: {moved}")
    if (
        found is None
        or after is None
        or (found.status, found.updated_at)
        != (
            after.status,
            after.updated_at,
        )
    ):
        problems.append("a build that does not serve the tree changed it")
    return problems


def _moved_once(final: ExecutionOutput) -> list[str]:
    """A tree the next build's continuation moved: once, whole — each item call still to be
    made mapped (all three, or the two left when the old build's pass ran the first's) — and
    it finished under the next build."""
    assert final.record is not None
    moves = [
        (move.from_version, move.to_version, {call.tool for call in move.calls}, len(move.calls))
        for move in final.record.continuations
    ]
    if (
        final.workflow_version != "2"
        or len(moves) != 1
        or moves[0][:3] != ("1", "2", {"crash-filed-item-tool"})
        or moves[0][3] not in (2, 3)
    ):
        return [f"the continuation moved the tree {moves} (now at {final.workflow_version})"]
    return []


def _responder(responder: str | None) -> str | None:
    """Who answered, as trials compare it: a standing decision's id is each trial's own."""
    if responder is not None and responder.startswith("standing:"):
        return "standing"
    return responder


# What a commit promised, kept whatever was lost after it: checked in every trial (a killed
# process loses no commit; a lost commit must be one that promised nothing).


async def _answers_kept(app: App, log: list[str]) -> list[str]:
    """An answer — or a vote — whose commit returned (acknowledged: `App.answer`'s receipt,
    the router's 202) is recorded after recovery."""
    lost = []
    for line in log:
        if line.startswith("answered "):
            pause_id = line.split()[1]
            pause = await app.store.pauses.find_by_tenant_id_and_pause_id("default", pause_id)
            if pause is None or pause.status is PauseStatus.PENDING:
                lost.append(f"the acknowledged answer to {pause_id[:8]}… was lost")
        if line.startswith("voted "):  # a vote's commit returned: it is counted
            _, pause_id, voter = line.split()
            pause = await app.store.pauses.find_by_tenant_id_and_pause_id("default", pause_id)
            if pause is None or pause.votes is None or pause.votes.of(voter) is None:
                lost.append(f"the acknowledged vote of {voter} on {pause_id[:8]}… was lost")
        if line.startswith("delegated "):  # a delegation's commit returned: it holds
            delegation_id = line.split()[1]
            if await app.store.delegations.find("default", delegation_id) is None:
                lost.append(f"the acknowledged delegation {delegation_id} was lost")
        if line.startswith("reassigned "):  # its commit returned: closed, asked again
            _, pause_id, asked_id = line.split()
            pause = await app.store.pauses.find_by_tenant_id_and_pause_id("default", pause_id)
            asked = await app.store.pauses.find_by_tenant_id_and_pause_id("default", asked_id)
            if pause is None or pause.resolution is not PauseResolution.REASSIGNED:
                lost.append(f"the acknowledged reassignment of {pause_id[:8]}… was lost")
            if asked is None or asked.status is PauseStatus.CANCELLED:
                lost.append(f"the question {pause_id[:8]}… was handed on as was lost")
        if line.startswith("claimed "):  # a claim's commit returned: it holds until answered
            _, pause_id, by = line.split()
            pause = await app.store.pauses.find_by_tenant_id_and_pause_id("default", pause_id)
            if pause is None or (pause.status is PauseStatus.PENDING and pause.claimed_by != by):
                lost.append(f"the acknowledged claim of {by} on {pause_id[:8]}… was lost")
    return lost


async def _chain_kept(app: App, final: ExecutionOutput) -> list[str]:
    """The decision log holds after every kill: its chain verifies, and it has one entry per
    question the tree's audit trail closed and one per vote — none lost, none twice."""
    verified = await app.verify_decisions()
    if verified.broken is not None:
        return [f"the decision log breaks: {verified.broken}"]
    assert final.record is not None
    logged = [
        entry.entry
        for entry in await app.store.records.decision_log("default", limit=100_000)
        if entry.entry.root_execution_id == final.execution_id
    ]
    decided = Counter(e.pause_ref for e in logged if e.event is DecisionEvent.DECISION)
    votes = Counter((e.pause_ref, e.who) for e in logged if e.event is DecisionEvent.VOTE)
    trail = Counter(entry.pause_ref for entry in final.record.pauses)
    cast = Counter(
        (entry.pause_ref, vote.voter) for entry in final.record.pauses for vote in entry.votes
    )
    if decided != trail or votes != cast:
        return [
            f"the decision log has {dict(decided)} {dict(votes)}, "
            f"the audit trail {dict(trail)} {dict(cast)}"
        ]
    return []


async def _sends_kept(app: App, runs: list[str]) -> list[str]:
    """Every id a channel was sent is a pause of the store: an answer to it is not refused as
    unknown."""
    unknown = []
    for line in runs:
        pause_id = next((w[6:] for w in line.split() if w.startswith("pause=")), None)
        if pause_id is not None and line.startswith("send "):
            found = await app.store.pauses.find_by_tenant_id_and_pause_id("default", pause_id)
            if found is None:
                unknown.append(f"a channel was sent {pause_id[:8]}…, which the store lost")
    return unknown


def _results_kept(log: list[str], recovered: list[str]) -> list[str]:
    """A tool whose result was journaled does not run again after the crash."""
    journaled = {
        line.split()[1]
        for line in log
        if line.startswith("journaled ") and line.endswith(" tool-run")
    }
    again = [
        key[4:]
        for line in recovered
        if line.startswith("tool ")
        for key in line.split()
        if key.startswith("key=") and key[4:] in journaled
    ]
    return [f"a tool whose result was journaled ran again: {key}" for key in again]


def _keys(lines: list[str]) -> dict[str, set[str]]:
    keys: dict[str, set[str]] = {}
    for line in lines:
        if line.startswith("tool "):
            _, item, *rest = line.split()
            for key in (word for word in rest if word.startswith("key=")):
                keys.setdefault(item, set()).add(key)
    return keys


def _asked(trial: Outcome) -> int:
    """How many questions whether to run a call again the trial's person answered."""
    return sum(entry[-1] is PauseKind.INTERRUPTED for entry in trial.audit)


def _compare(
    base: Outcome, trial: Outcome, where: str, *, once: bool = False, in_flight: int = 1
) -> list[str]:
    """What a trial did otherwise than the uninterrupted run; ``once``: its tool must not run
    twice (``FAIL`` or ``ASK``); ``in_flight``: how many calls a kill can cut off at once (each
    run again once: a call is at least once where it may be)."""
    if trial.broken:
        return [f"{where}: {broken}" for broken in trial.broken]
    mixed = {item: keys for item, keys in trial.keys.items() if len(keys) > 1}
    if mixed:  # a call run again is the same call: its key the same
        return [f"{where}: a call run again with another key {mixed}"]
    if once:
        twice = {tool: count for tool, count in trial.tools.items() if count > 1}
        if twice:
            return [f"{where}: ran twice {twice} (a tool that must not)"]
        if trial.output is not None and trial.output.get("note") == INTERRUPTED:
            status_ok = trial.status is base.status
            return [] if status_ok else [f"{where}: status {trial.status} after the interruption"]
        asked = _asked(trial)
        if asked:  # the person said it ran: the audit has the question, the item may not
            trial = replace(
                trial,
                audit=[e for e in trial.audit if e[-1] is not PauseKind.INTERRUPTED],
                tools=trial.tools + Counter(dict.fromkeys(base.tools - trial.tools, 1)),
            )
            if sum((base.tools - trial.tools).values()) > asked:
                return [f"{where}: tool runs {dict(trial.tools)} against {dict(base.tools)}"]
    problems = []
    for name in ("status", "output", "audit"):
        if getattr(base, name) != getattr(trial, name):
            problems.append(f"{where}: {name} {getattr(trial, name)!r} != {getattr(base, name)!r}")
    extra = trial.tools - base.tools
    if (
        base.tools - trial.tools
        or sum(extra.values()) > in_flight
        or max(extra.values(), default=0) > 1
    ):
        problems.append(f"{where}: tool runs {dict(trial.tools)} against {dict(base.tools)}")
    if (
        set(trial.withdraws) != set(base.withdraws)
        or sum((trial.withdraws - base.withdraws).values()) > 1
    ):
        problems.append(
            f"{where}: withdraws {dict(trial.withdraws)} against {dict(base.withdraws)}"
        )
    # A reminder is told at least once: a kill between the call and its record repeats it.
    if set(trial.reminds) != set(base.reminds) or sum((trial.reminds - base.reminds).values()) > 1:
        problems.append(f"{where}: reminds {dict(trial.reminds)} against {dict(base.reminds)}")
    if base.sends - trial.sends:
        problems.append(f"{where}: sends {dict(trial.sends)} against {dict(base.sends)}")
    return problems


def _points(count: int, phase: str, kind: str) -> list[int]:
    """The write points a phase is killed at: every one with ``AGBOSS_CRASH_ALL``; else two
    of them, one per store (SQLite's early, PostgreSQL's late), rotated by the phase."""
    if CRASH_ALL:
        return list(range(1, count + 1))
    offset = PHASES.index(phase)
    if kind == "sqlite":
        return [1 + (offset % count)]
    return [count - (offset % max(count - 1, 1))]


@pytest.mark.parametrize("phase", PHASES)
@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_kill_before_or_after_any_write_loses_nothing_and_runs_nothing_twice(
    kind: str, phase: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = await _trial(kind, phase, "none", tmp_path / "base", monkeypatch)
    assert base.status is ExecutionStatus.COMPLETED
    assert base.writes > 0
    problems: list[str] = []
    trials = interrupted = asked = 0
    for point in _points(base.writes, phase, kind):
        for mode in ("kill-before", "kill-after"):
            plan = f"{mode}:{point}"
            trial = await _trial(kind, phase, plan, tmp_path / plan.replace(":", "-"), monkeypatch)
            trials += 1
            once = phase in ONCE
            problems += _compare(
                base, trial, f"{kind} {phase} {plan}", once=once, in_flight=IN_FLIGHT.get(phase, 1)
            )
            interrupted += trial.output is not None and trial.output.get("note") == INTERRUPTED
            asked += _asked(trial) > 0
    cut = f", {interrupted} ended interrupted (ToolInterruptedError)" if interrupted else ""
    cut += f", {asked} asked whether to run a call again" if asked else ""
    _report(
        f"SIGKILL {kind} {phase}: {base.writes} writes, {trials} trials, {len(problems)} bad{cut}"
    )
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("phase", PHASES if LOSE_ANY else RESTING)
@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_commit_that_did_not_wait_for_the_disk_lost_with_what_followed_loses_nothing(
    kind: str, phase: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A power loss, or the database server's crash, takes the commits not yet on the disk: the
    # store is put back as it was before one that did not wait, once the process that made it
    # went on to just before its next commit that waits (whose flush would have kept it).
    base = await _trial(kind, phase, "none", tmp_path / "base", monkeypatch)
    assert base.volatile or LOSE_ANY, "the phase makes no commit that skips the disk"
    points = base.volatile if CRASH_ALL else base.volatile[-1:]
    mode = "lose"
    if LOSE_ANY:
        points, mode = list(range(1, base.writes + 1)), "lose-any"
    problems: list[str] = []
    for point in points:
        plan = f"{mode}:{point}"
        trial = await _trial(kind, phase, plan, tmp_path / plan.replace(":", "-"), monkeypatch)
        problems += _compare(
            base,
            trial,
            f"{kind} {phase} {plan}",
            once=phase in ONCE,
            in_flight=IN_FLIGHT.get(phase, 1),
        )
    _report(
        f"LOST {kind} {phase}: {base.writes} writes, {len(base.volatile)} not waiting for the "
        f"disk, {len(points)} trials, {len(problems)} bad"
    )
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "phase",
    [
        "resume",
        "guarded-resume",
        "asked-resume",
        "retry",
        "wake",
        "expiry",
        "ladder",
        "escalate",
        "vote",
        "reassign",
        "continue",
    ],
)
@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_holder_stalled_past_its_lease_writes_nothing_and_runs_no_tool_after_takeover(
    kind: str, phase: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = await _trial(kind, phase, "none", tmp_path / "base", monkeypatch)
    points = list(range(1, base.fenced + 1)) if CRASH_ALL else [1, base.fenced]
    problems: list[str] = []
    unreached = 0
    for point in sorted(set(points)):
        folder = tmp_path / f"stop-{point}"
        folder.mkdir()
        runs, log = folder / "runs.txt", folder / "writes.log"
        monkeypatch.setenv("AGBOSS_TEST_RUNS", str(runs))
        monkeypatch.setenv("AGBOSS_TEST_DOWN", str(folder / "down"))
        monkeypatch.setenv("AGBOSS_TEST_BUSY", str(folder / "busy"))
        async with store_url(kind, folder) as url:
            root, args = await _prepare(phase, url)
            worker = _spawn(url, f"stop-before:{point}", log, runs, args)
            for _ in range(3000):
                if "stopped" in _runs(log) or worker.poll() is not None:
                    break
                await asyncio.sleep(0.01)
            if "stopped" not in _runs(log) and _fenced_in(_runs(log)) < point:
                # This run batched its buffered writes otherwise (how many commits three
                # branches' writes take depends on their interleaving): the point is not in it.
                await worker.exited()
                unreached += 1
                continue
            assert "stopped" in _runs(log), (worker.poll(), log.read_text() if log.exists() else "")
            expire_leases(url)  # the stalled holder's lease ends, as it would in 0.6 s
            with runs.open("a") as marker:
                marker.write("takeover\n")
            app = await _app(url, phase, args)
            try:
                await app.recover()
                final = await _answer_the_rest(app, root, args, log)
                os.kill(worker.pid, signal.SIGCONT)
                await worker.exited()
                after = _runs(log, "continued")
                # A stale holder's ReleaseLease is a no-op by its own condition (holder and
                # epoch): the lease it names was taken over; its word that it runs or stopped
                # (KeepInstance, LeaveInstance) is about the instance, not a tree. Anything
                # else is a late write.
                late = [
                    line
                    for line in after
                    if line.startswith("committed")
                    and not line.endswith((" ReleaseLease", " KeepInstance", " LeaveInstance"))
                ]
                ran = [
                    line
                    for line in _runs(runs, "takeover")
                    if line.startswith("tool") and line.endswith(f"pid={worker.pid}")
                ]
                if late or ran:
                    problems.append(f"{kind} stop-before:{point}: wrote {late}, ran {ran}")
                twice = {t: n for t, n in _counted(_runs(runs), "tool").items() if n > 1}
                if phase in ("guarded-resume", "asked-resume") and twice:
                    problems.append(f"{kind} stop-before:{point}: ran twice {twice}")
                if final.status is not ExecutionStatus.COMPLETED:
                    problems.append(f"{kind} stop-before:{point}: {final.status}")
                final_again = await app.get(final.execution_id, record=True)
                assert final_again.record is not None
                asked = [p for p in final_again.record.pauses if p.kind is PauseKind.INTERRUPTED]
                assert len(final_again.record.pauses) - len(asked) == len(base.audit)
            finally:
                await app.close()
    missed = f", {unreached} past the trial's last fenced write" if unreached else ""
    _report(
        f"SIGSTOP {kind} {phase}: {base.fenced} fenced writes, {len(set(points))} trials{missed}"
    )
    assert unreached < len(set(points)), "no trial stopped"
    assert not problems, "\n".join(problems)


def _fenced_in(log: list[str]) -> int:
    """How many fenced writes a worker's run made, as it logged when it ended (``-1``: it did
    not end)."""
    counts = next((line.split() for line in log if line.startswith("writes ")), None)
    return -1 if counts is None else int(counts[3])


def _report(line: str) -> None:
    print(line)  # `make crash` runs with -s: the counts of trials
