"""An A2A agent's tasks: the SDK's in-memory tasks, kept by person, with agboss's store
behind them — a task not in memory (another instance began it, or this one restarted) is read
again from its thread."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from a2a.server.context import ServerCallContext
from a2a.server.tasks import InMemoryTaskStore, TaskStore
from a2a.types import ListTasksRequest, ListTasksResponse, Task, TaskState, TaskStatus

from agboss.app import App
from agboss.enums import ExecutionStatus
from agboss.http import opened_app
from agboss.protocols._questions import open_questions
from agboss.web import Caller

__all__ = ["CALLER_KEY", "CONTEXT_MARK", "Tasks", "caller_of", "context_of", "scope_of"]

CALLER_KEY: Final = "agboss.caller"
"""Where the call's context holds the `Caller` its request was authenticated as."""

CONTEXT_MARK: Final = "~"
"""A task id made in a client's context is ``<context>~<id>``: its context is read from it."""


def caller_of(state: Mapping[str, Any]) -> Caller | None:
    """The person a call's context (its ``state``) was authenticated as, if any."""
    found = state.get(CALLER_KEY)
    return found if isinstance(found, Caller) else None


def scope_of(context: ServerCallContext) -> str:
    """Whose tasks a call reads: the person's, in their tenant; a caller not signed in has
    only the tasks it began (each waiting for a sign-in)."""
    caller = caller_of(context.state)
    if caller is None or caller.owner_id is None:
        return ""
    return f"{caller.tenant_id or ''}/{caller.owner_id}"


def context_of(task_id: str) -> str:
    """The context a task was made in (`CONTEXT_MARK`); a task begun without one is its own."""
    context, marked, _ = task_id.rpartition(CONTEXT_MARK)
    return context if marked else task_id


@dataclass(frozen=True, slots=True)
class Tasks(TaskStore):
    """The SDK's in-memory tasks, by person, with agboss's store behind them: a task not in
    memory (another instance began it, this one restarted, or it was forgotten: memory keeps
    the ``most`` recently saved) is read again from its thread."""

    app_of: Callable[[], App | None]
    most: int = 10_000
    kept: InMemoryTaskStore = field(default_factory=lambda: InMemoryTaskStore(scope_of))
    creating: set[str] = field(default_factory=set)
    saved: OrderedDict[str, ServerCallContext] = field(default_factory=OrderedDict)
    """Each task in memory, and the call it was saved by (whose person it is): oldest first."""

    def begins(self, task_id: str) -> None:
        """Says that this instance is creating the task: it is not read again from its thread
        (which its first run opens) until the SDK has saved it."""
        self.creating.add(task_id)

    async def save(self, task: Task, context: ServerCallContext) -> None:
        await self.kept.save(task, context)
        self.creating.discard(task.id)
        self.saved[task.id] = context
        self.saved.move_to_end(task.id)
        while len(self.saved) > self.most:  # the oldest forgotten: an open one is read again
            forgotten, by = self.saved.popitem(last=False)
            await self.kept.delete(forgotten, by)

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        found = await self.kept.get(task_id, context)
        if found is not None:
            return found
        caller = caller_of(context.state)
        if caller is None or caller.owner_id is None or task_id in self.creating:
            return None
        anonymous = ServerCallContext()
        waiting = await self.kept.get(task_id, anonymous)
        if waiting is not None and waiting.status.state == TaskState.TASK_STATE_AUTH_REQUIRED:
            # Begun before its caller signed in: the first person to sign in takes it on.
            await self.delete(task_id, anonymous)
            await self.save(waiting, context)
            return waiting
        return await self._read_again(task_id, caller, context)

    async def _read_again(
        self, task_id: str, caller: Caller, context: ServerCallContext
    ) -> Task | None:
        app = opened_app(self.app_of, "a2a_app")
        output = await app.open_in(task_id, tenant_id=caller.tenant_id, owner_id=caller.owner_id)
        if output is None:
            return None  # not there, or another person's: alike
        asks = output.status is ExecutionStatus.PAUSED and bool(
            await open_questions(app, output, caller)
        )
        state = TaskState.TASK_STATE_INPUT_REQUIRED if asks else TaskState.TASK_STATE_WORKING
        task = Task(id=task_id, context_id=context_of(task_id), status=TaskStatus(state=state))
        await self.save(task, context)
        return task

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        return await self.kept.list(params, context)

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        await self.kept.delete(task_id, context)
        self.saved.pop(task_id, None)
