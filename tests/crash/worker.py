"""A process the crash harness kills (SIGKILL) or stalls (SIGSTOP) at one store write.

``python -m tests.crash.worker URL PLAN LOG PHASE [PAUSE_ID [OVERRIDE]]``: runs one phase —
``execute`` the crash workflow (``execute-children``: its per-item child workflows;
``execute-new``: on a new thread, whose tree is written with its first commit;
``execute-asked``: the workflow whose tools ask before a call cut off runs again, on a new
thread), or
``resume`` a pause (approved, with ``OVERRIDE`` as its item id when given), ``answer`` it
(`App.answer`: recorded at once, the tree moved in the background, which ``close`` waits
for), ``vote`` on it as two of its three voters (the second vote decides it),
``answers REF REF`` two of them by reference as the protocol doors do (AG-UI's resume, an
A2A message, an MCP round: the first recorded, the second moving the tree with both),
``retry ROOT`` a failed tree (`App.retry`), ``wake AHEAD`` a resting tree on a clock
AHEAD seconds ahead, where its retry is due (the sweep's `App.recover`), or
``mcp-execute`` / ``mcp-resume PAUSE_ID`` the MCP workflow whose tool asks a question
(answered ``{"sure": true}``) — on an `App` whose store counts every `Store.write`.
``PLAN`` is ``none`` (count only), ``kill-before:K``, ``kill-after:K`` (the K-th write; the
lease keeper's renewals are not counted, as their number depends on timing),
``stop-before:K`` (the K-th fenced write: a pass's), or ``lose:K`` (the first write from the
K-th on that does not wait for the disk — a run may batch its buffered writes into other
commits than the base run did: the store copied before it, the process killed before the next
write that does, or at its end — `tests.crash.lost`; ``lose-any:K`` loses the K-th, durable
or not: what would go wrong if it did not wait). Every write is logged to ``LOG`` (each
that does not wait for the disk as ``volatile K`` too, and what a commit promised: ``answered
PAUSE_ID``, ``voted PAUSE_ID VOTER``, ``journaled STEP_KEY KIND``), so the harness can tell
what was committed, and when.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from datetime import timedelta
from pathlib import Path
from typing import Any

from agboss import App, FunctionProvider
from agboss.protocols._questions import Answer, answering, checked_answers
from agboss.store import Fence, Store, store_from
from agboss.store.writes import (
    AppendStep,
    BeginExecution,
    CastVote,
    ClaimPause,
    GrantDelegation,
    KeepInstance,
    LeaveInstance,
    ReassignPause,
    RenewLease,
    ResolvePause,
    Results,
    Write,
)
from agboss.web import Caller
from tests.crash import lost
from tests.crash.app import (
    DELEGATE,
    ITEMS,
    LEAD,
    MCP_WORKFLOW,
    THREAD,
    VOTERS,
    CrashApplication,
    CrashAskedWorkflow,
    CrashChildrenWorkflow,
    CrashWorkflow,
    FilingCrashApplication,
    crash_mcp_application,
    model,
)
from tests.crash.clock import clock_ahead_by

LEASE_TTL = timedelta(milliseconds=600)
"""Short, so that the harness need not wait long for a killed holder's lease to expire."""


_UNCOUNTED = (RenewLease, KeepInstance, LeaveInstance)


