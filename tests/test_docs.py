"""The documents' code runs as written."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from agboss.models import ChatRequest, Message, MessageRole, ModelCaller

DOCS = Path(__file__).resolve().parent.parent / "docs"


def snippet(document: str, name: str) -> str:
    """The Python block after ``<!-- snippet: name`` in a document."""
    text = (DOCS / document).read_text()
    found = re.search(rf"<!-- snippet: {re.escape(name)}\b.*?-->\n```python\n(.*?)```", text, re.S)
    assert found is not None, f"{document} has no snippet {name}"
    return found.group(1)


def test_the_function_provider_example_is_a_model_that_answers() -> None:
    namespace: dict[str, Any] = {}
    exec(snippet("models.md", "function-provider"), namespace)  # as a reader runs it
    provider = namespace["provider"]
    assert list(provider.serves) == ["echo/*"]
    request = ChatRequest(
        model="echo/1",
        messages=(Message(role=MessageRole.USER, content="hello"),),
        tools=(),
        caller=ModelCaller(kind="agent", name="echo-agent", tenant_id="t", execution_id="ex-1"),
    )
    response = asyncio.run(provider.chat_model("echo/1").complete(request))
    [call] = response.tool_calls
    assert (call.name, call.arguments) == ("final_answer", '{"text": "hello"}')
