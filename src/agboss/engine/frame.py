"""An execution frame in a pass: its row, its journal, the pass's fence, and journaled steps.

`ExecutionFrame.step` is the engine's one primitive for touching the outside world: a step
whose key is in the journal returns the journaled result and runs nothing; any other runs once
and is journaled under the pass's fence before anything depends on it.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from agboss.context import ExecutionContext, StepContext, Tenant
from agboss.engine.runtime import Runtime
from agboss.models.messages import Usage
from agboss.records.model import StepRecord
from agboss.store.protocol import ExecutionRow, Fence, StepEntry

__all__ = ["ExecutionFrame", "maybe_await"]

T = TypeVar("T")


async def maybe_await(value: T | Awaitable[T]) -> T:
    """Awaits a handler's result if it is awaitable (handlers may be sync or async)."""
    if inspect.isawaitable(value):
        return await value
    return value


class ExecutionFrame:
    """One execution during one pass."""

    def __init__(
        self,
        runtime: Runtime,
        row: ExecutionRow,
        journal: dict[str, StepEntry],
        fence: Fence,
    ) -> None:
        self.runtime = runtime
        self.row = row
        self.journal = journal
        self.fence = fence
        self._next_seq = max((entry.seq for entry in journal.values()), default=0) + 1

    def idempotency_key(self, step_key: str) -> str:
        """A step's idempotency key: unique in the store, the same on every re-entry."""
        return f"{self.row.execution_id}/{step_key}"

    def context(self, step: StepContext | None = None) -> ExecutionContext:
        """The `ExecutionContext` of this execution, at a step."""
        row = self.row
        return ExecutionContext(
            tenant=Tenant(row.tenant_id),
            owner_id=row.owner_id,
            thread_id=row.thread_id,
            execution_id=row.execution_id,
            root_execution_id=row.root_execution_id,
            workflow=row.workflow,
            step=step,
        )

    def journaled(self, key: str) -> StepEntry | None:
        """The journal entry of a step, if it ran."""
        return self.journal.get(key)

    async def step(
        self,
        key: str,
        record: StepRecord,
        run: Callable[[], Awaitable[T]],
        encode: Callable[[T], str],
        decode: Callable[[str], T],
        *,
        record_of: Callable[[T], StepRecord] | None = None,
    ) -> T:
        """Runs a step once: from the journal if it ran, else for real, then journaled.

        Args:
            key: The step's key in this execution.
            record: Its record.
            run: Does the step's work.
            encode: The result as journal text.
            decode: Journal text as the result.
            record_of: The record completed with the result (a model call's usage).
        """
        entry = self.journal.get(key)
        if entry is not None:
            return decode(entry.result_json)
        result = await run()
        final_record = record_of(result) if record_of is not None else record
        entry = StepEntry(
            key=key,
            kind=final_record.kind,
            result_json=encode(result),
            record_json=final_record.model_dump_json(),
            seq=self._take_seq(),
        )
        await self.runtime.store.journal.append(
            self.fence, self.row.execution_id, entry, now=self.runtime.clock.now()
        )
        self.journal[key] = entry
        return result

    def _take_seq(self) -> int:
        seq = self._next_seq
        self._next_seq += 1
        return seq

    def records(self) -> list[StepRecord]:
        """The records of every journaled step, in the order they ran."""
        entries = sorted(self.journal.values(), key=lambda entry: entry.seq)
        return [StepRecord.model_validate_json(entry.record_json) for entry in entries]

    def usage(self) -> Usage:
        """What this execution's model calls spent."""
        total = Usage()
        for record in self.records():
            if record.usage is not None:
                total = total + record.usage
        return total

    def instance(self, component: type[T], deps: tuple[type[Any], ...], step: StepContext) -> T:
        """A component's instance for a step, its deps injected in the step's frame."""
        return self.runtime.assembly.container.create(component, deps, self.context(step))
