"""The graph a flow compiles to: nodes with their DTOs, and the edges between them.

The graph is general (nodes by id, each with its successors) so that launches, joins and child
workflows can join the linear chain without a new interpreter shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from agboss.flow.dsl import StepKind

__all__ = ["FlowGraph", "FlowNode"]


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
    """

    node_id: str
    kind: StepKind
    component: type[Any]
    name: str
    input: type[BaseModel]
    output: type[BaseModel]
    next: str | None


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
    def finish_output(self) -> type[BaseModel]:
        """The DTO the workflow finishes with."""
        for node in self.nodes.values():
            if node.kind is StepKind.FINISH:
                return node.output
        raise AssertionError("a compiled flow always has a finish")  # pragma: no cover
