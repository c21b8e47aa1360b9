"""The flow DSL and the graph it compiles to."""

from agboss.flow._dsl import (
    Failure,
    Flow,
    FlowChain,
    FlowStart,
    LaunchChain,
    LaunchSpec,
    QuorumGroup,
    StepKind,
    start,
)
from agboss.flow._graph import CompiledBranch, CompiledLaunch, FlowGraph, FlowNode

__all__ = [
    "CompiledBranch",
    "CompiledLaunch",
    "Failure",
    "Flow",
    "FlowChain",
    "FlowGraph",
    "FlowNode",
    "FlowStart",
    "LaunchChain",
    "LaunchSpec",
    "QuorumGroup",
    "StepKind",
    "start",
]
