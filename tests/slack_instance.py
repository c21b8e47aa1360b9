"""One instance of the Slack application in a process of its own, to be killed:
``python -m tests.slack_instance STORE_URL PORT_FILE``.

It opens the application on the store (its workspace from ``SLACK_BOT_TOKEN`` and
``SLACK_API_URL``: the test's fake Slack), serves `slack_router` on a free loopback port, writes
the port to PORT_FILE and serves until it is killed. The model and the answerer are the ones
`tests.test_slack_crash` runs its other instance with.
"""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import timedelta
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.routing import Mount

from agboss import App, FunctionProvider, PauseAnswerer
from agboss.agents import ANSWER_TOOL
from agboss.models import ChatRequest, ChatResponse, MessageRole, ToolCall
from agboss.slack import SlackAnswering, slack_router
from tests.apps.slack_app import SlackApplication

LEASE = timedelta(milliseconds=600)
"""A short lease: the other instance takes a dead one's tree over in under a second."""

SIGNING_SECRET = "fake-signing-secret"  # the fake Slack's default
MANAGERS = {"U0MANAGER": "manager-17", "U0DEPUTY": "manager-4"}


def model(request: ChatRequest) -> ChatResponse:
    """Asks to refund order o-1; once the tool ran, says it is done."""
    if any(message.role is MessageRole.TOOL for message in request.messages):
        done = ToolCall(id="f", name=ANSWER_TOOL, arguments=json.dumps({"text": "Done."}))
        return ChatResponse(tool_calls=(done,))
    refund = {"order_id": "o-1", "amount": 40}
    return ChatResponse(
        tool_calls=(ToolCall(id="r", name="refund-card-tool", arguments=json.dumps(refund)),)
    )


def answerer(asking: SlackAnswering) -> str | None:
    """The managers answer the refund roles' questions."""
    if asking.answered_by is PauseAnswerer.THREAD_OWNER:
        return None
    return MANAGERS.get(asking.user.id)


async def main(url: str, port_file: Path) -> None:
    app = await App.create(
        SlackApplication, store=url, providers=[FunctionProvider(model)], lease_ttl=LEASE
    )
    routes = slack_router(app, signing_secret=SIGNING_SECRET, answerer=answerer)
    config = uvicorn.Config(
        Starlette(routes=[Mount("/slack", routes)]),
        host="127.0.0.1",
        port=0,
        log_level="warning",
        lifespan="off",
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        if serving.done():
            serving.result()  # it failed to start: say why
        await asyncio.sleep(0.01)
    port_file.write_text(str(server.servers[0].sockets[0].getsockname()[1]))
    await serving


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2])))
