"""The approvals example's ``--slack`` mode: the expense is asked in Slack (`agboss.slack`).

With no Slack settings, a fake Slack runs on loopback (`agboss.testing.slack.FakeSlack`: no
network, no account) and you click in the terminal — each click is posted to the route as
Slack posts it, signed — and the message is printed as Slack shows it, before and after.

With ``SLACK_BOT_TOKEN``, ``SLACK_SIGNING_SECRET``, ``SLACK_CONVERSATION`` and
``AGBOSS_SLACK_OWNER`` (the Slack user id that answers as the demo's owner) set, the question
goes to your workspace and the route is served on ``--port``: point the Slack app's
Interactivity Request URL at it (through a tunnel) and click in Slack (docs/slack.md).
"""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.routing import Mount

from agboss import (
    App,
    ExecutionContext,
    ExecutionOutput,
    ExecutionStatus,
    PiiKind,
    PiiRule,
    WorkflowStartTextDto,
    application,
    channel,
    provide,
    replace_with_token,
)
from agboss.models import ModelProvider
from agboss.slack import SlackChannel, SlackWorkspace, slack_router
from agboss.testing.slack import FakeMessage, FakeSlack
from examples.flow_patterns.approvals.components import ExpenseApprovalChannel, OfficeWorkflow
from examples.flow_patterns.desk_dtos import ExpenseDto

__all__ = ["SlackOfficeApplication", "slack_demo"]

FAKE_USER = "U0DEMOOWNER"
"""The Slack user who clicks in the fake workspace: mapped to the demo's owner."""
REAL = ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_CONVERSATION", "AGBOSS_SLACK_OWNER")


@channel(
    name="slack-expense-approval-channel",
    description="Asks the thread's owner in Slack",
    deps=[SlackWorkspace, ExecutionContext],
)
class SlackExpenseApprovalChannel(SlackChannel[ExpenseDto], ExpenseApprovalChannel):
    """The expense role, asked in the workspace's conversation (``SLACK_CONVERSATION``)."""


@application(
    name="slack-office-application",
    workflows=[OfficeWorkflow],
    channels=[SlackExpenseApprovalChannel],
    pii=[PiiRule(PiiKind.IBAN, replace_with_token())],
    dependencies=[provide(SlackWorkspace, factory=SlackWorkspace.from_env)],
)
class SlackOfficeApplication:
    """The office desk, its expenses approved in Slack."""


_MARKUP = re.compile(r"<!date\^\d+\^[^|>]*\|([^>]*)>|<@(\w+)>|\*")