class CountingStore:
    """A store that counts its writes and dies (or stalls) at the planned one."""

    def __init__(self, inner: Store, url: str, plan: str, log: Path) -> None:
        self.inner = inner
        self.url = url
        self.mode, _, point = plan.partition(":")
        self.point = int(point) if point else 0
        self.log = log
        self.writes = 0
        self.fenced = 0
        self.losing = False
        """Whether a commit that did not wait for the disk is to be lost (``lose:K``)."""

    def _note(self, line: str) -> None:
        with self.log.open("a") as log:
            log.write(line + "\n")

    async def write(self, writes: Sequence[Write[Any]], *, fence: Fence | None = None) -> Results:
        # A pass's writes are counted (and are the points), not its keeper's renewals nor an
        # instance's word that it runs: how many of those are made depends on how long a pass
        # takes, and a point the base run reached must be the same write in every trial.
        point = not all(isinstance(write, _UNCOUNTED) for write in writes)
        if point:
            self.writes += 1
            self.fenced += int(fence is not None)
        names = ",".join(type(write).__name__ for write in writes)
        volatile = not any(write.durable for write in writes)
        if point and self.mode == "kill-before" and self.writes == self.point:
            os.kill(os.getpid(), signal.SIGKILL)
        # The first commit from the K-th on that does not wait for the disk (lose-any: any):
        # a run may batch its buffered writes into other commits than the base run did.
        if (
            point
            and self.mode.startswith("lose")
            and not self.losing
            and self.writes >= self.point
            and (volatile or self.mode == "lose-any")
        ):
            lost.keep(self.url)
            self.losing = True
            self._note(f"losing {self.writes}")
        elif self.losing and not volatile:  # its flush would have kept the lost commit
            os.kill(os.getpid(), signal.SIGKILL)
        if (
            point
            and self.mode == "stop-before"
            and fence is not None
            and (self.fenced == self.point)
        ):
            self._note("stopped")
            os.kill(os.getpid(), signal.SIGSTOP)
            self._note("continued")
        try:
            results = await self.inner.write(writes, fence=fence)
        except Exception as error:
            self._note(f"refused {self.writes} {names} {type(error).__name__}")
            raise
        changed = not all(
            isinstance(write, RenewLease) and not result for write, result in results.pairs()
        )
        self._note(f"{'committed' if changed else 'unchanged'} {self.writes} {names}")
        if volatile and point:
            self._note(f"volatile {self.writes}")
        for write, result in results.pairs():
            if isinstance(write, BeginExecution):  # the harness finds a new thread's tree
                self._note(f"begun {write.row.execution_id}")
            # What a commit promised: an answer acknowledged, a step's result kept.
            if isinstance(write, ResolvePause) and result is not None:
                self._note(f"answered {write.pause.pause_id}")
            if isinstance(write, CastVote) and result.counted:
                self._note(f"voted {write.pause.pause_id} {write.vote.voter}")
                if result.resolved is not None:
                    self._note(f"answered {write.pause.pause_id}")
            if isinstance(write, ClaimPause) and result is not None:
                self._note(f"claimed {write.pause_id} {write.by}")
            if isinstance(write, GrantDelegation):
                self._note(f"delegated {write.delegation.delegation_id}")
            if isinstance(write, ReassignPause) and result is not None:
                self._note(f"reassigned {write.pause_id} {result.asked.pause_id}")
            if isinstance(write, AppendStep):
                self._note(f"journaled {write.execution_id}/{write.entry.key} {write.entry.kind}")
        if point and self.mode == "kill-after" and self.writes == self.point:
            os.kill(os.getpid(), signal.SIGKILL)
        return results

    @property
    def signals(self) -> Any:
        return self.inner.signals

    @property
    def executions(self) -> Any:
        return self.inner.executions

    @property
    def journal(self) -> Any:
        return self.inner.journal

    @property
    def leases(self) -> Any:
        return self.inner.leases

    @property
    def pauses(self) -> Any:
        return self.inner.pauses

    @property
    def records(self) -> Any:
        return self.inner.records

    @property
    def branches(self) -> Any:
        return self.inner.branches

    @property
    def ledger(self) -> Any:
        return self.inner.ledger

    @property
    def standing(self) -> Any:
        return self.inner.standing

    @property
    def delegations(self) -> Any:
        return self.inner.delegations

    @property
    def builds(self) -> Any:
        return self.inner.builds

    def session(self) -> AbstractAsyncContextManager[None]:
        return self.inner.session()

    async def open(self, *, migrate: bool = True) -> None:
        await self.inner.open(migrate=migrate)

    async def migrate(self) -> int:
        return await self.inner.migrate()

    async def schema_version(self) -> int:
        return await self.inner.schema_version()

    async def close(self) -> None:
        await self.inner.close()


