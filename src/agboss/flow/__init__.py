"""The flow DSL and the graph it compiles to."""

from agboss.flow.dsl import Flow, FlowChain, FlowStart, start

__all__ = ["Flow", "FlowChain", "FlowStart", "start"]
