"""The agent's tool loop."""

from agboss.agents.loop import ANSWER_TOOL, WAITING, AgentRun, Waiting

__all__ = ["ANSWER_TOOL", "WAITING", "AgentRun", "Waiting"]