async def main(url: str, plan: str, log: str, phase: str, *rest: str) -> None:
    store = CountingStore(store_from(url), url, plan, Path(log))
    mcp = phase.startswith("mcp-")
    # A phase that waits on time runs where it is due (`AheadClock`): ``wake AHEAD``.
    ahead = float(rest[0]) if phase == "wake" else 0.0
    app = await App.create(
        crash_mcp_application()
        if mcp
        else FilingCrashApplication  # the next build, which moves the old one's tree to it
        if phase == "continue"
        else CrashApplication,
        store=store,
        providers=[FunctionProvider(model)],
        lease_ttl=LEASE_TTL,
        clock=clock_ahead_by(ahead),
    )
    try:
        if phase == "mcp-execute":
            workflow = app.assembly.workflows_by_name[MCP_WORKFLOW].cls
            await app.execute(workflow, ITEMS, owner_id="u", thread_id=THREAD)
        elif phase == "mcp-resume":
            answer = {"approved": True, "override_arguments": {"sure": True}}
            await app.resume(rest[0], decision=answer, owner_id="u")
        elif phase in ("execute", "execute-children"):
            workflow = CrashWorkflow if phase == "execute" else CrashChildrenWorkflow
            await app.execute(workflow, ITEMS, owner_id="u", thread_id=THREAD)
        elif phase == "execute-new":
            await app.execute(CrashWorkflow, ITEMS, owner_id="u")
        elif phase == "execute-asked":  # on a new thread: tools that ask before a re-run
            await app.execute(CrashAskedWorkflow, ITEMS, owner_id="u")
        elif phase == "wake":  # a tree that rests until a retry is due, moved: it is
            await app.recover()
        elif phase == "retry":  # a failed tree run again from its journal
            await app.retry(rest[0], retried_by="harness")
        elif phase == "vote":  # two voters: the first leaves it waiting, the second decides
            for voter in VOTERS[:2]:
                await app.resume(rest[0], decision={"approved": True}, owner_id=voter)
        elif phase == "claim":  # its owner claims it, then answers it
            await app.claim(rest[0], owner_id="u")
            await app.resume(rest[0], decision={"approved": True}, owner_id="u")
        elif phase == "reassign":  # its owner hands it to the lead, then answers it there
            made = await app.reassign(rest[0], role=LEAD, reason="the lead knows", owner_id="u")
            waiting = await app.pending(owner_id="u")
            [asked] = [e.pause for e in waiting.entries if e.pause.pause_ref == made.pause_ref]
            assert asked.pause_id is not None  # the owner's own question: its id is theirs
            await app.resume(asked.pause_id, decision={"approved": True}, owner_id="u")
        elif phase == "delegate":  # its owner delegates to d, who answers it for them
            await app.delegate("u", to=DELEGATE, granted_by="u", reason="on leave")
            await app.resume(rest[0], decision={"approved": True}, owner_id=DELEGATE)
        elif phase == "answers":  # a protocol door's: the first recorded, the second moves both
            caller = Caller(owner_id="u")
            answers = [Answer(ref, decision={"approved": True}) for ref in rest]
            await (await answering(app, caller, await checked_answers(app, caller, answers)))
        elif phase == "answer":  # recorded at once, moved in the background (before close)
            await app.answer(rest[0], decision={"approved": True}, owner_id="u")
        else:
            pause_id, *override = rest
            decision: dict[str, Any] = {"approved": True}
            if override:
                decision["override_arguments"] = {"item_id": override[0]}
            await app.resume(pause_id, decision=decision, owner_id="u")
    finally:
        await app.close()  # which waits for a move in the background: counted too
        store._note(f"writes {store.writes} fenced {store.fenced}")
        if store.losing:  # no durable write came after the lost one: lost at the end
            os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
