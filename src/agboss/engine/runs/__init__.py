"""What runs in a pass: the flow runner (`FlowRunner`), an agent's tool loop (`AgentRun`) and
a launch's branches (`LaunchRun`).
"""

from agboss.engine.runs._agent import describe_validation_error
from agboss.engine.runs._flows import FlowRunner

__all__ = ["FlowRunner", "describe_validation_error"]
