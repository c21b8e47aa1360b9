"""The durable engine: executions begin, passes move them, recovery picks up the interrupted.

A pass holds the tree's lease (renewed on the Clock while it runs), replays each execution's
journal and runs its flow from the start: journaled steps return their results, new ones run
once. A pass ends when the flow finishes or fails (or, with pauses, when nothing can move), in
one commit: the tree's status, its pauses closed, and the lease's release.

A pass marks its tree running in its first commit, so a pass that was cut off leaves the tree
running: the sweep finds it and runs a recovering pass, which re-enters every waiting branch and
paused child and reads what was done from the store — the journal, the branch rows, the pauses —
instead of trusting what the cut-off pass was doing.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Coroutine
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ValidationError

from agboss.assembly import WorkflowDefinition
from agboss.clock import TimerHandle
from agboss.context import DEFAULT_TENANT_ID
from agboss.engine._continuing import continue_tree, continue_waiting, moves_by_continuation
from agboss.engine._pass import Pass, resolved_pauses
from agboss.engine._retrying import retried_root
from agboss.engine.instance import Runtime, build_record, check_build
from agboss.engine.questions import (
    CallSaid,
    Handed,
    Handoff,
    cast_vote,
    lacking,
    not_served,
    reassign_question,
    said_of_cut_off,
    tell_owed_withdrawals,
)
from agboss.engine.runs import FlowRunner, describe_validation_error
from agboss.engine.trees import (
    ApplicationHooks,
    Held,
    Lease,
    PassChanges,
    PassEnd,
    PassStart,
    PassState,
    PassWrites,
    TreeReader,
    Wakeups,
    acquire_lease,
    commit_acquiring_lease,
    stored_error,
)
from agboss.enums import ExecutionStatus
from agboss.errors import (
    AgbossError,
    AgentFailedError,
    DefinitionChangedError,
    DtoValidationError,
    LeaseLostError,
    StoreError,
    ThreadOwnerError,
    UnknownExecutionError,
    UnknownWorkflowError,
    VersionNotServedError,
)
from agboss.inputs import has_non_finite
from agboss.observability import log_event, span
from agboss.records import ExecutionOutput, ExecutionPauseEvent, PauseRecord
from agboss.store.protocol import ExecutionRow, Fence, Signal, SignalKind
from agboss.store.writes import (
    Announce,
    AppendStep,
    BeginExecution,
    CastVote,
    ReopenTree,
    ResolvePause,
    RestTree,
    SetExecutionStatus,
    Voted,
    Write,
    write_one,
)

__all__ = ["Engine"]


def _new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


class Engine:
    """Begins, moves and recovers executions for one `App` instance."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.hooks = ApplicationHooks(runtime)
        self.flows = FlowRunner(runtime)
        self.reader = TreeReader(runtime)
        self._background: set[asyncio.Task[Any]] = set()
        self._timers: dict[str, TimerHandle] = {}
        self._stranded: set[str] = set()
        """The trees this build cannot move (`DefinitionChangedError`), said once each."""
        """This instance's wake-ups of trees that rest until a time, by root."""
        self.wakeups = Wakeups(
            runtime, move=self._move_heard, sweep=self.recover, spawn=self.in_background
        )
        """What this instance hears of the others (a lease freed, an answer left to move)."""

    # ---- moving in the background ----------------------------------------------------

    def in_background(self, work: Coroutine[Any, Any, Any], root_execution_id: str) -> None:
        """Runs a move without a caller waiting for it. What it raises is logged: the answer
        is recorded either way, and the sweep moves a tree no pass took."""

        async def guarded() -> None:
            try:
                await work
            except AgbossError as error:
                self.runtime.logger.warning(
                    "execution.background-move-failed: execution %s: %s",
                    root_execution_id,
                    error.message,
                    extra={"event": "execution.background-move-failed"},
                )
            except Exception:
                self.runtime.logger.exception(
                    "execution.background-move-failed: execution %s", root_execution_id
                )

        task = asyncio.get_running_loop().create_task(guarded())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def check_build(self) -> None:
        """An instance's start: its build held against what waits in the store.

        Raises:
            AssemblyError: A workflow's definition changed while its version did not, and
                executions of that version still wait (rule ``workflow.changed-without-version``).
        """
        await check_build(self.runtime)

    async def finish_background(self, within: timedelta) -> None:
        """Waits up to ``within`` for the background moves, then cuts off the rest (a cut-off
        pass is recovered from what is stored, by any instance); disarms the wake-ups (any
        instance's sweep moves a tree that is due); stops hearing the other instances."""
        self.wakeups.close()
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        if not self._background:
            return
        _, late = await asyncio.wait(set(self._background), timeout=within.total_seconds())
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late)

    # ---- beginning -----------------------------------------------------------------

    def definition(self, workflow: type[Any]) -> WorkflowDefinition:
        """The workflow's definition in this application."""
        try:
            definition = self.runtime.assembly.workflows.get(workflow)
        except TypeError:  # not even a class: unhashable
            definition = None
        if definition is None:
            name = getattr(workflow, "__qualname__", repr(workflow))
            raise UnknownWorkflowError(f"{name} is not a workflow of this application")
        return definition

    async def execute(
        self,
        workflow: type[Any],
        input: BaseModel | dict[str, Any],
        *,
        tenant_id: str | None,
        owner_id: str,
        thread_id: str | None,
        record: bool,
    ) -> ExecutionOutput:
        """Begins an execution and runs its first pass."""
        runtime = self.runtime
        definition = self.definition(workflow)
        start = definition.graph.start_node
        value = _validate_input(start.input, input, definition.spec.name)
        if not owner_id:
            raise ThreadOwnerError(
                "owner_id is empty", hint="pass the id of the person the execution acts for"
            )
        tenant = tenant_id or DEFAULT_TENANT_ID
        now = runtime.clock.now()
        row = ExecutionRow.starting(
            execution_id=_new_id("ex"),
            parent=None,
            tenant_id=tenant,
            thread_id=thread_id or _new_id("th"),
            owner_id=owner_id,
            workflow=definition.spec.name,
            workflow_version=definition.spec.version,
            input_json=_stored_input(start.input, value, definition.spec.name),
            now=now,
            fingerprint=definition.fingerprint,
        )
        log_event(
            runtime.logger,
            logging.INFO,
            "run.started",
            "execution %(execution_id)s of %(workflow)s started (tenant %(tenant_id)s, "
            "thread %(thread_id)s)",
            execution_id=row.execution_id,
            workflow=row.workflow,
            tenant_id=tenant,
            thread_id=row.thread_id,
        )
        at = Lease.moment(runtime)
        build = build_record(runtime)
        begin = BeginExecution(
            row, runtime.holder, runtime.lease_ttl, Lease.store_now(runtime), build=build
        )
        if thread_id is None:
            # A new thread is no one else's: the tree is written with its first pass's first
            # commit (one transaction fewer), and a process that dies before it leaves nothing.
            fence = Fence(row.root_execution_id, runtime.holder, 1)
            lease = Lease(runtime, fence, granted_at=at, written=False)
            first = PassStart(row, lease, fresh=True, begin=begin)
        else:
            # A thread named by the caller may be another owner's: checked before anything
            # runs.
            fence = await write_one(runtime.store, begin)
            first = PassStart(row, Lease(runtime, fence, granted_at=at), fresh=True)
        output = await self._pass(first, record=record)
        runtime.memory.build_kept = True  # the begin committed: the build is in the store
        return output

    # ---- passes --------------------------------------------------------------------

    async def _pass(self, start: PassStart, *, record: bool) -> ExecutionOutput:
        """Moves a tree with its lease, from what the transaction that gave it read."""
        row, fence = start.row, start.lease.fence
        with span(
            "pass",
            execution_id=row.execution_id,
            workflow=row.workflow,
            tenant_id=row.tenant_id,
            holder=fence.holder,
            epoch=fence.epoch,
        ) as current:
            result = await self._hold_and_run(start, record=record)
            current.set_attribute("agboss.status", result.status.value)
            current.set_attribute("agboss.pending", len(result.pending))
            _log_rest(self.runtime, row, result)
            return result

    async def _hold_and_run(self, start: PassStart, *, record: bool) -> ExecutionOutput:
        runtime = self.runtime
        row, lease = start.row, start.lease
        # A new tree has no pauses; a tree whose lease read none has only what this pass asks.
        writes = PassWrites(
            lease, any_pending=False if start.fresh else start.any_pending, begin=start.begin
        )
        resolved = start.resolved
        try:
            if row.workflow not in runtime.assembly.workflows_by_name:
                raise lacking(row.root_execution_id, f"the workflow {row.workflow!r}")
            if not runtime.assembly.serves(row.workflow, row.workflow_version):
                raise not_served(row)
            if moves_by_continuation(runtime, row) is not None:
                # Its calls are asked anew: what was read of them with the lease is not read.
                row = await continue_tree(runtime, writes, row)
                start, resolved = replace(start, row=row, journal=None), None
            if resolved is None and not start.fresh:
                resolved = await resolved_pauses(runtime, row)
            for pause in resolved or ():  # an answer this build cannot take: before any write
                if runtime.assembly.tool_named(pause.agent, pause.ask.tool) is None:
                    raise lacking(
                        row.root_execution_id,
                        f"the tool {pause.ask.tool!r} of the agent {pause.agent!r}",
                    )
        except DefinitionChangedError as error:
            if isinstance(error, VersionNotServedError):  # moved to a later build meanwhile
                said = Signal(SignalKind.ANSWERED, row.root_execution_id, runtime.holder)
                writes.add(Announce(said))  # its answer is for a build that serves it
            # Nothing ran: the tree rests as it was (its wake-up kept), the lease freed.
            if start.was is not None and start.was is not row.status:
                await writes.commit_one(
                    RestTree(
                        writes.lease.fence,
                        runtime.clock.now(),
                        None,
                        row.wake_at,
                        row.resting_until,
                        row.resting_paths,
                    )
                )
            else:
                await _let_go(runtime, writes)
            raise
        if row.status is not ExecutionStatus.RUNNING:
            # In the pass's first commit: a pass cut off after it leaves the tree running.
            writes.add(
                SetExecutionStatus(row.execution_id, ExecutionStatus.RUNNING, runtime.clock.now())
            )
        state = PassState(
            recovering=start.recovering or start.woken,
            fresh=start.fresh,
            replay=start.journal,
            new_thread=start.begin is not None,  # begun with its pass: a new thread's
            begun=start.begun,
            generation=row.generation,
            due={(pause.execution_id, pause.step_key): pause for pause in start.due},
            due_paths=(*(pause.path for pause in start.due), *(start.rested or ())),
            rested=start.rested is not None,
        )
        async with runtime.store.session():
            async with lease.kept():
                try:
                    ended = await Pass(runtime, self.flows, row, writes, state).run(resolved)
                    await writes.flushed()  # no commit the pass sent is still on its way
                except LeaseLostError:
                    await writes.discard()  # the new holder redoes it
                    raise
                except BaseException:
                    # A caller that went away, or the store failing: let go of the tree (what
                    # was buffered is whole transitions) and leave it to the sweep.
                    await _let_go(runtime, writes)
                    raise
            status = ended.status
            # A cut-off pass, or a door cut off after its commit (a reassignment: the tree
            # woken whole), may have left channels to tell.
            if ended.due or start.recovering or start.woken:
                await tell_owed_withdrawals(runtime, row.root_execution_id)
            changed = None if writes.changed is None else frozenset(writes.changed)
            result = await self.reader.output(
                row,
                status,
                ended.output,
                record=record,
                ended=PassEnd(
                    writes.spent,
                    # A tree cancelled meanwhile was written by the canceller too: read it whole.
                    None
                    if status is ExecutionStatus.CANCELLED
                    else PassChanges(lease.fence.epoch, changed),
                    ended.pending_ids,
                    ended.wake_at,
                ),
            )
        self._wake_at(row.root_execution_id, ended.wake_at)
        if status is ExecutionStatus.PAUSED:
            await self.hooks.on_pause(
                ExecutionPauseEvent(row.tenant_id, row.thread_id, row.execution_id, result.pending)
            )
        return result

    async def record_answer(
        self,
        resolve: ResolvePause,
        *,
        move: bool,
        intents: tuple[AppendStep, ...] = (),
        version: str | None = None,
    ) -> tuple[PauseRecord | None, Held | None]:
        """Records an answer (Pending → Resolved, with its audit entry); with ``move``, takes
        the tree's lease for the pass that takes it in the same commit — with the ``intents``
        of the tool it lets run, if it acquired the lease and the root still runs under the
        ``version`` it was read under — and reads the answered step's scope of the journal with
        it. The pause as resolved (``None``: it was not Pending any more — nothing is recorded
        and no lease is kept), and the lease, when it was acquired with it."""
        pause = resolve.pause
        if not move:
            # Any other instance that hears it moves the tree, else the sweep does.
            said = Signal(SignalKind.ANSWERED, pause.root_execution_id, self.runtime.holder)
            return (await self.runtime.store.write([resolve, Announce(said)]))[resolve], None
        resolved, held = await commit_acquiring_lease(
            self.runtime,
            resolve,
            pause.root_execution_id,
            journal=_answered_scope(pause),
            intents=intents,
            version=version,
        )
        if resolved is None and held is not None:  # not this call's to move: left as it was
            await held.release()
            return None, None
        return resolved, held

    async def continue_waiting(self, root_execution_id: str, row: ExecutionRow) -> bool:
        """Moves a waiting tree to this build by its workflow's continuation before an answer
        to it is read (`continue_waiting`); whether its questions are to be read again."""
        return await continue_waiting(self.runtime, self.wakeups, root_execution_id, row)

    async def reassign(self, root_execution_id: str, handoff: Handoff) -> Handed | None:
        """Hands a waiting question to another role or person (`reassign_question`), the
        pass that sends it run here."""

        async def moved(start: PassStart) -> ExecutionOutput:
            return await self._pass(start, record=False)

        return await reassign_question(
            self.runtime, self.wakeups, moved, root_execution_id, handoff
        )

    async def cast_vote(self, vote: CastVote, *, move: bool) -> Voted:
        """Records a vote (`cast_vote`): counted once per voter, the one that decides the
        question resolving it in the same commit; without ``move``, announced to the
        instances that listen."""
        return await cast_vote(self.runtime, vote, move=move)

    async def move(
        self, root_execution_id: str, *, record: bool, held: Held | None = None
    ) -> ExecutionOutput:
        """Moves a tree after an answer: with its lease (``held``: acquired with the answer), or
        once its holder ends its pass — then without a pass if that pass took every answer (the
        tree's current output, its decision taken).

        Raises:
            LeaseBusyError: The holder did not end its pass within ``resume_timeout`` (the
                answer stays recorded; the holder's drain or the sweep takes it).
        """
        waited = held is None
        if held is None:
            held = await self.wakeups.acquire_when_free(
                root_execution_id,
                "the answer is recorded",
                "the tree moves when that pass ends, or with the recovery sweep; "
                "read it with app.get(...)",
            )
        start = PassStart.held(held)
        row = start.row
        # Read only after a wait: a lease acquired with the answer has it to move.
        if waited and row.status is ExecutionStatus.PAUSED:
            resolved = (
                start.resolved
                if start.resolved is not None
                else await resolved_pauses(self.runtime, row)
            )
            start = replace(start, resolved=resolved)
            rests = not resolved
        else:
            rests = False
        if row.status not in _MOVING or rests:
            await held.release()
            return await self.get(root_execution_id, tenant_id=row.tenant_id, record=record)
        return await self._pass(start, record=record)

    async def retry(
        self,
        execution_id: str,
        *,
        tenant_id: str,
        retried_by: str | None,
        record: bool,
        said: CallSaid | None = None,
    ) -> ExecutionOutput:
        """Reopens a failed tree in place (`ReopenTree`, under its lease) and runs it again
        from its journal, as a pass that recovers it: a child's id retries its root.

        Raises:
            UnknownExecutionError: No such execution for this tenant.
            NotFailedError: The tree did not fail.
            FinalFailureError: Its journal decided the failure.
            VersionNotServedError: This build does not serve the tree's version.
            LeaseBusyError: Another instance's pass held the tree past ``resume_timeout``.
        """
        runtime = self.runtime
        seen, cut_off = await retried_root(runtime, tenant_id, execution_id, said)
        root_id = seen.execution_id
        held = await acquire_lease(runtime, root_id) or await self.wakeups.acquire_when_free(
            root_id, "nothing was retried", "retry again once it ends; app.get(...) reads it"
        )
        found = held.acquired.row
        row = None
        if seen.status is ExecutionStatus.RUNNING:
            # Another retry of the same failure runs it: its output, once its pass ends — or
            # this instance carries on a pass of it that was cut off.
            if found is not None and found.status is ExecutionStatus.RUNNING:
                return await self._pass(PassStart.held(held), record=record)
        elif found is not None and (found.status, found.generation) == (
            seen.status,
            seen.generation,
        ):
            now = runtime.clock.now()
            reopen = ReopenTree(root_id, seen.generation, retried_by, now)
            writes: list[Write[Any]] = [reopen]
            if said is not None and cut_off is not None:  # the person's word, in one commit
                writes += await said_of_cut_off(runtime, found, cut_off, said, now)
            row = (await runtime.store.write(writes, fence=held.lease.fence))[reopen]
        if row is None:
            # Another instance retried it meanwhile (the lease decided): where it stands now.
            await held.release()
            return await self.get(root_id, tenant_id=tenant_id, record=record)
        log_event(
            runtime.logger,
            logging.INFO,
            "run.retried",
            "execution tree %(execution_id)s of %(workflow)s retried (generation "
            "%(generation)d) by %(retried_by)s",
            execution_id=root_id,
            workflow=row.workflow,
            tenant_id=row.tenant_id,
            generation=row.generation,
            retried_by=retried_by or "an operator",
        )
        return await self._pass(PassStart(row, held.lease, recovering=True), record=record)

    # ---- reading and recovery ------------------------------------------------------

    async def get(
        self, execution_id: str, *, tenant_id: str | None, record: bool
    ) -> ExecutionOutput:
        """The current output of an execution, without moving it."""
        store = self.runtime.store
        row = await store.executions.find(tenant_id or DEFAULT_TENANT_ID, execution_id)
        if row is None:
            raise UnknownExecutionError(
                f"no execution {execution_id} is known for this tenant",
                hint="pass the execution_id an ExecutionOutput gave, under the same tenant",
            )
        if row.status is ExecutionStatus.FAILED:
            raise stored_error(row, self.runtime.assembly.error_classes)
        return await self.reader.output(
            row, row.status, self.reader.decoded_output(row), record=record
        )

    async def recover(self, *, limit: int = 100) -> list[ExecutionOutput]:
        """Continues root executions that a pass must move and no instance is moving: a pass
        was cut off (running), an answer was recorded and nobody moved it, a retry's wait is
        due, a channel is owed a withdraw. A tree that fails on an error that is not agboss's
        is marked failed and logged once; the others go on."""
        runtime = self.runtime
        outputs: list[ExecutionOutput] = []
        for execution_id in await runtime.store.executions.find_interrupted(
            Lease.store_now(runtime), limit, runtime.assembly.served
        ):
            output = await self._recover_one(execution_id)
            if output is not None:
                outputs.append(output)
        return outputs

    def _wake_at(self, root_execution_id: str, at: datetime | None) -> None:
        """Arms this instance's timer for a tree that rests until ``at`` (best effort: the
        sweep of any instance moves it too, once it is due); ``None`` disarms it."""
        clock = self.runtime.clock
        earlier = self._timers.pop(root_execution_id, None)
        if earlier is not None:
            earlier.cancel()
        if at is None:
            return

        async def woken() -> None:
            self._timers.pop(root_execution_id, None)
            try:
                await self._recover_one(root_execution_id)
            except Exception:  # the sweep tries again; a timer must not raise into the clock
                self.runtime.logger.exception(
                    "run.wake-failed: execution tree %s could not be woken", root_execution_id
                )

        self._timers[root_execution_id] = clock.call_at(at, woken)

    async def serves(self, root_execution_id: str, row: ExecutionRow) -> bool:
        """Whether this build moves the tree of ``row`` (an execution of it: a child's tree
        is read for its root's version)."""
        if row.execution_id != root_execution_id:
            found = await self.runtime.store.executions.find_by_id(root_execution_id)
            if found is None:
                return True  # gone: whatever moves it finds nothing to do
            row = found
        return self.runtime.assembly.serves(row.workflow, row.workflow_version)

    async def _move_heard(self, root_execution_id: str) -> ExecutionOutput | None:
        """Moves a tree another instance said was answered, if this build serves it: read
        before the lease is acquired, so that one which does not never holds it back from
        one which does."""
        row = await self.runtime.store.executions.find_by_id(root_execution_id)
        if row is None or not self.runtime.assembly.serves(row.workflow, row.workflow_version):
            return None
        return await self._recover_one(root_execution_id)

    async def _recover_one(self, execution_id: str) -> ExecutionOutput | None:
        """Moves one tree `recover` found (``None``: nothing to move, or not this instance's
        to move)."""
        runtime = self.runtime
        held = await acquire_lease(runtime, execution_id, start_pass=True)
        if held is None:
            return None  # another instance took it first
        acquired = held.acquired
        if acquired.previous_holder is not None:
            log_event(
                runtime.logger,
                logging.INFO,
                "run.takeover",
                "execution tree %(execution_id)s taken over from %(previous_holder)s, "
                "whose lease expired",
                execution_id=execution_id,
                previous_holder=acquired.previous_holder,
            )
        row = acquired.row
        if (
            row is None
            or row.status not in _MOVING
            or not runtime.assembly.serves(row.workflow, row.workflow_version)
        ):
            await held.release()
            await tell_owed_withdrawals(runtime, execution_id)  # only channels are owed
            return None
        start = PassStart.held(held)
        now = runtime.clock.now()
        woken = row.wake_at is not None and row.wake_at <= now
        if not (woken or start.recovering or start.resolved is None or start.resolved):
            # Resting, nothing answered, nothing due: found for a channel owed a withdraw
            # (a pass cut off after it rested), which is all there is to do.
            await held.release()
            await tell_owed_withdrawals(runtime, execution_id)
            return None
        resting = row.resting_until is not None and row.resting_until <= now
        if woken and resting and row.resting_paths is not None:
            start = replace(start, rested=row.resting_paths)  # their branches are entered
        elif woken and (resting or not start.due):
            # Every branch is re-entered: what is due, and where, is not known.
            start = replace(start, woken=True)
        why = (
            "a retry's wait is due"
            if start.woken or start.rested is not None
            else "its last pass was cut off"
            if start.recovering
            else "a question's deadline or ladder step is due"
            if woken
            else "an answer was recorded and not moved"
        )
        log_event(
            runtime.logger,
            logging.INFO,
            "run.recovering",
            "execution tree %(execution_id)s (%(workflow)s): %(why)s",
            execution_id=execution_id,
            workflow=row.workflow,
            tenant_id=row.tenant_id,
            why=why,
        )
        try:
            return await self._pass(start, record=False)
        except StoreError:
            raise  # the store is failing: the next sweep tries again
        except LeaseLostError:
            return None  # another instance took it over: it carries on
        except DefinitionChangedError as lacking_here:
            # Left as it is for a build that has what it needs: said once per tree, not
            # once per sweep.
            if execution_id not in self._stranded:
                self._stranded.add(execution_id)
                log_event(
                    runtime.logger,
                    logging.WARNING,
                    "run.definition-changed",
                    "execution tree %(execution_id)s is left waiting: %(reason)s",
                    execution_id=execution_id,
                    tenant_id=row.tenant_id,
                    reason=lacking_here.message,
                )
            return None
        except AgbossError as failed:
            # A step's failure (a call cut off under FAIL, answers that stayed invalid) is an
            # outcome the tree was built for: its sentence and hint say it, no trace needed.
            runtime.logger.warning(
                "run.recovered-failed: execution tree %s failed when recovered: %s",
                execution_id,
                failed,
                exc_info=not isinstance(failed, AgentFailedError),
                extra={
                    "event": "run.recovered-failed",
                    "execution_id": execution_id,
                    "code": failed.code,
                },
            )
            return None


