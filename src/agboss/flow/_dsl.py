"""The flow DSL.

``start(S).returns(Dto)`` begins a chain; ``.to_agent(A)`` and ``.to_workflow(W)`` run one
step; ``.to_parallel(A, B)``, ``.to_parallel_workflows(W1, W2)``, ``.to_each(A, over="items")``
and ``.to_each_workflow(W, over="items")`` launch branches that a ``.join(J)``,
``.join_quorum(J, min=2)`` or ``.join_quorum_groups(J, groups=[...])`` brings back together;
``.on_join_error(ErrorClass, J)`` takes a launch's failure; ``.to_finish(F)`` ends the chain.

A chain only records what it was told; `App.create` compiles it into a graph and checks that
each node takes what the node before it returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import timedelta
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from agboss.errors import ConfigurationError

__all__ = [
    "Failure",
    "Flow",
    "FlowChain",
    "FlowStart",
    "FlowStep",
    "JoinSpec",
    "LaunchChain",
    "LaunchSpec",
    "QuorumGroup",
    "StepKind",
    "start",
]


class StepKind(StrEnum):
    """What a step of a chain runs."""

    START = "start"
    AGENT = "agent"
    WORKFLOW = "workflow"
    LAUNCH = "launch"
    FINISH = "finish"


class Failure(StrEnum):
    """What a launch does when a branch fails."""

    FAIL_FAST = "fail-fast"
    """The first failure cancels the launch: running siblings are cancelled, paused siblings'
    pauses are withdrawn, and the join's error handler (or the execution) takes the error."""
    COLLECT = "collect"
    """Every branch runs to its end; the join gets each branch's output or error."""


@dataclass(frozen=True, slots=True)
class QuorumGroup:
    """A group of a launch's branches that wins a ``join_quorum_groups`` when ``min`` of its
    branches succeeded.

    Attributes:
        name: The group's name, as the join reads it.
        branches: The components of the launch that vote in this group.
        min: How many of them must succeed for the group to win.
    """

    name: str
    branches: tuple[type[Any], ...]
    min: int = 1


@dataclass(frozen=True, slots=True)
class JoinSpec:
    """How a launch's branches come back together."""

    handler: type[Any]
    deadline: timedelta | None = None
    quorum: int | None = None
    groups: tuple[QuorumGroup, ...] = ()
    error_handlers: tuple[tuple[type[BaseException], type[Any]], ...] = ()


@dataclass(frozen=True, slots=True)
class LaunchSpec:
    """Branches launched on the same input (or one per item), and their join."""

    components: tuple[type[Any], ...]
    workflows: bool
    over: str | None = None
    max_concurrency: int | None = None
    failure: Failure = Failure.FAIL_FAST
    join: JoinSpec | None = None


@dataclass(frozen=True, slots=True)
class FlowStep:
    """One step of a chain: its kind and the component it runs (or the launch)."""

    kind: StepKind
    component: type[Any] | None
    launch: LaunchSpec | None = None


@dataclass(frozen=True, slots=True)
class Flow:
    """A finished chain, from a ``@workflow_start`` to a ``@workflow_finish``."""

    steps: tuple[FlowStep, ...]
    returns: type[BaseModel] | None


