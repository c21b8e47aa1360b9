"""The test kit: `test_with`, scripted models, recording mocks, a test clock.

```python
async with test_with(OfficeApplication) as env:
    env.mock_llm(OfficeAgent).then_return(
        call_tools(tool_call(ReturnDepositTool, lease_id="L-7")),
    ).then_return(reply_with(WorkflowFinishTextDto, text="Done."))
    result = await env.app.execute(OfficeWorkflow, WorkflowStartTextDto(text="…"), owner_id="u-1")
```
"""

from agboss.testing._clock import TestClock
from agboss.testing._env import TestEnv, test_with
from agboss.testing._llm import (
    LlmScript,
    ScriptedDecision,
    ScriptedFailure,
    ScriptedProvider,
    ScriptedTurn,
    ScriptedWhen,
    call_tools,
    decide_with,
    fail_with,
    invalid_answer,
    reply_with,
    tool_call,
)
from agboss.testing._mocks import ComponentMock

__all__ = [
    "ComponentMock",
    "LlmScript",
    "ScriptedDecision",
    "ScriptedFailure",
    "ScriptedProvider",
    "ScriptedTurn",
    "ScriptedWhen",
    "TestClock",
    "TestEnv",
    "call_tools",
    "decide_with",
    "fail_with",
    "invalid_answer",
    "reply_with",
    "test_with",
    "tool_call",
]
