"""The flow DSL and the graph it compiles to."""

from agboss.flow._dsl import (
    Failure,
    Flow,
    FlowChain,
    FlowStart,
    LaunchChain,
    QuorumGroup,
    start,
)

__all__ = ["Failure", "Flow", "FlowChain", "FlowStart", "LaunchChain", "QuorumGroup", "start"]