_MOVING = (ExecutionStatus.RUNNING, ExecutionStatus.PAUSED, ExecutionStatus.WAITING)
"""The statuses of a tree a pass may move."""


def _answered_scope(pause: PauseRecord) -> tuple[str, str] | None:
    """The execution and key prefix of the steps the pass that moves this answer replays
    first (the answered step's outermost scope), read with the lease to spare it a read."""
    scope, slash, _ = pause.step_key.partition("/")
    return (pause.execution_id, scope + slash) if slash else None


async def _let_go(runtime: Runtime, writes: PassWrites) -> None:
    """Commits what a pass buffered and frees its lease, on the way out of a cut-off pass."""
    try:
        if writes.released:
            await writes.flushed()
            return
        await writes.release()
    except Exception as error:  # the pass is already failing: its own error is the one raised
        runtime.logger.warning(
            "run.release-failed: the lease on execution tree %s could not be released (it "
            "expires): %r",
            writes.lease.fence.root_execution_id,
            error,
        )


def _stored_input(dto: type[BaseModel], value: BaseModel, where: str) -> str:
    """The input as stored: JSON that gives the same DTO back when a pass replays it."""
    try:
        text = value.model_dump_json()
        if not has_non_finite(value.model_dump()) and (
            dto.model_validate_json(text).model_dump_json() == text
        ):
            return text
    except (ValueError, ValidationError):  # a lone surrogate; NaN read back as null
        pass
    raise DtoValidationError(
        f"the input of {where} cannot be stored as it is: it holds a value JSON cannot carry "
        "(a lone surrogate in a string, NaN or infinity)",
        hint="pass valid Unicode text and finite numbers",
    )


