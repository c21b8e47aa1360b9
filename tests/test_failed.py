"""Finding what failed (issue 39): `App.failed` lists a tenant's failed execution trees newest
first, by keyset, with each failure's code and sentence masked; `agboss executions failed` and
the router's ``GET /executions/failed`` show the same — on both stores."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from fastapi import FastAPI

from agboss import (
    AgentFailedError,
    DtoValidationError,
    ExecutionStatus,
    FunctionProvider,
    WorkflowStartTextDto,
)
from agboss.cli._main import cli
from agboss.models import ChatRequest, ChatResponse
from agboss.testing import TestEnv, test_with
from agboss.web import pause_router
from tests.apps.desk import OfficeApplication, OfficeWorkflow
from tests.apps.pii_app import EMAIL, MessageWorkflow, PiiApplication
from tests.stores import STORE_KINDS, store_url
from tests.test_round_trips import ASK
from tests.test_web import bearer, serve

APP = "tests.apps.desk:OfficeApplication"


class ProviderDownError(Exception):
    """The model provider is down, past what its retries could wait (not tried again)."""


def provider_down(request: ChatRequest) -> ChatResponse:
    """A model provider that is down for a request that says so; else the office's turn."""
    said = next((m.content for m in request.messages if "down" in m.content), None)
    if said is not None:
        raise ProviderDownError(f"the provider is down (asked by {EMAIL})")
    return ASK.response(request)


@pytest.fixture(params=STORE_KINDS)
async def url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    async with store_url(request.param, tmp_path) as made:
        yield made


async def fail(
    env: TestEnv,
    text: str,
    *,
    owner_id: str = "user-1",
    tenant_id: str | None = None,
    workflow: type[Any] = OfficeWorkflow,
) -> str:
    """An execution whose model call fails; its id."""
    before = {
        e.execution_id for e in (await env.app.failed(tenant_id=tenant_id, limit=500)).entries
    }
    with pytest.raises(AgentFailedError):
        await env.app.execute(
            workflow, WorkflowStartTextDto(text=text), owner_id=owner_id, tenant_id=tenant_id
        )
    after = {e.execution_id for e in (await env.app.failed(tenant_id=tenant_id, limit=500)).entries}
    [made] = after - before
    return made


async def test_failed_trees_are_listed_newest_first_with_their_failure(url: str) -> None:
    async with test_with(
        OfficeApplication, store=url, providers=[FunctionProvider(provider_down)]
    ) as env:
        first = await fail(env, "down one")
        await env.clock.advance(timedelta(seconds=1))
        second = await fail(env, "down two")
        paused = await env.app.execute(
            OfficeWorkflow, WorkflowStartTextDto(text="Book the taxi"), owner_id="user-1"
        )
        assert paused.status is ExecutionStatus.PAUSED  # not failed: not listed
        page = await env.app.failed()
        assert [entry.execution_id for entry in page.entries] == [second, first]
        assert page.next is None
        entry = page.entries[0]
        assert entry.code == "agent.failed"
        assert "its model call failed" in entry.message
        assert "ProviderDownError" in entry.message
        assert EMAIL in entry.message  # the office has no PII rules: shown as it was
        assert entry.workflow == "office-workflow"
        assert (entry.owner_id, entry.thread_id) == ("user-1", entry.thread_id)
        assert entry.failed_at == env.clock.now()
        assert entry.error_type == "agboss.errors.AgentFailedError"
        assert entry.hint is not None  # a provider down: what to do once it is back
        assert "app.retry(execution_id)" in entry.hint
        with pytest.raises(AgentFailedError):  # what it lists is what get() raises
            await env.app.get(entry.execution_id)


async def test_pages_follow_by_keyset_and_filters_hold(url: str) -> None:
    async with test_with(
        OfficeApplication, store=url, providers=[FunctionProvider(provider_down)]
    ) as env:
        made = []
        for n in range(5):
            made.append(await fail(env, f"down {n}", owner_id="ada" if n % 2 else "bo"))
            if n != 2:  # two at the same moment: the id breaks the tie
                await env.clock.advance(timedelta(seconds=1))
        await fail(env, "down elsewhere", owner_id="ada", tenant_id="other")
        seen: list[str] = []
        after = None
        while True:
            page = await env.app.failed(limit=2, after=after)
            assert len(page.entries) <= 2
            seen += [entry.execution_id for entry in page.entries]
            after = page.next
            if after is None:
                break
        assert sorted(seen) == sorted(made)  # each once, another tenant's never
        assert len(seen) == len(set(seen)) == 5
        assert seen[0] == made[-1]
        adas = await env.app.failed(owner_id="ada")
        assert [e.execution_id for e in adas.entries] == [made[3], made[1]]
        other = await env.app.failed(tenant_id="other")
        assert len(other.entries) == 1
        with pytest.raises(DtoValidationError, match="not a cursor"):
            await env.app.failed(after="not-a-cursor")
        with pytest.raises(DtoValidationError, match="from 1 to 500"):
            await env.app.failed(limit=0)


async def test_the_command_line_and_the_router_list_them_too(url: str) -> None:
    async with test_with(
        OfficeApplication, store=url, providers=[FunctionProvider(provider_down)]
    ) as env:
        failed = await fail(env, "down now")
        api = FastAPI()
        api.mount("/agboss", pause_router(env.app, authenticate=bearer))
        server, task, port = await serve(api)
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
                mine = await http.get(
                    "/agboss/executions/failed", headers={"Authorization": "Bearer tok-owner"}
                )
                assert mine.status_code == 200
                [entry] = mine.json()["entries"]
                assert (entry["execution_id"], entry["code"]) == (failed, "agent.failed")
                theirs = await http.get(
                    "/agboss/executions/failed", headers={"Authorization": "Bearer tok-other"}
                )
                assert theirs.json()["entries"] == []  # another owner's threads
                channel = await http.get(
                    "/agboss/executions/failed", headers={"Authorization": "Bearer tok-manager"}
                )
                assert channel.status_code == 403
                bad = await http.get(
                    "/agboss/executions/failed?after=x",
                    headers={"Authorization": "Bearer tok-owner"},
                )
                assert (bad.status_code, bad.json()["code"]) == (422, "dto.invalid")
        finally:
            server.should_exit = True
            await task
    listed = await asyncio.to_thread(
        CliRunner().invoke, cli, ["executions", "failed", "--app", APP, "--store", url, "--json"]
    )
    assert listed.exit_code == 0, listed.output
    [row] = [json.loads(line) for line in listed.output.splitlines()]
    assert (row["execution_id"], row["code"]) == (failed, "agent.failed")


async def test_a_failure_is_masked_by_the_workflows_pii_rules(url: str) -> None:
    async with test_with(
        PiiApplication, store=url, providers=[FunctionProvider(provider_down)]
    ) as env:
        await fail(env, "down", workflow=MessageWorkflow)
        [entry] = (await env.app.failed()).entries
        assert "the provider is down" in entry.message
        assert EMAIL not in entry.message  # masked, as everything that leaves the process