@dataclass(frozen=True, slots=True)
class FlowChain:
    """A chain being built; end it with `to_finish`."""

    steps: tuple[FlowStep, ...]
    returns: type[BaseModel] | None

    def _then(self, step: FlowStep) -> FlowChain:
        return FlowChain((*self.steps, step), self.returns)

    def to_agent(self, agent: type[Any]) -> FlowChain:
        """Runs an ``@agent`` on what the chain has so far; it hands on its answer."""
        return self._then(FlowStep(StepKind.AGENT, agent))

    def to_workflow(self, workflow: type[Any]) -> FlowChain:
        """Runs a ``@workflow`` as a step (a child execution); it hands on its finish's output."""
        return self._then(FlowStep(StepKind.WORKFLOW, workflow))

    def _launch(self, launch: LaunchSpec) -> LaunchChain:
        return LaunchChain(self.steps, self.returns, launch)

    def to_parallel(
        self,
        *agents: type[Any],
        max_concurrency: int | None = None,
        failure: Failure = Failure.FAIL_FAST,
    ) -> LaunchChain:
        """Runs several ``@agent`` classes at once on the same input; join them next."""
        return self._launch(LaunchSpec(tuple(agents), False, None, max_concurrency, failure))

    def to_parallel_workflows(
        self,
        *workflows: type[Any],
        max_concurrency: int | None = None,
        failure: Failure = Failure.FAIL_FAST,
    ) -> LaunchChain:
        """Runs several ``@workflow`` classes at once as child executions; join them next."""
        return self._launch(LaunchSpec(tuple(workflows), True, None, max_concurrency, failure))

    def to_each(
        self,
        agent: type[Any],
        *,
        over: str,
        max_concurrency: int | None = None,
        failure: Failure = Failure.FAIL_FAST,
    ) -> LaunchChain:
        """Runs an ``@agent`` once per item of the input's list field ``over``; join next."""
        return self._launch(LaunchSpec((agent,), False, over, max_concurrency, failure))

    def to_each_workflow(
        self,
        workflow: type[Any],
        *,
        over: str,
        max_concurrency: int | None = None,
        failure: Failure = Failure.FAIL_FAST,
    ) -> LaunchChain:
        """Runs a ``@workflow`` as a child execution per item of the list field ``over``."""
        return self._launch(LaunchSpec((workflow,), True, over, max_concurrency, failure))

    def on_join_error(self, error: type[BaseException], handler: type[Any]) -> FlowChain:
        """After a join: a launch that failed with ``error`` (matched by class and cause
        chain) is taken by the ``@join`` class ``handler`` instead of failing the execution."""
        last = self.steps[-1] if self.steps else None
        if last is None or last.launch is None or last.launch.join is None:
            raise ConfigurationError(
                "on_join_error(...) comes right after .join(...) or a quorum join",
                hint="write .to_parallel(...).join(J).on_join_error(ErrorClass, Handler)",
            )
        join = last.launch.join
        launch = replace(
            last.launch,
            join=replace(join, error_handlers=(*join.error_handlers, (error, handler))),
        )
        return FlowChain((*self.steps[:-1], replace(last, launch=launch)), self.returns)

    def to_finish(self, finish: type[Any]) -> Flow:
        """Ends the chain at a ``@workflow_finish``, which returns what it is handed."""
        return Flow((*self.steps, FlowStep(StepKind.FINISH, finish)), self.returns)


@dataclass(frozen=True, slots=True)
class LaunchChain:
    """Branches launched; bring them together with a join."""

    steps: tuple[FlowStep, ...]
    returns: type[BaseModel] | None
    launch: LaunchSpec = field(default_factory=lambda: LaunchSpec((), False))

    def _join(self, join: JoinSpec) -> FlowChain:
        step = FlowStep(StepKind.LAUNCH, None, replace(self.launch, join=join))
        return FlowChain((*self.steps, step), self.returns)

    def join(self, handler: type[Any], *, deadline: timedelta | None = None) -> FlowChain:
        """Waits for every branch, then runs the ``@join`` class ``handler`` on their results.

        Args:
            handler: A ``@join`` class.
            deadline: Elapsed time on the application's Clock, pauses included, after which
                the launch fails with `JoinDeadlineError`.
        """
        return self._join(JoinSpec(handler, deadline))

    def join_quorum(
        self, handler: type[Any], *, min: int, deadline: timedelta | None = None
    ) -> FlowChain:
        """Joins as soon as ``min`` branches succeeded, when that can no longer happen, or at
        the deadline; the branches still waiting are dropped (their pauses withdrawn)."""
        return self._join(JoinSpec(handler, deadline, quorum=min))

    def join_quorum_groups(
        self,
        handler: type[Any],
        *,
        groups: list[QuorumGroup] | tuple[QuorumGroup, ...],
        deadline: timedelta | None = None,
    ) -> FlowChain:
        """Joins as soon as one group won (``min`` of its branches succeeded), when none can
        any more, or at the deadline; the branches still waiting are dropped."""
        return self._join(JoinSpec(handler, deadline, groups=tuple(groups)))


@dataclass(frozen=True, slots=True)
class FlowStart:
    """The start of a chain; say what it returns with `returns`."""

    component: type[Any]

    def returns(self, dto: type[BaseModel]) -> FlowChain:
        """The DTO the start hands to the next node: the workflow's input DTO."""
        return FlowChain((FlowStep(StepKind.START, self.component),), dto)


def start(component: type[Any]) -> FlowStart:
    """Begins a flow at a ``@workflow_start``."""
    return FlowStart(component)