def _plain(text: str) -> str:
    """Slack's markup as the terminal shows it: a date's fallback, @user, no bold stars."""
    text = _MARKUP.sub(lambda m: m.group(1) or (f"@{m.group(2)}" if m.group(2) else ""), text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def shown(message: FakeMessage) -> str:
    """A message as Slack shows it, in the terminal: a line per block, the buttons last."""
    lines: list[str] = []
    for block in message.blocks:
        if "fields" in block:
            pairs = (field["text"].split("\n", 1) for field in block["fields"])
            lines.append("   ".join(f"{_plain(k)}: {_plain(v)}" for k, v in pairs))
        elif block.get("type") == "context":
            lines.extend(_plain(e["text"]) for e in block["elements"])
        elif "text" in block:
            lines.extend(_plain(block["text"]["text"]).splitlines())
    buttons = " ".join(f"[{label}]" for label in message.buttons())
    return "\n".join(f"  │ {line}" for line in [*lines, buttons] if line)


async def served(asgi: Starlette, port: int) -> tuple[uvicorn.Server, asyncio.Task[None], int]:
    """A uvicorn server on 127.0.0.1 and the port it bound."""
    config = uvicorn.Config(asgi, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        if serving.done():
            serving.result()  # the port was taken: its error
        await asyncio.sleep(0.05)
    return server, serving, server.servers[0].sockets[0].getsockname()[1]


async def settled(app: App, execution_id: str) -> ExecutionOutput:
    """The execution once its background pass is over (no longer running)."""
    while True:
        found = await app.get(execution_id)
        if found.status is not ExecutionStatus.RUNNING:
            return found
        await asyncio.sleep(0.05)


KEYS = "a (Approve), r <reason> (Reject with reason), e key=value … (Edit), or w <your words>"
"""What the terminal's keys click."""


def understood(line: str) -> bool:
    """Whether a terminal line names one of the message's buttons (and what a form needs)."""
    word, _, rest = line.strip().partition(" ")
    word = word.lower()
    if word in ("a", "approve"):
        return True
    return word[:1] in ("r", "e", "w") and bool(rest.strip())


async def click(slack: FakeSlack, url: str, message: FakeMessage, line: str) -> str | None:
    """One terminal line as a click in Slack (and a modal's submission); what went wrong,
    if the route refused it on the modal."""
    word, _, rest = line.strip().partition(" ")
    word = word.lower()
    if word in ("a", "approve"):
        await slack.click(url, message, "Approve", user=FAKE_USER)
        return None
    opens = {"r": "Reject with reason", "e": "Edit", "w": "Answer in words"}.get(word[:1])
    if opens is None or not rest.strip():  # `understood` said it was one
        return f"click {KEYS}"
    await slack.click(url, message, opens, user=FAKE_USER)
    view = slack.views[-1]
    values: dict[str, Any]
    if opens == "Edit":
        values = dict(pair.partition("=")[::2] for pair in rest.split())
    else:
        values = {"agboss.reason" if opens.startswith("Reject") else "agboss.words": rest.strip()}
    response = await slack.submit(url, view, values)
    if response.content:
        return "; ".join(response.json().get("errors", {}).values()) or None
    return None


async def answer_in_fake_slack(
    app: App,
    slack: FakeSlack,
    url: str,
    result: ExecutionOutput,
    next_line: Callable[[], Awaitable[str]],
) -> ExecutionOutput:
    """Clicks, from the terminal, until nothing waits (or the answers run out)."""
    while result.status is ExecutionStatus.PAUSED:
        message = next(m for m in reversed(slack.messages()) if m.buttons())
        print(f"Slack, {message.channel}:")
        print(shown(message))
        print("click: a (Approve) | r <reason> | e key=value … (Edit) | w <your words>  ", end="")
        line = await next_line()
        if not line:
            print("\nno more answers: the question still waits in Slack.")
            return result
        print(line.rstrip())
        if not understood(line):
            key = line.strip().partition(" ")[0] or "an empty line"
            print(f"  {key!r} is no button of the message: {KEYS}")
            continue
        before, told = message.updates, len(slack.ephemerals)
        refused = await click(slack, url, message, line)
        if refused:
            print(f"  the modal says: {refused}")
            continue
        for _ in range(200):  # the route updates the message after its response
            if slack.message(message.ts).updates > before or len(slack.ephemerals) > told:
                break
            await asyncio.sleep(0.05)
        for ephemeral in slack.ephemerals[told:]:
            print(f"  only you see: {ephemeral['text']}")
        result = await settled(app, result.execution_id)
        print("Slack, after:")
        print(shown(slack.message(message.ts)))
    return await app.get(result.execution_id, record=True)


async def slack_demo(
    request: str,
    provider: ModelProvider,
    owner: str,
    next_line: Callable[[], Awaitable[str]],
    report: Callable[[ExecutionOutput], None],
    *,
    port: int = 8765,
) -> None:
    """Runs one request whose expense is asked in Slack: the fake one, or a real workspace."""
    real = all(os.environ.get(name) for name in REAL)
    with tempfile.TemporaryDirectory(prefix="agboss-slack-demo-") as folder, FakeSlack() as fake:
        if not real:  # this process's environment only: what SlackWorkspace.from_env reads
            os.environ.update(
                SLACK_BOT_TOKEN=fake.token,
                SLACK_API_URL=fake.base_url,
                SLACK_CONVERSATION="C0OFFICEDESK",
            )
        secret = os.environ["SLACK_SIGNING_SECRET"] if real else fake.signing_secret
        user = os.environ["AGBOSS_SLACK_OWNER"] if real else FAKE_USER
        store = Path(".agboss/slack-demo.db") if real else Path(folder) / "agboss.db"
        store.parent.mkdir(exist_ok=True)
        async with await App.create(
            SlackOfficeApplication, store=store, providers=[provider]
        ) as app:
            fake.clock = app.clock
            route = slack_router(app, signing_secret=secret, answerer={user: owner})
            asgi = Starlette(routes=[Mount("/slack", route)])
            server, serving, bound = await served(asgi, port if real else 0)
            try:
                url = f"http://127.0.0.1:{bound}/slack/interactions"
                print(
                    f"Slack: {'your workspace' if real else 'a fake Slack on loopback'}; "
                    f"interactions at {url}"
                )
                print(f"request: {request}")
                result = await app.execute(
                    OfficeWorkflow, WorkflowStartTextDto(text=request), owner_id=owner
                )
                if real:
                    print(
                        "point the Slack app's Interactivity Request URL here (a tunnel), and "
                        "click in Slack; Ctrl-C stops"
                    )
                    while result.status in (ExecutionStatus.PAUSED, ExecutionStatus.RUNNING):
                        await asyncio.sleep(1)
                        result = await app.get(result.execution_id)
                    result = await app.get(result.execution_id, record=True)
                else:
                    result = await answer_in_fake_slack(app, fake, url, result, next_line)
                report(result)
            finally:
                server.should_exit = True
                await serving
