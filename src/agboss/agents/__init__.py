"""What an agent's users name: the answer tool an agent answers through.

The tool loop itself is a step of the engine (`agboss.engine`); this package holds only the
values that applications and scripted models refer to, so it imports nothing of agboss.
"""

ANSWER_TOOL = "final_answer"
"""The name of the tool an agent answers through (its arguments are the agent's output DTO)."""

__all__ = ["ANSWER_TOOL"]
