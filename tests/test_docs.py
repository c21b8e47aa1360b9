"""The documents' code runs as written."""

from __future__ import annotations

import asyncio
import inspect
import re
from pathlib import Path
from typing import Any

import agboss
from agboss.models import ChatRequest, Message, MessageRole, ModelCaller
from agboss.store.sql._migrations import LATEST_VERSION

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


DECORATORS = (
    "agent",
    "tool",
    "channel_role",
    "channel",
    "reply_interpreter",
    "workflow_start",
    "workflow_finish",
    "join",
    "workflow",
    "application",
)


def test_every_keyword_of_every_decorator_is_in_the_components_table() -> None:
    text = (DOCS / "components.md").read_text()
    missing = []
    for name in DECORATORS:
        shown = re.search(rf"`@{name}\((.*?)\)`", text)
        assert shown is not None, f"components.md does not show @{name}(...)"
        documented = {part.strip().split("=")[0] for part in shown.group(1).split(",")}
        declared = set(inspect.signature(getattr(agboss, name)).parameters)
        missing += [f"@{name}({keyword}=)" for keyword in sorted(declared - documented)]
        missing += [f"@{name} has no {keyword}=" for keyword in sorted(documented - declared)]
    assert missing == []


def test_every_migration_step_is_described_in_stores_md() -> None:
    text = (DOCS / "stores.md").read_text()
    described = {int(number) for number in re.findall(r"Step (\d+)", text)}
    assert described == set(range(1, LATEST_VERSION + 1))
