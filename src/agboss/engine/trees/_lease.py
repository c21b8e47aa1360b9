"""A pass's hold on its tree: the lease (renewed, checked before user code) and its writes.

A pass buffers what it writes (`PassWrites`) and commits it as one transaction, fenced, at the
points that matter: before anything runs that the pass cannot take back (a tool, a channel's
``send`` or ``withdraw``, a join's handler, a model call), right after a tool ran (its journal
row, with the pause it took), and at its end (with the tree's status and the lease's release).
So an engine transition is whole or absent, and a holder that lost its lease writes nothing:
its next commit fails on the fence, and with nothing to commit `Lease.ensure` checks first.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, TypeVar

from agboss.clock import SystemClock, TimerHandle
from agboss.engine.instance import Runtime
from agboss.enums import ExecutionStatus, PauseStatus
from agboss.errors import LeaseLostError, StoreError
from agboss.models import Usage
from agboss.records import PauseRecord
from agboss.store.protocol import ExecutionRow, Fence, lease_lost
from agboss.store.writes import (
    Acquired,
    AcquireLease,
    AppendStep,
    BeginExecution,
    CancelPause,
    CancelPendingUnder,
    EscalatePause,
    ExpirePause,
    InsertPause,
    JournalRead,
    LockTree,
    MarkPauseSent,
    MarkWithdrawn,
    ReleaseLease,
    RenewLease,
    ResolvePause,
    RestTree,
    Results,
    Write,
    write_one,
)

__all__ = ["Held", "Lease", "PassStart", "PassWrites", "acquire_lease", "commit_acquiring_lease"]

T = TypeVar("T")


class Lease:
    """A held lease: its fence, and how sure this instance is that it still holds it.

    The lease expires on the store's clock (the database server's) when the application runs on
    the system clock, else on the application's Clock (a test clock). This instance counts
    from just before the store granted or renewed it, so its estimate errs on the safe side;
    when it is not sure (past two thirds of the lease, as after a stall), it renews before
    acting, and stops with `LeaseLostError` if the renewal fails.
    """

    def __init__(
        self, runtime: Runtime, fence: Fence, *, granted_at: float, written: bool = True
    ) -> None:
        self.runtime = runtime
        self.fence = fence
        self.lost = False
        self.written = written
        """Whether the lease is in the store. A new tree's is written with the pass's first
        commit: until then no one else can see the tree, so it is held without renewals."""
        self._confirmed = granted_at

    @staticmethod
    def store_now(runtime: Runtime) -> datetime | None:
        """What a lease write passes as now: ``None`` (the store's clock) on the system clock."""
        return None if isinstance(runtime.clock, SystemClock) else runtime.clock.now()

    @staticmethod
    def moment(runtime: Runtime) -> float:
        """Now, in seconds, on the clock the lease is estimated with."""
        if isinstance(runtime.clock, SystemClock):
            return time.monotonic()
        return runtime.clock.now().timestamp()

    def error(self) -> LeaseLostError:
        """The error of acting without the lease."""
        return lease_lost(self.fence)

    def confirmed(self, at: float) -> None:
        """The store granted or renewed the lease as of ``at`` (`moment`, taken before)."""
        self._confirmed = max(self._confirmed, at)

    def surely_held(self) -> bool:
        """Whether the lease cannot have expired yet, by this instance's estimate."""
        if not self.written:
            return not self.lost
        ttl = self.runtime.lease_ttl.total_seconds()
        return not self.lost and self.moment(self.runtime) - self._confirmed < ttl * 2 / 3

    async def renew(self) -> bool:
        """Extends the lease in the store; ``False`` (and `lost`) if it was lost."""
        runtime = self.runtime
        if not self.written:
            return not self.lost  # the tree is not stored yet: no one else can take it
        at = self.moment(runtime)
        held = await write_one(
            runtime.store, RenewLease(self.fence, runtime.lease_ttl, self.store_now(runtime))
        )
        if held:
            self.confirmed(at)
        else:
            self.lost = True
        return bool(held)

    async def ensure(self) -> None:
        """Raises `LeaseLostError` unless the lease is surely still held (renewing if unsure)."""
        if self.lost:
            raise self.error()
        if not self.surely_held() and not await self.renew():
            raise self.error()

    def kept(self) -> _Kept:
        """Keeps the lease renewed while the block (``async with``) runs: every third of its
        time to live, on the clock's timer, until the block ends or the lease is lost."""
        return _Kept(self)

    async def keep_renewed(self) -> bool:
        """One renewal of `kept`; whether to go on (the lease still held, or unsure)."""
        try:
            held = await self.renew()
        except StoreError as error:  # the next renewal tries again; the fence guards
            self.runtime.logger.warning(
                "run.renew-failed: the lease on execution tree %s could not be renewed: %s",
                self.fence.root_execution_id,
                error.message,
            )
            return True
        if not held:
            self.runtime.logger.info(
                "run.lease-lost: execution tree %s was taken over while this instance "
                "(%s) ran a pass on it",
                self.fence.root_execution_id,
                self.fence.holder,
                extra={"event": "run.lease-lost", "execution_id": self.fence.root_execution_id},
            )
        return held


class _Kept:
    """`Lease.kept`'s block: a timer armed for the next renewal, no task until it is due (a
    pass enters and leaves one; a task per pass cost more than the pass's renewals)."""

    def __init__(self, lease: Lease) -> None:
        self._lease = lease
        self._timer: TimerHandle | None = None
        self._renewing: asyncio.Task[Any] | None = None
        self._over = False
        """The block ended: no renewal is armed again."""

    async def __aenter__(self) -> None:
        self._arm()

    async def __aexit__(self, *_: object) -> None:
        self._over = True
        if self._timer is not None:
            self._timer.cancel()
        renewing = self._renewing
        if renewing is not None:  # cut off, as the block is over
            renewing.cancel()
            await asyncio.wait([renewing])

    def _arm(self) -> None:
        clock = self._lease.runtime.clock
        self._timer = clock.call_at(clock.now() + self._lease.runtime.lease_ttl / 3, self._due)

    async def _due(self) -> None:
        lease = self._lease
        if self._over or lease.lost:
            return
        self._renewing = asyncio.current_task()
        try:
            going_on = await lease.keep_renewed()
        finally:
            self._renewing = None
        if going_on and not self._over:
            self._arm()


@dataclass(frozen=True, slots=True)
class PassStart:
    """What a pass starts with: the tree's lease, its root, and what the transaction that gave
    the lease already read — so that the pass does not read it again.

    Attributes:
        row: The root execution, as the lease's transaction read it (or as it begins).
        lease: The tree's lease, held.
        fresh: A new tree: nothing of it is stored yet to be read (no journal, no pauses).
        recovering: Its last pass was cut off (it was running): every waiting branch and
            paused child is re-entered.
        resolved: The tree's resolved pauses, read with the lease (``None``: not read; the pass
            reads them).
        journal: The steps of the answered step's scope, read with the lease (replayed once).
        any_pending: Whether the tree had pending pauses when the lease was acquired (``None``:
            not known).
        begin: A new tree's beginning, written with the pass's first commit (its lease not
            yet written: `Lease.written`).
        begun: The journal keys of the tool intents written with the lease, for this pass
            (not a sign of a call cut off).
        woken: A wake-up is due whose branches are not known (a resting step's of a tree that
            rested before they were kept): every waiting branch and paused child is
            re-entered, as when recovering, though no pass was cut off.
        rested: A resting step's wait is due: the branch paths of the tree's resting steps,
            entered as those of the questions due are (``None``: none is due).
        due: The pending pauses whose deadline or ladder step had come, read with the lease:
            their branches are entered (a pass woken by them alone enters only those).
        was: The root's status before the lease's transaction set it running (a pass that
            stops before it writes anything puts it back).
    """

    row: ExecutionRow
    lease: Lease
    fresh: bool = False
    recovering: bool = False
    resolved: Sequence[PauseRecord] | None = None
    journal: JournalRead | None = None
    any_pending: bool | None = None
    begin: BeginExecution | None = None
    begun: frozenset[str] = frozenset()
    woken: bool = False
    rested: tuple[str, ...] | None = None
    was: ExecutionStatus | None = None
    due: Sequence[PauseRecord] = ()

    @classmethod
    def held(cls, held: Held) -> PassStart:
        """A pass on a tree whose lease this instance acquired, with what acquiring it read."""
        acquired = held.acquired
        assert acquired.row is not None
        return cls(
            acquired.row,
            held.lease,
            recovering=acquired.status is ExecutionStatus.RUNNING,
            resolved=acquired.resolved,
            journal=acquired.journal,
            any_pending=acquired.any_pending,
            begun=acquired.intents,
            was=acquired.status,
            due=acquired.due,
        )


@dataclass(frozen=True, slots=True)
class Held:
    """A tree's lease, held by this instance: the lease, and what the transaction that acquired
    it read (`Acquired`)."""

    lease: Lease
    acquired: Acquired

    async def release(self) -> None:
        """Frees the lease (nothing to move)."""
        store = self.lease.runtime.store
        await store.write([ReleaseLease(self.lease.fence)], fence=self.lease.fence)


def acquire(
    runtime: Runtime,
    root_execution_id: str,
    *,
    start_pass: bool,
    journal: tuple[str, str] | None,
    intents: tuple[AppendStep, ...] = (),
    answered: ResolvePause | None = None,
    version: str | None = None,
) -> AcquireLease:
    """The write that acquires a tree's lease for this instance (see `AcquireLease`), with the
    ``intents`` it journals only if it acquired the lease (and recorded ``answered``, and the
    root runs under ``version`` when it is given)."""
    return AcquireLease(
        root_execution_id,
        runtime.holder,
        runtime.lease_ttl,
        Lease.store_now(runtime),
        start_pass=start_pass,
        journal=journal,
        intents=intents,
        grant_id=uuid.uuid4().hex if intents else None,
        answered=answered if intents else None,
        version=version,
    )


async def acquire_lease(
    runtime: Runtime, root_execution_id: str, *, start_pass: bool = False
) -> Held | None:
    """Tries to acquire a tree's lease; ``None`` when another instance holds it."""
    at = Lease.moment(runtime)
    write = acquire(runtime, root_execution_id, start_pass=start_pass, journal=None)
    acquired = await write_one(runtime.store, write)
    return (
        None if acquired is None else Held(Lease(runtime, acquired.fence, granted_at=at), acquired)
    )


async def commit_acquiring_lease(
    runtime: Runtime,
    write: Write[T],
    root_execution_id: str,
    *,
    journal: tuple[str, str] | None,
    intents: tuple[AppendStep, ...] = (),
    version: str | None = None,
) -> tuple[T, Held | None]:
    """Commits ``write`` and acquires the tree's lease for a pass in the same transaction (with
    ``intents`` if it acquired it, made under the root's ``version``); the write's result, and
    the lease when it was free."""
    at = Lease.moment(runtime)
    answered = write if isinstance(write, ResolvePause) else None
    take = acquire(
        runtime,
        root_execution_id,
        start_pass=True,
        journal=journal,
        intents=intents,
        answered=answered,
        version=version,
    )
    # The lease row first, as a pass's transactions lock it: see `LockTree`.
    results = await runtime.store.write([LockTree(root_execution_id), write, take])
    acquired = results[take]
    if acquired is None:
        return results[write], None
    return results[write], Held(Lease(runtime, acquired.fence, granted_at=at), acquired)


class PassWrites:
    """What a pass has written but not yet committed, and the commits.

    Args:
        lease: The pass's lease.
        any_pending: Whether the tree had pending pauses when the lease was acquired (``None``: not
            known).
        begin: A new tree's beginning (its thread, execution and lease), written with the
            pass's first commit (the lease not yet written: `Lease.written`).
    """

    def __init__(
        self, lease: Lease, *, any_pending: bool | None = None, begin: BeginExecution | None = None
    ) -> None:
        self.lease = lease
        self._begin = begin
        self.may_have_pending = any_pending is not False
        """Whether the tree may have pending pauses: it had some when the lease was acquired (or
        that is not known), or this pass asked a question (only a lease holder asks)."""
        self._owed: set[tuple[str, str]] = set()
        self.released = False
        """Whether a commit released the lease (the pass is over)."""
        self.spent: dict[str, Usage] = {}
        """What the steps this pass journaled spent, by execution."""
        self.changed: set[str] | None = set()
        """The executions whose rows this pass's commits changed (``None``: not known)."""
        self._buffered: list[Write[Any]] = []
        self._lock = asyncio.Lock()
        self._sent: asyncio.Future[Results] | None = None
        """The last commit `send` started, until a commit waits for it."""

    def add(self, *writes: Write[Any]) -> None:
        """Buffers writes for the pass's next commit."""
        self._note_asked(writes)
        for write in writes:
            if isinstance(write, AppendStep) and write.entry.usage is not None:
                before = self.spent.get(write.execution_id, Usage())
                self.spent[write.execution_id] = before + write.entry.usage
        self._buffered.extend(writes)

    def _note_asked(self, writes: Sequence[Write[Any]]) -> None:
        # Noted as soon as a question is written or buffered: the commit that ends the tree
        # is built before it is sent.
        if any(isinstance(write, InsertPause) for write in writes):
            self.may_have_pending = True

    async def flush(self) -> None:
        """Commits what is buffered; with nothing buffered, checks the lease. Call it before
        anything that cannot be taken back."""
        await self.commit(())

    async def send(self) -> None:
        """Commits what is buffered without waiting for the acknowledgement: the pass goes on
        while the commit is on its way, and its next commit (every `flush` before something
        that cannot be taken back, and the commit that ends the pass) waits for it first and
        raises what it raised. A crash meanwhile leaves what a crash before or after the commit
        would: the commit is sent at once, as `flush` sends it, only not awaited.
        """
        batch, self._buffered = self._buffered, []
        self._sent = asyncio.ensure_future(self._after(self._sent, batch))
        # Two turns of the loop: the commit takes the lock, then the store puts it on the wire.
        await asyncio.sleep(0)
        await asyncio.sleep(0)

    async def _after(
        self, before: asyncio.Future[Results] | None, batch: list[Write[Any]]
    ) -> Results:
        """Commits ``batch`` once the commit sent before it (if any) is done."""
        if before is not None:
            await before
        async with self._lock:
            return await self._commit(batch)

    async def flushed(self) -> None:
        """Waits for the commits `send` started; raises what one raised."""
        sent = self._sent
        if sent is None:
            return
        try:
            await sent
        finally:
            if self._sent is sent:
                self._sent = None

    async def commit_one(self, write: Write[T]) -> T:
        """Commits what is buffered and ``write``; the result of ``write``."""
        return (await self.commit([write]))[write]

    async def commit(self, writes: Sequence[Write[Any]]) -> Results:
        """Commits what is buffered and ``writes`` as one fenced transaction; its results
        (``results[write]`` for each of ``writes``).

        Raises:
            LeaseLostError: The lease was lost; nothing is written.
        """
        await self.flushed()
        async with self._lock:
            self._note_asked(writes)
            batch = [*self._buffered, *writes]
            self._buffered = []
            return await self._commit(batch)

    async def _commit(self, batch: list[Write[Any]]) -> Results:
        """Commits ``batch`` (the lock held): with the tree's beginning if it is not written."""
        if self.lease.lost:
            raise self.lease.error()
        begin, self._begin = self._begin, None
        if not batch and begin is None:
            await self.lease.ensure()
            return Results((), ())
        fence: Fence | None = self.lease.fence
        if begin is not None:
            # The tree is written with its lease in this commit: there is no lease to
            # check yet, and no one else can have taken a tree that was not stored.
            runtime = self.lease.runtime
            at = Lease.moment(runtime)
            begin = replace(begin, now=Lease.store_now(runtime))
            batch, fence = [begin, *batch], None
        # Shielded: a branch cancelled meanwhile must not cut off its siblings' writes.
        writing = asyncio.ensure_future(self.lease.runtime.store.write(batch, fence=fence))
        if begin is not None:
            writing.add_done_callback(lambda done: self._begun(done, begin, at))
        try:
            results = await asyncio.shield(writing)
        except LeaseLostError:
            self.lease.lost = True
            raise
        for write, result in results.pairs():
            if write is not begin:
                self._note(write, result)
        return results

    def _begun(self, done: asyncio.Future[Any], begin: BeginExecution, at: float) -> None:
        """The commit that carried the tree's beginning ended: the lease is written, or the
        next commit carries the beginning again."""
        if done.cancelled() or done.exception() is not None:
            self._begin = begin
        else:
            self.lease.written = True
            self.lease.confirmed(at)

    def _note(self, write: Write[Any], result: Any) -> None:
        """What a committed write tells the pass: the lease freed, executions changed, a
        channel owed a withdraw."""
        if isinstance(write, ReleaseLease) or (isinstance(write, RestTree) and result is not None):
            self.released = True
        changed = write.changed_executions()
        if changed is None:
            self.changed = None  # which, not known: the tree is read whole
        elif self.changed is not None:
            self.changed.update(changed)
        self._note_withdrawals(write, result)

    def _note_withdrawals(self, write: Write[Any], result: Any) -> None:
        if isinstance(write, MarkPauseSent) and result is PauseStatus.CANCELLED:
            self._owed.add((write.tenant_id, write.pause_id))  # closed while send returned
        elif isinstance(write, CancelPause | CancelPendingUnder | ExpirePause):
            closed = result if isinstance(result, list) else [result]
            self._owed.update(
                (pause.tenant_id, pause.pause_id)
                for pause in closed
                if isinstance(pause, PauseRecord) and pause.is_sent
            )
        elif isinstance(write, EscalatePause) and result is not None and result.closed.is_sent:
            self._owed.add((write.tenant_id, write.pause_id))  # asked of another role instead
        elif isinstance(write, MarkWithdrawn):
            self._owed.discard((write.tenant_id, write.pause_id))

    @property
    def withdrawals_due(self) -> bool:
        """Whether a pause this pass closed still owes its channel a ``withdraw``."""
        return bool(self._owed)

    async def release(self) -> None:
        """Commits what is buffered and frees the lease — of a new tree not written yet,
        nothing: no one has its id, and nothing of it was promised."""
        await self.flushed()  # a beginning sent with it is written, or given back
        if self._begin is not None:
            self._buffered = []
            self.released = True
            return
        await self.commit([ReleaseLease(self.lease.fence)])

    async def discard(self) -> None:
        """Forgets what is buffered (the lease was lost: the new holder redoes it), once a
        commit still on its way is done (what it raised is the pass's error already)."""
        self._buffered = []
        with contextlib.suppress(Exception):
            await self.flushed()
