"""The step machine (`_steps.py`: replay → in doubt → attempts → intent → run → journal, under a
frozen `StepPolicy` per kind of step) and the rules around a tool call: its result, its input
rounds, and what happens to a call whose attempt may have run.
"""

from agboss.engine.steps._interrupted import on_interrupted
from agboss.engine.steps._steps import MODEL_CALL, MODEL_CALL_UNDER_BUDGET, Step, run_once, run_step
from agboss.engine.steps._tool_input import Answering, Asked, run_asking
from agboss.engine.steps._tool_results import (
    CallSite,
    ToolRaised,
    ToolResult,
    ToolStep,
    journal_refusal,
    tool_policy,
)

__all__ = [
    "MODEL_CALL",
    "MODEL_CALL_UNDER_BUDGET",
    "Answering",
    "Asked",
    "CallSite",
    "Step",
    "ToolRaised",
    "ToolResult",
    "ToolStep",
    "journal_refusal",
    "on_interrupted",
    "run_asking",
    "run_once",
    "run_step",
    "tool_policy",
]
