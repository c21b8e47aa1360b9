"""What a component can know about the execution frame it runs in: `ExecutionContext`.

List `ExecutionContext` in a component's ``deps=[...]`` and the container injects the frame's
context: the tenant, the thread's owner, the execution's ids and the current step with its
deterministic idempotency key, plus an abort signal that fires at the step's timeout.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

__all__ = ["AbortSignal", "ExecutionContext", "StepContext", "Tenant"]

DEFAULT_TENANT_ID = "default"


class AbortSignal:
    """Fires when the current step must stop: its timeout passed on the application's Clock."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self.reason: str | None = None

    @property
    def aborted(self) -> bool:
        """Whether the signal has fired."""
        return self._event.is_set()

    def abort(self, reason: str) -> None:
        """Fires the signal (the framework does this; handlers only read it)."""
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    async def wait(self) -> None:
        """Waits until the signal fires."""
        await self._event.wait()


@dataclass(frozen=True, slots=True)
class Tenant:
    """The tenant an execution runs for."""

    tenant_id: str


@dataclass(frozen=True, slots=True)
class StepContext:
    """The step that runs now.

    Attributes:
        node_id: The flow node the step belongs to (an agent's node).
        kind: ``model-call``, ``tool-run``, ``channel-send``, …
        idempotency_key: Deterministic for the step's place in the tree: the same on a retry
            and on re-entry, so handlers can make their own side effects idempotent with it.
        call_id: The model's tool call id, for a tool's steps.
        visit: How many times the node ran before in this execution.
        tool_loop_iteration: The agent's model turn the step belongs to.
        validation_attempts: How many invalid answers the agent gave before this step.
        copy_index: The branch of a parallel launch the step runs in (0 outside one).
        item_index: The item of a per-item launch the step runs for (``None`` outside one).
        attempt: Which run of a tool's call this is (1-based): the next after a call that
            may have run was run again. Counted for a tool that must not run twice (its
            ``on_interrupted`` is ``FAIL`` or ``ASK``, whose runs are journaled before they
            begin); always 1 for a ``RERUN`` tool, which writes no intent.
    """

    node_id: str
    kind: str
    idempotency_key: str
    call_id: str | None = None
    visit: int = 0
    tool_loop_iteration: int = 0
    validation_attempts: int = 0
    copy_index: int = 0
    item_index: int | None = None
    attempt: int = 1


@dataclass(frozen=True, slots=True)
class ExecutionContext:
    """The execution frame a component runs in.

    Attributes:
        tenant: The tenant of the execution.
        owner_id: The thread's owner; a resumed pass runs as the owner, whoever answered.
        thread_id: The conversation the execution belongs to.
        execution_id: The execution the step runs in (a child's own id in a child).
        root_execution_id: The root of the execution tree.
        workflow: The name of the running workflow.
        step: The current step, ``None`` outside a step.
        signal: Fires at the current step's timeout.
    """

    tenant: Tenant
    owner_id: str
    thread_id: str
    execution_id: str
    root_execution_id: str
    workflow: str
    step: StepContext | None = None
    signal: AbortSignal = field(default_factory=AbortSignal, compare=False)
