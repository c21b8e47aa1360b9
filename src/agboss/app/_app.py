"""`App`: an assembled application bound to a store, model providers and a clock."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Coroutine, Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, overload

from pydantic import BaseModel

from agboss.app._audit import DecisionLog
from agboss.app._claims import Claiming
from agboss.app._delegations import Delegations
from agboss.app._deploys import Deploys
from agboss.app._failures import FailedTrees
from agboss.app._inspecting import inspected
from agboss.app._pending import PendingPauses
from agboss.app._standing import StandingDecisions
from agboss.assembly import (
    Assembly,
    Provide,
    assemble,
    check_arguments,
    check_dependencies,
    check_environment,
    environment_of,
    open_declared,
)
from agboss.clock import Clock, SystemClock, TimerHandle
from agboss.context import DEFAULT_TENANT_ID
from agboss.dto import ToolCallApprovalDecisionDto
from agboss.engine import (
    LEASE_TTL,
    RECOVERY_INTERVAL,
    RESUME_TIMEOUT,
    Engine,
    Runtime,
    cancel_thread,
    keep_serving,
    leave,
)
from agboss.errors import ConfigurationError, StoreError
from agboss.inputs import check_flag, check_id, check_optional_id
from agboss.models import ModelProvider, ModelResolver
from agboss.observability import (
    ExecutionEvent,
    ExecutionEventKind,
    questions_waiting,
    streaming_to,
    waiting_wanted,
)
from agboss.pauses import (
    AnswerReceipt,
    load_prompts,
    move_answered,
    record_answer,
)
from agboss.records import ExecutionOutput
from agboss.store import store_from
from agboss.store.protocol import Store

if TYPE_CHECKING:
    from agboss.mcp.client import McpConnections

__all__ = ["App"]


class App(
    PendingPauses, StandingDecisions, FailedTrees, Deploys, DecisionLog, Claiming, Delegations
):
    """A running application: create it with `App.create`, close it with `close`.

    An `App` is one instance; several instances (processes, or `App` objects) may share one
    store, and any of them may answer any pause.
    """

    def __init__(self, runtime: Runtime, mcp: McpConnections | None = None) -> None:
        self._runtime = runtime
        self._mcp = mcp
        self._engine = Engine(runtime)
        self._sweep: TimerHandle | None = None
        self._closed = False

    @classmethod
    async def create(
        cls,
        application: type[Any],
        *,
        store: str | Path | Store | None = None,
        providers: Sequence[ModelProvider] = (),
        clock: Clock | None = None,
        lease_ttl: timedelta = LEASE_TTL,
        resume_timeout: timedelta = RESUME_TIMEOUT,
        migrate: bool = True,
        recovers: bool = True,
        channels: Mapping[type[Any], type[Any]] | None = None,
        dependencies: Sequence[Provide] = (),
        environment: str | None = None,
    ) -> App:
        """Assembles an application and opens its store.

        Every component reachable from the application is checked at once.

        Args:
            application: The ``@application`` class.
            store: ``None`` (a SQLite file under ``.agboss/``), a URL
                (``sqlite:///relative.db``, ``sqlite:////absolute.db``, ``postgresql://…``),
                a SQLite file's `Path`, or a store object.
            providers: Model providers; a model name resolves to the first that serves it.
            clock: The application's clock; the system clock by default.
            lease_ttl: How long a pass's hold on its tree lasts without renewal (renewed every
                third of it): how soon another instance takes over a tree whose holder died.
            resume_timeout: How long a resume waits for another instance to end its pass on
                the tree before it raises `LeaseBusyError` (its answer stays recorded).
            migrate: Whether an older schema is migrated (``False``: `StoreSchemaError`; run
                ``agboss migrate`` first).
            recovers: Whether this instance moves trees that other instances left to move:
                its recovery sweep, and answers another instance recorded without moving
                them, which it hears of at once. ``False`` in a process without the
                application's models, such as the command line: it moves only what it
                begins or answers itself.
            channels: The channel that answers a role in this instance, by role:
                ``{RefundApprovalChannel: SlackRefundApprovalChannel}`` — a ``@channel``
                that subclasses the role (listed in ``channels=[...]`` or not), or one that
                takes any question (`AutoApproveChannel`, `AutoRejectChannel`,
                `TerminalUserChannel`, `DevelopmentChannel`). A role the application lists
                several implementations of must be given one here; checked with the rest of
                the application.
            dependencies: `provide(...)` registrations for this instance, each replacing the
                application's registration of its type (or adding one): a fake payment
                gateway in a test, a sandbox client in staging. Checked with the rest of the
                application.
            environment: Where this instance runs (``"production"``, ``"staging"``…);
                ``None``: ``AGBOSS_ENVIRONMENT``, else unsaid. In ``"production"`` the
                `DevelopmentChannel` — which shows each question's id — is refused.

        Raises:
            AssemblyError: Listing every broken rule of the application — and, once the store
                is open, each workflow whose definition changed while its version did not,
                while executions of that version still wait in it
                (``workflow.changed-without-version``, naming what changed), and each
                workflow that continues an earlier version whose waiting trees need what
                this build lacks (``workflow.cannot-continue``, naming what).
            StoreError: The store cannot be opened.
            ConfigurationError: ``providers`` is not a list of model providers, ``clock`` not
                a Clock, ``migrate`` or ``recovers`` not a bool, ``lease_ttl`` /
                ``resume_timeout`` not a positive timedelta, ``channels`` not a mapping
                of classes, ``dependencies`` not a list of `provide(...)` registrations,
                ``environment`` not a string, or a `DevelopmentChannel` answers a role in
                production.
        """
        check_arguments(providers, clock, migrate, recovers, channels, lease_ttl, resume_timeout)
        check_dependencies(dependencies)
        runs_in = environment_of(environment)
        resolver = ModelResolver(providers)
        connections, wiring = await open_declared(application)
        try:
            assembly = assemble(application, resolver, wiring, channels, dependencies)
            check_environment(assembly, runs_in)
            prompts = await load_prompts(assembly)
            opened = store_from(store)
            await opened.open(migrate=migrate)
        except BaseException:
            if connections is not None:
                await connections.close()
            raise
        runtime = Runtime(
            assembly,
            opened,
            clock or SystemClock(),
            resolver,
            prompts=prompts,
            lease_ttl=lease_ttl,
            resume_timeout=resume_timeout,
        )
        app = cls(runtime, connections)
        if inspected():  # a deploy check looks at this build: it runs nothing
            return app
        try:
            await app._engine.check_build()
            await app._engine.wakeups.listen(moves=recovers)
            if recovers:  # it moves the trees it serves: said for `App.stranded`
                await keep_serving(runtime)
                app._schedule_sweep()
        except BaseException:
            await app.close()
            raise
        return app

    @property
    def assembly(self) -> Assembly:
        """The checked application."""
        return self._runtime.assembly

    @property
    def store(self) -> Store:
        """The store this instance uses."""
        return self._runtime.store

    @property
    def clock(self) -> Clock:
        """The application's clock."""
        return self._runtime.clock

    async def execute(
        self,
        workflow: type[Any],
        input: BaseModel | dict[str, Any],
        *,
        tenant_id: str | None = None,
        owner_id: str,
        thread_id: str | None = None,
        record: bool = False,
    ) -> ExecutionOutput:
        """Runs a workflow until it finishes or pauses.

        Args:
            workflow: The ``@workflow`` class, one of the application's.
            input: The start's DTO (or a mapping of its fields).
            tenant_id: The tenant; one default tenant when ``None``.
            owner_id: Who the execution acts for; a thread's owner is fixed by the
                execution that opened it.
            thread_id: The conversation to run in; a new one when ``None``.
            record: Return the execution record too.

        Raises:
            UnknownWorkflowError: The workflow is not part of the application.
            DtoValidationError: The input is not the start's DTO or cannot be stored (a lone
                surrogate, NaN), or an id is not a non-blank string within
                `InputLimits.id_length` (a ``thread_id`` that does not exist yet opens it).
            ThreadOwnerError: The thread belongs to another owner.
            AgentFailedError: An agent's step failed (the execution is failed).
        """
        limits = self._limits
        return await self._engine.execute(
            workflow,
            input,
            tenant_id=check_optional_id(tenant_id, "tenant_id", limits),
            owner_id=check_id(owner_id, "owner_id", limits),
            thread_id=check_optional_id(thread_id, "thread_id", limits),
            record=check_flag(record, "record"),
        )

    @overload
    async def resume(
        self,
        pause_id: str,
        *,
        decision: ToolCallApprovalDecisionDto | Mapping[str, Any],
        tenant_id: str | None = None,
        owner_id: str | None = None,
        answered_by: str | None = None,
        record: bool = False,
    ) -> ExecutionOutput: ...

    @overload
    async def resume(
        self,
        pause_id: str,
        *,
        reply: str,
        tenant_id: str | None = None,
        owner_id: str | None = None,
        answered_by: str | None = None,
        record: bool = False,
    ) -> ExecutionOutput: ...

    async def resume(
        self,
        pause_id: str,
        *,
        decision: ToolCallApprovalDecisionDto | Mapping[str, Any] | None = None,
        reply: str | None = None,
        tenant_id: str | None = None,
        owner_id: str | None = None,
        answered_by: str | None = None,
        record: bool = False,
    ) -> ExecutionOutput:
        """Answers a pause by its id, wherever it waits, and moves its execution on.

        Exactly one of ``decision`` and ``reply``. A `PauseAnswerer.THREAD_OWNER` pause takes
        the thread's ``owner_id``; a `PauseAnswerer.CHANNEL` pause takes ``answered_by`` (who
        answered, as the channel authenticated them). The resumed pass runs as the thread's
        owner, whoever answered. On a role that takes several approvals (``approvals=``) the
        answer is a vote: one that leaves the question waiting moves nothing, and the tree is
        returned as it stands.

        Args:
            pause_id: The id ``result.pending`` lists, or the one the channel was sent.
            decision: A `ToolCallApprovalDecisionDto` or a mapping of its fields.
            reply: Free text, read by the role's reply interpreter.
            tenant_id: The tenant of the execution; the default tenant when ``None``.
            owner_id: The thread's owner, for a thread-owner pause.
            answered_by: Who answered, for a channel pause.
            record: Return the execution record too.

        Returns:
            The execution's output: paused with the other pauses in ``pending``, or finished.

        Raises:
            DtoValidationError: An id that is not a non-blank string within the limits, not
                exactly one of decision / reply, a reply that is empty, not text or over
                `InputLimits.reply_length`, or an invalid decision (strict: see
                `ToolCallApprovalDecisionDto`); the pause keeps waiting.
            UnknownPauseError: No such pause for this tenant (or past retention).
            ThreadOwnerError: ``owner_id`` is not the thread's owner.
            PauseAnswererError: The credential does not fit who may answer.
            NotAnAnswererError: The answerer may not answer this question: the thread's
                owner under ``distinct_from_owner``, or not among its voters.
            AlreadyVotedError: The voter voted on this question already.
            ReplyInterpreterMissingError: A reply for a role without a reply interpreter.
            UninterpretableReplyError: The reply could not be read; the pause keeps waiting.
            NotPausedError: The pause is no longer waiting (answered, withdrawn, cancelled).
        """
        wanted = check_flag(record, "record")
        recorded = await record_answer(
            self._engine,
            self._credentials(pause_id, tenant_id, owner_id, answered_by),
            decision=decision,
            reply=reply,
        )
        return await move_answered(self._engine, recorded, record=wanted)

    async def answer(
        self,
        pause_id: str,
        *,
        decision: ToolCallApprovalDecisionDto | Mapping[str, Any] | None = None,
        reply: str | None = None,
        tenant_id: str | None = None,
        owner_id: str | None = None,
        answered_by: str | None = None,
        move: bool = True,
    ) -> AnswerReceipt:
        """Records an answer and returns at once; the tree moves in the background.

        Every check of `resume` runs first — the shape, the lookup, who may answer, the
        decision's validation, a reply's interpretation — and the decision is recorded before
        this returns: a rejected answer leaves the pause waiting, an accepted one is durable.
        Then this instance moves the tree in the background (tools included); if it cannot
        (it stops, or another instance holds the tree), any instance's pass or sweep takes the
        answer. For a webhook that must answer within seconds (Slack: 3 s); `resume` when the
        caller wants the tree's new output.

        Idempotent for a retried webhook: an answer that repeats the one recorded (the same
        answerer, the same decision once validated or the same words) gets that answer's
        receipt again, with ``repeated=True``, and moves nothing; any other answer to a pause
        no longer waiting is `NotPausedError`.

        Args:
            pause_id: As for `resume`.
            decision: As for `resume`.
            reply: As for `resume`.
            tenant_id: As for `resume`.
            owner_id: As for `resume`.
            answered_by: As for `resume`.
            move: ``False``: only record the answer, and leave the tree to another
                instance — the answer's commit says it is due, and an instance that hears it
                moves it at once (on PostgreSQL any instance; on SQLite one in the same
                process), else any instance's sweep within 30 seconds — for a process without
                the application's models, such as the command line.

        Returns:
            What was recorded; `get(receipt.execution_id)` reads where the tree stands.

        Raises:
            The same errors as `resume`, before anything is recorded.
        """
        moving = check_flag(move, "move")
        recorded = await record_answer(
            self._engine,
            self._credentials(pause_id, tenant_id, owner_id, answered_by),
            decision=decision,
            reply=reply,
            move=moving,
            repeat_ok=True,
        )
        # Any instance's pass or sweep takes an answer this one does not move.
        if moving and recorded.to_move:
            self._engine.in_background(
                move_answered(self._engine, recorded, record=False),
                recorded.receipt.execution_id,
            )
        return recorded.receipt

    async def stream(
        self, work: Coroutine[Any, Any, ExecutionOutput]
    ) -> AsyncIterator[ExecutionEvent]:
        """What ``work`` — a call of `execute` or `resume`, not awaited — does, as it happens.

        ``work`` runs as this iterator is read: each model turn, tool run and pause asked or
        answered is an `ExecutionEvent` as it happens, and the last is `ExecutionEventKind.ENDED`
        with the call's `ExecutionOutput` in ``output``. A failure of the call is raised where
        it would have been. Nothing changes in what is stored: a stream is a view of the
        work, and stopping reading it (``break``) cancels the call as a caller that went away
        would (the tree is left to the sweep).

        ``async for event in app.stream(app.execute(ChatWorkflow, request, owner_id="ada")):``

        Raises:
            ConfigurationError: ``work`` is not a coroutine (an awaited call, a plain value).
        """
        if not inspect.iscoroutine(work):
            raise ConfigurationError(
                f"app.stream takes a call of execute or resume, not {type(work).__name__}",
                hint="pass app.execute(...) without awaiting it: app.stream(app.execute(...))",
            )
        queue: asyncio.Queue[ExecutionEvent | None] = asyncio.Queue()
        task = asyncio.get_running_loop().create_task(work, context=streaming_to(queue.put_nowait))
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event
            output = task.result()
            yield ExecutionEvent(
                ExecutionEventKind.ENDED,
                output.execution_id,
                self.clock.now(),
                status=output.status.value,
                output=output,
            )
        finally:
            if not task.done():
                task.cancel()
                await asyncio.wait([task])

    async def cancel(
        self, thread_id: str, *, tenant_id: str | None = None, owner_id: str | None = None
    ) -> ExecutionOutput | None:
        """Cancels a conversation: its running and paused executions, and their pauses.

        Each pause is withdrawn (`PauseResolution.CANCELLED`) and its channel's ``withdraw``
        is called once, best-effort; a late answer gets `NotPausedError`.

        Args:
            thread_id: The conversation.
            tenant_id: Its tenant; the default tenant when ``None``.
            owner_id: When given, it must be the thread's owner (a user cancelling their own
                conversation); an operator's call leaves it out.

        Returns:
            The cancelled execution's output, or ``None`` when nothing was left to cancel.

        Raises:
            UnknownThreadError: No such thread for this tenant (a typo is not "nothing to
                cancel").
            ThreadOwnerError: ``owner_id`` is given and is not the thread's owner.
            DtoValidationError: An id is not a non-blank string within the limits.
        """
        limits = self._limits
        return await cancel_thread(
            self._runtime,
            check_id(thread_id, "thread_id", limits),
            tenant_id=check_optional_id(tenant_id, "tenant_id", limits),
            owner_id=check_optional_id(owner_id, "owner_id", limits),
        )

    async def get(
        self, execution_id: str, *, tenant_id: str | None = None, record: bool = False
    ) -> ExecutionOutput:
        """Where an execution stands, without moving it.

        Raises:
            UnknownExecutionError: No such execution for this tenant.
            DtoValidationError: An id is not a non-blank string within the limits.
            AgbossError: The execution failed: the error it failed with.
        """
        limits = self._limits
        return await self._engine.get(
            check_id(execution_id, "execution_id", limits),
            tenant_id=check_optional_id(tenant_id, "tenant_id", limits),
            record=check_flag(record, "record"),
        )

    async def open_in(
        self, thread_id: str, *, tenant_id: str | None = None, owner_id: str | None = None
    ) -> ExecutionOutput | None:
        """Where the thread's newest open execution stands — running, paused or resting —
        without moving it: what a door that names a conversation, not an execution, reads
        (an A2A task, a chat screen opened again).

        Args:
            thread_id: The conversation.
            tenant_id: Its tenant; the default tenant when ``None``.
            owner_id: When given, only a thread of this owner's: another's reads as none.

        Returns:
            Its output, or ``None`` when the thread has no open execution, does not exist, or
            is another owner's.

        Raises:
            DtoValidationError: An id is not a non-blank string within the limits.
        """
        limits = self._limits
        tenant = check_optional_id(tenant_id, "tenant_id", limits) or DEFAULT_TENANT_ID
        thread = check_id(thread_id, "thread_id", limits)
        owner = check_optional_id(owner_id, "owner_id", limits)
        executions = self._runtime.store.executions
        found = await executions.find_thread(tenant, thread)
        if found is None or owner not in (None, found.owner_id):
            return None
        roots = await executions.find_roots(tenant, thread)
        if not roots:
            return None
        return await self._engine.get(roots[-1].execution_id, tenant_id=tenant, record=False)

    async def recover(self) -> list[ExecutionOutput]:
        """Continues now the executions whose instance died mid-pass (their lease expired).

        The recovery sweep does this every 30 seconds on the Clock; call it to not wait.

        Returns:
            The outputs of the executions it continued.
        """
        return await self._engine.recover()

    # ---- life ----------------------------------------------------------------------

    def _schedule_sweep(self) -> None:
        clock = self._runtime.clock
        self._sweep = clock.call_at(clock.now() + RECOVERY_INTERVAL, self._run_sweep)

    async def sweep(self) -> None:
        """Runs the recovery sweep now: continues interrupted executions (resolved pauses
        first), removes resolved pause records past ``pause_record_retention``, and — for a
        meter provider that collects it — reads how many questions wait
        (``agboss.questions.waiting``)."""
        runtime = self._runtime
        await self._engine.recover()
        cutoff = runtime.clock.now() - runtime.assembly.spec.pause_record_retention
        await runtime.store.pauses.delete_resolved_before(cutoff)
        if waiting_wanted():  # read only when a meter provider collects the gauge
            questions_waiting(await runtime.store.pauses.waiting_total())

    async def _run_sweep(self) -> None:
        if self._closed:
            return
        try:
            await keep_serving(self._runtime)
            await self.sweep()
        except Exception:  # the sweep must outlive a bad round; the next one tries again
            self._runtime.logger.exception("run.sweep-failed: the recovery sweep failed")
        if not self._closed:
            self._schedule_sweep()

    async def close(self) -> None:
        """Stops the sweep and closes the store. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._sweep is not None:
            self._sweep.cancel()
            try:
                await leave(self._runtime)
            except StoreError as error:  # its word lapses: taken for gone
                self._runtime.logger.warning("run.leave-failed: %s", error.message)
        await self._engine.finish_background(self._runtime.lease_ttl)
        await asyncio.sleep(0)
        if self._mcp is not None:
            await self._mcp.close()
        await self._runtime.store.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()
