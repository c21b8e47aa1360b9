"""A launch in a pass: its branches, their bookkeeping, FailFast, quorums, and the join.

Each branch's state is a row (waiting, done, failed, cancelled), so a pass re-enters only the
branches that can move: new ones, and waiting ones under which a pause was resolved. A paused
branch frees its ``max_concurrency`` slot; siblings run to their end in the same pass; the
launch waits only while a branch it still needs is waiting. A branch that fails under
`Failure.FAIL_FAST`, a decided quorum and a passed deadline drop the unfinished branches:
running ones are cancelled, waiting ones' pauses withdrawn (`PauseResolution.WITHDRAWN`).

A drop is one commit — the failed branch's row, the dropped branches' rows, their pauses
withdrawn with their audit entries, their answers taken, their children cancelled — so it is
whole or absent; a pass that finds a failed branch under `Failure.FAIL_FAST` whose join has not
run (it was cut off after the drop) applies the drop again, which changes nothing the second
time, and goes on to ``.on_join_error``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel

from agboss.assembly import WorkflowDefinition
from agboss.components import AgentSpec, BranchResult, JoinComponentSpec, JoinInput, QuorumOutcome
from agboss.engine.questions import withdraw_closed
from agboss.engine.runs._agent import AgentRun
from agboss.engine.steps import Step, run_once
from agboss.engine.trees import WAITING, ExecutionFrame, Waiting, maybe_await, step_context
from agboss.enums import Decider, Outcome, PauseResolution
from agboss.errors import (
    AgbossError,
    DtoValidationError,
    JoinDeadlineError,
    PassStoppingError,
    StepFailedError,
)
from agboss.flow import CompiledBranch, CompiledLaunch, Failure, FlowNode
from agboss.observability import closed as metered
from agboss.records import ComponentRecord, StepRecord
from agboss.store import decode_failure, encode_failure, failure_names, qualified_name
from agboss.store.protocol import BranchRow, BranchStatus
from agboss.store.writes import (
    CancelExecutions,
    CancelPendingUnder,
    Results,
    SaveBranch,
    StartLaunch,
    TakeResolvedUnder,
    Write,
)

__all__ = ["ChildRunner", "LaunchRun"]


class ChildRunner(Protocol):
    """What a launch needs of the flow runner (`FlowRunner`): a branch that is a child
    workflow runs as a child execution. A protocol, so that this module does not import the
    runner that runs it (no module cycle)."""

    async def run_child(
        self,
        frame: ExecutionFrame,
        place: str,
        definition: WorkflowDefinition,
        value: BaseModel,
        *,
        item_index: int | None,
    ) -> BaseModel | Waiting:
        """Runs a child execution started at ``place`` of ``frame``."""


_NO_ROW = BranchRow("", BranchStatus.WAITING)
"""A branch with no row yet: it runs."""


@dataclass(frozen=True, slots=True)
class _Branch:
    index: int
    compiled: CompiledBranch
    input: BaseModel
    item_index: int | None


class _Dropped(Exception):
    """A failure (FailFast) or a deadline that ends the launch before every branch came back."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class LaunchRun:
    """One visit of a launch node."""

    def __init__(
        self,
        runner: ChildRunner,
        frame: ExecutionFrame,
        node: FlowNode,
        visit: int,
        value: BaseModel,
    ) -> None:
        assert node.launch is not None
        self.runner = runner
        self.frame = frame
        self.node = node
        self.launch: CompiledLaunch = node.launch
        self.value = value
        self.place = f"{node.node_id}#{visit}"
        self.runtime = frame.runtime
        self.results: dict[int, BranchResult] = {}
        self.waiting: dict[int, Waiting] = {}
        """The branches that wait, by index: what each returned in this pass (`WAITING` for one
        this pass did not re-enter, whose wake-up the tree keeps)."""
        self.dropped: set[int] = set()
        self.failures: list[tuple[_Branch, BaseException]] = []
        """Branches that failed under FailFast in this pass, their rows not yet written."""

    # ---- the visit -----------------------------------------------------------------

    async def run(self) -> BaseModel | Waiting:
        """Runs what can move; the join's output, or what its branches wait on, joined."""
        frame = self.frame
        join_key = f"{self.place}/join"
        await frame.load(self.place + "/")
        joined = frame.journaled(join_key)
        if joined is not None:  # joined before: nothing under it moves again
            return self.node.output.model_validate_json(joined.result_json)
        runtime = self.runtime
        now = runtime.clock.now()
        deadline = self.launch.join.deadline
        start = StartLaunch(frame.row.execution_id, self.place, now)
        if deadline is None:
            frame.writes.add(start)  # when it began matters only to a deadline
            started = now
        else:
            started = (await frame.writes.commit([start]))[start]
        if deadline is None and self._is_plain_join():
            few = await frame.state.stored(self._run_few, None)
            if few is not None:
                return few
        branches = self._branches()
        stored = runtime.store.branches
        rows: dict[str, BranchRow] = await frame.state.stored(
            lambda: stored.load(frame.row.execution_id, self.place + "@"), {}
        )
        to_run: list[_Branch] = []
        failed: list[BaseException] = []
        affected = self._affected(len(branches))
        for branch in branches:
            row = self._current(rows.get(self._branch_place(branch)))
            if row is None or (row.status is BranchStatus.WAITING and branch.index in affected):
                to_run.append(branch)
            elif row.status is BranchStatus.WAITING:
                self.waiting[branch.index] = WAITING
            else:
                failure = self._take_row(branch, row)
                if failure is not None:
                    failed.append(failure)
        passed = deadline is not None and runtime.clock.now() - started >= deadline
        try:
            if failed and self.launch.failure is Failure.FAIL_FAST:
                raise _Dropped(failed[0])  # dropped before a cut-off pass could join: again
            outcome = self._decided(len(branches), deadline_passed=passed)
            if outcome is None:
                if passed and self._is_plain_join():
                    raise _Dropped(self._deadline_error())
                outcome = await self._run_branches(to_run, len(branches))
        except _Dropped as dropped:
            await self._drop(branches)
            return await self._join_error(dropped.error)
        if outcome is None and self.waiting:
            return Waiting.joined(self.waiting.values())
        await self._drop(branches)
        return await self._join(JoinInput(self.value, self._finished(), quorum=outcome))

    async def _run_few(self) -> BaseModel | Waiting | None:
        """A pass that moves a few branches of a large launch: reads how many branches stand
        where and the rows of the branches it re-enters, not every row. ``None`` when the
        launch must be read whole (a branch never started, a failure to drop again, every
        branch back and the join to run, a recovering pass)."""
        frame = self.frame
        store = self.runtime.store
        execution_id = frame.row.execution_id
        total = self._total()
        counts = await store.branches.count(execution_id, self.place + "@")
        failed = counts.get(BranchStatus.FAILED, 0) and self.launch.failure is Failure.FAIL_FAST
        if frame.state.recovering or failed or sum(counts.values()) != total:
            return None
        closed = counts.get(BranchStatus.FAILED, 0) + counts.get(BranchStatus.CANCELLED, 0)
        if closed and frame.state.generation:
            return None  # a retried tree's: the rows say which run again
        affected = sorted(self._affected(total))
        rows = await store.branches.load_places(
            execution_id, [f"{self.place}@{index}" for index in affected]
        )
        to_run = [
            self._branch(index)
            for index in affected
            if rows.get(f"{self.place}@{index}", _NO_ROW).status is BranchStatus.WAITING
        ]
        waiting_elsewhere = counts.get(BranchStatus.WAITING, 0) - len(to_run)
        if not to_run and not waiting_elsewhere:
            return None  # every branch is back: the join reads them all
        try:
            await self._run_branches(to_run, total)
        except _Dropped as dropped:
            # The branches this pass did not run are booked from their rows, then dropped.
            branches = self._branches()
            ran = {branch.index for branch in to_run}
            whole = await store.branches.load(execution_id, self.place + "@")
            for branch in branches:
                row = whole.get(self._branch_place(branch))
                if (
                    branch.index not in ran
                    and row is not None
                    and row.status is not BranchStatus.WAITING
                ):
                    self._take_row(branch, row)
            await self._drop(branches)
            return await self._join_error(dropped.error)
        if waiting_elsewhere or self.waiting:
            return Waiting.joined(self.waiting.values())
        await frame.writes.flush()  # what these branches left is read back with the rest
        self.results, self.waiting = {}, {}
        return None

    def _current(self, row: BranchRow | None) -> BranchRow | None:
        """A branch's row as this pass reads it: ``None`` (the branch runs) for a branch that
        failed or was dropped before its tree was retried (`App.retry`)."""
        if (
            row is not None
            and row.status in (BranchStatus.FAILED, BranchStatus.CANCELLED)
            and self.frame.state.reopens(row.generation)
        ):
            return None
        return row

    def _total(self) -> int:
        launch = self.launch
        if launch.over is None:
            return len(launch.branches)
        return len(getattr(self.value, launch.over))

    def _branch(self, index: int) -> _Branch:
        launch = self.launch
        if launch.over is None:
            return _Branch(index, launch.branches[index], self.value, None)
        return _Branch(index, launch.branches[0], getattr(self.value, launch.over)[index], index)

    def _affected(self, total: int) -> set[int] | range:
        """The branches a resolved pause waits under (all of them when recovering): read from
        the pauses' paths, not tested branch by branch."""
        state = self.frame.state
        if state.recovering:
            return range(total)
        prefix = self.frame.branch_path(self.place + "@")[:-1]  # …|<place>@ then the index
        found: set[int] = set()
        for path in state.resolved_paths:
            if path.startswith(prefix):
                index = path[len(prefix) :].split("/", 1)[0]
                if index.isdigit():
                    found.add(int(index))
        return found

    def _take_row(self, branch: _Branch, row: BranchRow) -> BaseException | None:
        """Books a branch that came back in an earlier pass (done, failed or cancelled); its
        failure, if it failed."""
        if row.status is BranchStatus.CANCELLED:
            self.dropped.add(branch.index)
            return None
        if row.status is BranchStatus.FAILED:
            error = self._stored_failure(row)
            self.results[branch.index] = self._result(branch, error=error)
            return error
        assert row.output_json is not None
        output = branch.compiled.output.model_validate_json(row.output_json)
        self.results[branch.index] = self._result(branch, output=output)
        return None

    def _stored_failure(self, row: BranchRow) -> BaseException:
        if row.error_json is None:
            return StepFailedError("a branch failed", node_id=self.node.node_id)
        return decode_failure(row.error_json, self.runtime.assembly.error_classes)

    def _branches(self) -> list[_Branch]:
        launch = self.launch
        if launch.over is None:
            return [
                _Branch(index, compiled, self.value, None)
                for index, compiled in enumerate(launch.branches)
            ]
        items = getattr(self.value, launch.over)
        return [_Branch(index, launch.branches[0], item, index) for index, item in enumerate(items)]

    def _branch_place(self, branch: _Branch) -> str:
        return f"{self.place}@{branch.index}"

    def _result(
        self,
        branch: _Branch,
        *,
        output: BaseModel | None = None,
        error: BaseException | None = None,
    ) -> BranchResult:
        child = None
        if branch.compiled.workflow:
            child = f"{self.frame.row.execution_id}/{self._branch_place(branch)}"
        return BranchResult(
            index=branch.index,
            component=branch.compiled.name,
            item_index=branch.item_index,
            output=output,
            error=error,
            child_execution_id=child,
        )

    def _finished(self) -> list[BranchResult]:
        return [self.results[index] for index in sorted(self.results)]

    def _is_plain_join(self) -> bool:
        join = self.launch.join
        return join.quorum is None and not join.groups

    def _deadline_error(self) -> JoinDeadlineError:
        return JoinDeadlineError(
            f"the join {self.launch.join_name} passed its deadline of "
            f"{self.launch.join.deadline} before every branch came back",
            node_id=self.node.node_id,
            hint="raise the deadline, or take the error with "
            ".on_join_error(JoinDeadlineError, ...)",
        )

    # ---- running the branches ------------------------------------------------------

    async def _run_branches(self, to_run: list[_Branch], total: int) -> QuorumOutcome | None:
        """Runs branches until all came back or waited, or the launch is decided.

        Raises:
            _Dropped: A branch failed under `Failure.FAIL_FAST` (the others were cancelled).
        """
        if not to_run:
            return None
        slots = asyncio.Semaphore(self.launch.max_concurrency or len(to_run))
        outcome: QuorumOutcome | None = None
        failure: _Dropped | None = None
        # Each branch reports on a queue as it comes back: one wake-up per branch, where
        # asyncio.wait over the branches still running would cost O(N) each (O(N²) a fan-out).
        came_back: asyncio.Queue[tuple[_Branch, BaseModel | Waiting | Exception]] = asyncio.Queue()

        async def report(branch: _Branch) -> None:
            await came_back.put((branch, await self._guarded(branch, slots)))

        try:
            async with asyncio.TaskGroup() as group:
                tasks = {branch.index: group.create_task(report(branch)) for branch in to_run}
                left = len(tasks)
                while left and failure is None and outcome is None:
                    branch, result = await came_back.get()
                    left -= 1
                    done = [(branch, result)]
                    while not came_back.empty():  # the others that came back meanwhile
                        done.append(came_back.get_nowait())
                        left -= 1
                    for branch, result in sorted(done, key=lambda item: item[0].index):
                        dropped = await self._came_back(branch, result)
                        failure = failure or dropped
                    if failure is None:
                        outcome = self._decided(total, deadline_passed=False)
                if left:
                    # Dropped: a send in flight finishes first (its branch is marked), then
                    # the drop withdraws what was sent.
                    for branch in to_run:
                        task = tasks[branch.index]
                        if not task.done():
                            self.frame.state.dropping.add(self._path(branch))
                            task.cancel()
        except* PassStoppingError as stopped:
            raise stopped.exceptions[0] from None
        if failure is not None:
            raise failure
        return outcome

    async def _guarded(
        self, branch: _Branch, slots: asyncio.Semaphore
    ) -> BaseModel | Waiting | Exception:
        """A branch's outcome; its failure as a value (a lost lease and cancellation are not a
        branch's failure: they stop the pass)."""
        async with slots:  # a paused branch returns, and frees its slot
            try:
                return await self._run_branch(branch)
            except PassStoppingError:
                raise
            except Exception as error:
                return error

    def _path(self, branch: _Branch) -> str:
        return self.frame.branch_path(self._branch_place(branch))

    async def _run_branch(self, branch: _Branch) -> BaseModel | Waiting:
        place = self._branch_place(branch)
        compiled = branch.compiled
        if compiled.workflow:
            return await self.runner.run_child(
                self.frame,
                place,
                self.runtime.assembly.workflows_by_name[compiled.name],
                branch.input,
                item_index=branch.item_index,
            )
        spec = self.runtime.assembly.component_spec(compiled.component, AgentSpec)
        return await AgentRun(
            self.frame,
            self.node,
            0,
            spec,
            branch.input,
            scope=place,
            output=compiled.output,
            copy_index=branch.index if branch.item_index is None else 0,
            item_index=branch.item_index,
        ).run()

    async def _came_back(
        self, branch: _Branch, outcome: BaseModel | Waiting | Exception
    ) -> _Dropped | None:
        """Books a branch's outcome; the drop it calls for (a failure under FailFast)."""
        if isinstance(outcome, Exception):
            self.results[branch.index] = self._result(branch, error=outcome)
            if self.launch.failure is Failure.FAIL_FAST:
                self.failures.append((branch, outcome))  # its row goes with the drop
                return _Dropped(outcome)
            # The failed branch's own questions are withdrawn with its row.
            closing = [
                self._row(branch, BranchStatus.FAILED, error=outcome),
                *self._closing(branch),
            ]
            await self._withdraw(closing, await self.frame.writes.commit(closing))
            return None
        if isinstance(outcome, Waiting):
            self.waiting[branch.index] = outcome
            self.frame.writes.add(self._row(branch, BranchStatus.WAITING))
            return None
        self.waiting.pop(branch.index, None)
        self.results[branch.index] = self._result(branch, output=outcome)
        self.frame.writes.add(
            self._row(branch, BranchStatus.DONE, output_json=outcome.model_dump_json())
        )
        return None

    def _row(
        self,
        branch: _Branch,
        status: BranchStatus,
        *,
        output_json: str | None = None,
        error: BaseException | None = None,
    ) -> SaveBranch:
        return SaveBranch(
            self.frame.row.execution_id,
            BranchRow(
                self._branch_place(branch),
                status,
                output_json,
                None if error is None else encode_failure(error),
                self.frame.state.generation,
            ),
            self.runtime.clock.now(),
        )

    def _closing(self, branch: _Branch) -> list[Write[Any]]:
        """What closes a branch's questions: answers nobody will take marked taken, pending
        ones withdrawn (with their audit entries)."""
        path = self._path(branch)
        root = self.frame.row.root_execution_id
        now = self.runtime.clock.now()
        return [
            TakeResolvedUnder(root, path),
            CancelPendingUnder(root, path, PauseResolution.WITHDRAWN, now),
        ]

    async def _withdraw(self, closing: Sequence[Write[Any]], results: Results) -> None:
        """Tells the channels of the sent pauses that ``closing``, just committed, closed
        (before the pass goes on; each marked told in the pass's next commit)."""
        dropped = [
            pause
            for write in closing
            if isinstance(write, CancelPendingUnder)
            for pause in results[write]
        ]
        metered(dropped, Outcome.WITHDRAWN, Decider.FLOW, self.runtime.clock.now())
        closed = [pause for pause in dropped if pause.is_sent]
        if closed:
            writes = self.frame.writes
            await writes.flush()
            await withdraw_closed(
                self.runtime,
                self.frame.row,
                closed,
                lambda told: writes.commit([told]),
                PauseResolution.WITHDRAWN,
            )

    # ---- deciding ------------------------------------------------------------------

    def _decided(self, total: int, *, deadline_passed: bool) -> QuorumOutcome | None:
        """A quorum join's decision, once it is decided; ``None`` otherwise (and always for a
        plain join)."""
        join = self.launch.join
        succeeded = {i for i, result in self.results.items() if result.succeeded}
        unfinished = total - len(self.results) - len(self.dropped)
        if join.quorum is not None:
            if len(succeeded) >= join.quorum:
                return QuorumOutcome(True, None, len(succeeded), deadline_passed)
            if len(succeeded) + unfinished < join.quorum or deadline_passed:
                return QuorumOutcome(False, None, len(succeeded), deadline_passed)
            return None
        if join.groups:
            components = self._components_by_index(total)
            finished = set(self.results) | self.dropped
            can_win = False
            for group in join.groups:
                members = {i for i, c in components.items() if c in group.branches}
                won = len(members & succeeded)
                if won >= group.min:
                    return QuorumOutcome(True, group.name, len(succeeded), deadline_passed)
                if won + len(members - finished) >= group.min:
                    can_win = True
            if not can_win or deadline_passed:
                return QuorumOutcome(False, None, len(succeeded), deadline_passed)
        return None

    def _components_by_index(self, total: int) -> dict[int, type[Any]]:
        branches = self.launch.branches
        if self.launch.over is None:
            return {index: branch.component for index, branch in enumerate(branches)}
        return dict.fromkeys(range(total), branches[0].component)

    async def _drop(self, branches: list[_Branch]) -> None:
        """Drops the branches that did not come back, in one commit with the rows of the
        branches that failed under FailFast: their pending pauses withdrawn, their answers
        taken, their children cancelled; then their channels are told."""
        now = self.runtime.clock.now()
        writes: list[Write[Any]] = []
        for failed, error in self.failures:
            writes += [self._row(failed, BranchStatus.FAILED, error=error), *self._closing(failed)]
        self.failures = []
        for branch in branches:
            if branch.index in self.results or branch.index in self.dropped:
                continue
            writes += self._closing(branch)
            if branch.compiled.workflow:
                child = f"{self.frame.row.execution_id}/{self._branch_place(branch)}"
                writes.append(CancelExecutions(child, now))
            writes.append(self._row(branch, BranchStatus.CANCELLED))
            self.dropped.add(branch.index)
            self.waiting.pop(branch.index, None)
        if writes:
            await self._withdraw(writes, await self.frame.writes.commit(writes))

    # ---- joining -------------------------------------------------------------------

    async def _join_error(self, error: BaseException) -> BaseModel:
        for error_class, handler in self.launch.join.error_handlers:
            if _matches(error, error_class):
                return await self._join(
                    JoinInput(self.value, self._finished(), error=error), handler=handler
                )
        raise error

    async def _join(self, join_input: JoinInput, handler: type[Any] | None = None) -> BaseModel:
        cls = handler or self.launch.join.handler
        spec = self.runtime.assembly.components[cls]
        assert isinstance(spec, JoinComponentSpec)
        key = f"{self.place}/join"
        record = StepRecord(
            kind="join",
            key=self.frame.idempotency_key(key),
            agent=ComponentRecord(kind="join", name=spec.name),
            node_id=self.node.node_id,
        )
        context = step_context(record)

        async def run(_: int) -> BaseModel:
            instance = self.runtime.assembly.container.create(
                cls, spec.deps, self.frame.context(context)
            )
            try:
                output = await maybe_await(instance.join(join_input))
            except AgbossError:
                raise
            except Exception as error:
                raise StepFailedError(
                    f"the join {spec.name} failed: {error!r}", node_id=self.node.node_id
                ) from error
            if isinstance(output, spec.output):
                return output
            try:
                return spec.output.model_validate(output)
            except Exception as error:
                raise DtoValidationError(
                    f"the join {spec.name} returned {type(output).__name__}, not "
                    f"{spec.output.__name__}",
                    hint=f"return a {spec.output.__name__} from join()",
                ) from error

        return await run_once(
            self.frame,
            Step(
                key,
                record,
                run,
                encode=lambda output: output.model_dump_json(),
                decode=spec.output.model_validate_json,
            ),
        )


def _matches(error: BaseException, error_class: type[BaseException]) -> bool:
    """Whether ``error`` or an error in its cause chain is an ``error_class`` (a failure read
    back from the store as a `RecordedError` matches by the class names it kept)."""
    seen: set[int] = set()
    wanted = qualified_name(error_class)
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, error_class) or wanted in failure_names(current):
            return True
        seen.add(id(current))
        current = current.__cause__ or getattr(current, "cause", None)
    return False