def _validate_input(
    dto: type[BaseModel], value: BaseModel | dict[str, Any], where: str
) -> BaseModel:
    if isinstance(value, dto):
        return value
    try:
        raw = value.model_dump() if isinstance(value, BaseModel) else value
        return dto.model_validate(raw)
    except ValidationError as error:
        raise DtoValidationError(
            f"the input of {where} is not a valid {dto.__name__}: "
            f"{describe_validation_error(error)}",
            hint=f"pass a {dto.__name__} (or a mapping of its fields)",
        ) from error


_RESTED = {
    ExecutionStatus.PAUSED: (
        "run.paused",
        "paused, %(pending)d question(s) waiting: %(waiting)s",
    ),
    ExecutionStatus.WAITING: ("run.waiting", "waiting until %(wake_at)s (a retry's wait)"),
    ExecutionStatus.COMPLETED: ("run.completed", "completed"),
}


def _log_rest(runtime: Runtime, row: ExecutionRow, result: ExecutionOutput) -> None:
    """How a pass left its tree, for the operator (cancelled: said by the cancellation)."""
    said = _RESTED.get(result.status)
    if said is None or not runtime.logger.isEnabledFor(logging.INFO):
        return  # off: not even the line's fields are made
    event, how = said
    log_event(
        runtime.logger,
        logging.INFO,
        event,
        "execution %(execution_id)s of %(workflow)s " + how,
        execution_id=row.execution_id,
        workflow=row.workflow,
        tenant_id=row.tenant_id,
        pending=len(result.pending),
        waiting=", ".join(f"{p.ask.tool} through {p.channel}" for p in result.pending[:5])
        + (", …" if len(result.pending) > 5 else ""),
        wake_at=None if result.wake_at is None else result.wake_at.isoformat(),
    )
