"""The documents' code runs as written."""

from __future__ import annotations

import asyncio
import inspect
import re
from pathlib import Path
from typing import Any

import pytest

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
        shown = re.search(rf"(?:^\| |/ )`@{name}\((.*?)\)`", text, re.M)
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


class _Sessions:
    """Who signs in, for the FastAPI snippet: everyone is user-1."""

    async def user_of(self, request: Any) -> Any:
        return type("User", (), {"id": "user-1"})()


async def test_the_fastapi_lifespan_wiring_serves_the_router_once_the_app_is_open(
    tmp_path: Path,
) -> None:
    import httpx
    import uvicorn

    from agboss import FunctionProvider
    from agboss.models import ChatResponse
    from tests.apps.office import OfficeApplication

    namespace: dict[str, Any] = {
        "OfficeApplication": OfficeApplication,
        "STORE_URL": f"sqlite:///{tmp_path / 'app.db'}",
        "PROVIDERS": [FunctionProvider(lambda request: ChatResponse(content="x"), serves=("*",))],
        "sessions": _Sessions(),
    }
    exec(snippet("pauses.md", "fastapi-lifespan"), namespace)  # as a reader runs it
    api = namespace["api"]
    assert namespace["opened"] == {}  # built before the app is open
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=api), base_url="http://test"
    ) as http:
        early = await http.get("/agboss/pauses")  # no lifespan has run: the app is not open
    assert early.status_code == 503
    assert early.json()["code"] == "web.app-not-open"
    config = uvicorn.Config(api, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:  # uvicorn has no event to wait on  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            listed = await http.get("/agboss/pauses")
        assert listed.status_code == 200, listed.text
        assert listed.json()["entries"] == []
    finally:
        server.should_exit = True
        await task
    assert namespace["opened"] == {}  # closed with the lifespan


def test_models_md_lists_every_member_of_the_provider_protocol() -> None:
    from agboss.models import ModelProvider
    from agboss.models._provider import MODEL_PROVIDER_MEMBERS

    members = {name for name in vars(ModelProvider) if not name.startswith("_")}
    assert members == set(MODEL_PROVIDER_MEMBERS)
    own = (DOCS / "models.md").read_text().split("**Your own.**", 1)[1].split("\n\n", 1)[0]
    for name in MODEL_PROVIDER_MEMBERS:
        assert f"`{name}" in own, name


async def test_a_provider_without_a_member_is_refused_naming_it_and_real_classes(
    tmp_path: Path,
) -> None:
    from agboss import App, ConfigurationError
    from tests.apps.desk import OfficeApplication

    class Partial:  # a provider written to the docs before decision_model existed
        serves = ("*",)

        def chat_model(self, model: str) -> Any:
            raise NotImplementedError

        async def aclose(self) -> None:
            return None

    with pytest.raises(ConfigurationError) as refused:
        await App.create(OfficeApplication, store=tmp_path / "a.db", providers=[Partial()])
    assert "Partial" in refused.value.message
    assert "decision_model" in refused.value.message
    named = re.findall(r"\b([A-Z]\w+Provider)\(", refused.value.hint or "")
    assert named
    import agboss.models.anthropic
    import agboss.models.openai

    homes = (agboss, agboss.models.openai, agboss.models.anthropic)
    for name in named:
        assert any(hasattr(home, name) for home in homes), f"the hint names {name}: no such class"


def test_every_argument_of_the_anthropic_provider_is_in_models_md() -> None:
    from agboss.models.anthropic import AnthropicProvider

    text = (DOCS / "models.md").read_text()
    said = text.split("`AnthropicProvider(...)` takes", 1)[1].split("```", 1)[0]
    named = set(re.findall(r"`(\w+)` \(", said))
    assert named == set(inspect.signature(AnthropicProvider).parameters)
