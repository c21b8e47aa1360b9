"""The agent's tool loop."""

from agboss.agents.loop import ANSWER_TOOL, AgentRun

__all__ = ["ANSWER_TOOL", "AgentRun"]
