"""The graph a flow compiles to: nodes with their DTOs, and the edges between them.

The graph is general (nodes by id, each with its successors) so that launches, joins and child
workflows can join the linear chain without a new runner shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from agboss.flow._dsl import Failure, JoinSpec, QuorumGroup, StepKind

__all__ = ["CompiledBranch", "CompiledLaunch", "FlowGraph", "FlowNode"]


@dataclass(frozen=True, slots=True)
class CompiledBranch:
    """One component a launch runs: an agent, or a workflow as a child execution."""

    component: type[Any]
    name: str
    workflow: bool
    output: type[BaseModel]


@dataclass(frozen=True, slots=True)
class CompiledLaunch:
    """A launch and its join, checked.

    Attributes:
        branches: The components it runs (one, for a per-item launch).
        over: The list field of the input a per-item launch runs over.
        item: The DTO of one item (the branches' input), for a per-item launch.
        max_concurrency: How many branches run at once (``None``: all).
        failure: What a failing branch does to the launch.
        join: The join, its deadline, quorum and error handlers.
        join_name: The join class's name.
        groups: The quorum groups, if any.
    """

    branches: tuple[CompiledBranch, ...]
    over: str | None
    item: type[BaseModel] | None
    max_concurrency: int | None
    failure: Failure
    join: JoinSpec
    join_name: str
    groups: tuple[QuorumGroup, ...] = ()


@dataclass(frozen=True, slots=True)
class FlowNode:
    """One node of a compiled flow.

    Attributes:
        node_id: Stable within the workflow's version: ``<position>:<component name>``.
        kind: What it runs.
        component: The component class.
        name: The component's name.
        input: The DTO the node takes.
        output: The DTO the node hands on.
        next: The id of the node that runs after it, ``None`` after the finish.
        launch: A launch node's branches and join.
    """

    node_id: str
    kind: StepKind
    component: type[Any] | None
    name: str
    input: type[BaseModel]
    output: type[BaseModel]
    next: str | None
    launch: CompiledLaunch | None = None


@dataclass(frozen=True, slots=True)
class FlowGraph:
    """A workflow's compiled flow."""

    start: str
    nodes: dict[str, FlowNode]

    @property
    def start_node(self) -> FlowNode:
        """The start node."""
        return self.nodes[self.start]

    @property
    def has_children(self) -> bool:
        """Whether the flow starts child executions (a workflow step or a workflow launch)."""
        return any(
            node.kind is StepKind.WORKFLOW
            or (node.launch is not None and any(branch.workflow for branch in node.launch.branches))
            for node in self.nodes.values()
        )

    @property
    def finish_output(self) -> type[BaseModel]:
        """The DTO the workflow finishes with."""
        for node in self.nodes.values():
            if node.kind is StepKind.FINISH:
                return node.output
        raise AssertionError("a compiled flow always has a finish")  # pragma: no cover
