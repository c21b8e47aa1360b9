"""The webhook router, over real HTTP: a real uvicorn server on loopback, a real client."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from openapi_spec_validator import validate
from starlette.requests import Request

from agboss import ExecutionStatus, PauseStatus, ToolCallApprovalDecisionDto, pause_ref
from agboss.errors import (
    BudgetExceededError,
    ConfigurationError,
    DtoValidationError,
    LeaseBusyError,
    ModelProviderError,
    NotPausedError,
    PauseAnswererError,
    StoreBusyError,
    StoreUnavailableError,
    ThreadOwnerError,
    UnknownPauseError,
    UnknownStandingDecisionError,
)
from agboss.http import status_of
from agboss.testing import TestEnv, call_tools, reply_with, test_with
from agboss.web import Caller, pause_router
from tests.apps.replies_app import (
    OfficeAgent,
    OfficeApplication,
    OfficeWorkflow,
    RefundReplyInterpreter,
    RepliesRecorder,
    SlackRefundApprovalChannel,
    TightOfficeWorkflow,
)
from tests.test_replies import DONE, EXPENSE, REFUND
from tests.waiting import eventually

pytestmark = pytest.mark.application.with_args(OfficeApplication)

CALLERS = {
    "tok-owner": Caller(owner_id="user-1"),
    "tok-other": Caller(owner_id="user-2"),
    "tok-manager": Caller(answered_by="manager-17"),
}


async def bearer(request: Request) -> Caller | None:
    """The application's sign-in: a bearer token, never a name the client sends."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return CALLERS.get(token) if scheme == "Bearer" else None


@dataclass
class Served:
    env: TestEnv
    http: httpx.AsyncClient

    async def post(self, pause_id: str, body: object, token: str = "tok-owner") -> httpx.Response:
        """Answers as a person does, by the pause's reference; a channel's side by its id."""
        named = (
            {"pause_id": pause_id} if token == "tok-manager" else {"pause_ref": pause_ref(pause_id)}
        )
        return await self.http.post(
            "/agboss/answers",
            json={**named, **body} if isinstance(body, dict) else body,
            headers={"Authorization": f"Bearer {token}"},
        )

    async def inbox(self, token: str = "tok-owner", **query: str) -> httpx.Response:
        return await self.http.get(
            "/agboss/pauses", params=query, headers={"Authorization": f"Bearer {token}"}
        )

    async def status(self, pause_id: str) -> PauseStatus:
        pause = await self.env.app.store.pauses.find_by_tenant_id_and_pause_id("default", pause_id)
        assert pause is not None
        return pause.status

    async def paused_on(
        self, call: Any, workflow: type[Any] = OfficeWorkflow, *, then_done: bool = True
    ) -> str:
        """Executes until ``call`` waits; the id its channel was sent, or pending's."""
        script = self.env.mock_llm(OfficeAgent).then_return(call_tools(call))
        if then_done:
            script.then_return(DONE)
        slack = self.env.mock_of(SlackRefundApprovalChannel)
        result = await self.env.app.execute(workflow, {"text": "please"}, owner_id="user-1")
        assert result.status is ExecutionStatus.PAUSED
        if slack.send.called:
            return str(slack.send.call_args.args[0].pause_id)
        pause_id = result.pending[0].pause_id
        assert pause_id is not None
        return pause_id


async def serve(
    asgi: Any, *, access_log: bool = False, lifespan: bool = False
) -> tuple[uvicorn.Server, asyncio.Task[None], int]:
    """Serves ``asgi`` with uvicorn on loopback; with ``access_log``, as deployed: every
    request's line logged (on the standard loggers, which the test's ``caplog`` reads); with
    ``lifespan``, its lifespan run (an MCP server's session manager)."""
    spans = "on" if lifespan else "off"
    if access_log:
        config = uvicorn.Config(
            asgi, host="127.0.0.1", port=0, log_config=None, log_level="debug", lifespan=spans
        )
    else:
        config = uvicorn.Config(asgi, host="127.0.0.1", port=0, log_level="warning", lifespan=spans)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    return server, task, port


@pytest.fixture
async def served(env: TestEnv) -> AsyncIterator[Served]:
    api = FastAPI()  # the router mounts in a FastAPI application as in a Starlette one
    api.mount("/agboss", pause_router(env.app, authenticate=bearer, max_body=4096))
    server, task, port = await serve(api)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            yield Served(env, http)
    finally:
        server.should_exit = True
        await task


# ---- answering -------------------------------------------------------------------------------


async def test_a_post_records_the_owners_decision_and_the_tree_moves(
    served: Served, recorded: RepliesRecorder
) -> None:
    pause_id = await served.paused_on(EXPENSE)
    response = await served.post(pause_id, {"decision": {"approved": True, "reason": "fine"}})
    assert response.status_code == 202
    receipt = response.json()
    assert receipt["pause_ref"] == pause_ref(pause_id)
    assert "pause_id" not in receipt  # the id stays on the server
    assert receipt["responder"] == "user-1"
    asked = (await served.env.app.describe_pause(pause_id)).pause.ask
    assert receipt["decision"] == {
        "approved": True,
        "reason": "fine",
        "override_arguments": None,
        "digest": asked.digest,  # bound to the question it decided
        "override_digest": None,
    }
    assert receipt["repeated"] is False
    await eventually(lambda: recorded.runs == ["book-expense taxi"], "the booking")


async def test_a_channels_side_answers_with_a_reply_its_interpreter_reads(served: Served) -> None:
    pause_id = await served.paused_on(REFUND)
    served.env.mock_llm(RefundReplyInterpreter).then_return(
        reply_with(ToolCallApprovalDecisionDto, approved=True, reason="ok from Slack")
    )
    response = await served.post(pause_id, {"reply": "yes, go ahead"}, token="tok-manager")
    assert response.status_code == 202
    assert "pause_id" not in response.json()  # a pause's id is never shown back
    assert response.json()["pause_ref"] == pause_ref(pause_id)
    assert response.json()["responder"] == "manager-17"
    assert response.json()["decision"]["reason"] == "ok from Slack"


async def test_a_retried_post_of_the_same_answer_gets_the_same_receipt(served: Served) -> None:
    pause_id = await served.paused_on(EXPENSE)
    body = {"decision": {"approved": False, "reason": "no taxis"}}
    first = await served.post(pause_id, body)
    again = await served.post(pause_id, body)
    assert (first.status_code, again.status_code) == (202, 200)
    assert again.json() == {**first.json(), "repeated": True}
    other = await served.post(pause_id, {"decision": {"approved": True}})
    assert other.status_code == 409
    assert other.json()["code"] == "run.not-paused"
    assert other.headers["content-type"] == "application/problem+json"


async def test_two_identical_posts_at_once_record_one_answer_and_both_succeed(
    served: Served,
    recorded: RepliesRecorder,
) -> None:
    pause_id = await served.paused_on(EXPENSE)
    body = {"decision": {"approved": True}}
    first, second = await asyncio.gather(served.post(pause_id, body), served.post(pause_id, body))
    assert sorted([first.status_code, second.status_code]) == [200, 202]
    assert first.json()["decision"] == second.json()["decision"]
    await eventually(lambda: recorded.runs == ["book-expense taxi"], "one booking")


async def test_a_retried_reply_is_not_read_again(served: Served) -> None:
    pause_id = await served.paused_on(REFUND)
    script = served.env.mock_llm(RefundReplyInterpreter).then_return(
        reply_with(ToolCallApprovalDecisionDto, approved=True)
    )
    first = await served.post(pause_id, {"reply": "ok"}, token="tok-manager")
    again = await served.post(pause_id, {"reply": "ok"}, token="tok-manager")
    assert (first.status_code, again.status_code) == (202, 200)
    assert len(script.requests) == 1


# ---- errors as problem bodies ----------------------------------------------------------------


async def test_an_unknown_pause_is_404(served: Served) -> None:
    for token in ("tok-owner", "tok-manager"):  # by a reference, and by an id
        response = await served.post("no-such-pause", {"decision": {"approved": True}}, token)
        assert response.status_code == 404
        problem = response.json()
        assert problem["code"] == "pause.unknown"
        assert problem["status"] == 404
        assert problem["hint"]


async def test_an_answer_names_its_pause_by_exactly_one_of_its_reference_and_its_id(
    served: Served,
) -> None:
    pause_id = await served.paused_on(EXPENSE)
    for named in ({}, {"pause_id": pause_id, "pause_ref": pause_ref(pause_id)}):
        response = await served.http.post(
            "/agboss/answers",
            json={**named, "decision": {"approved": True}},
            headers={"Authorization": "Bearer tok-owner"},
        )
        assert response.status_code == 422
        assert response.json()["code"] == "dto.invalid"
    assert await served.status(pause_id) is PauseStatus.PENDING


async def test_a_channels_side_answers_by_the_id_it_was_sent_not_by_a_reference(
    served: Served,
) -> None:
    pause_id = await served.paused_on(REFUND)
    response = await served.http.post(
        "/agboss/answers",
        json={"pause_ref": pause_ref(pause_id), "decision": {"approved": True}},
        headers={"Authorization": "Bearer tok-manager"},
    )
    assert response.status_code == 403
    assert response.json()["code"] == "pause.wrong-answerer"
    assert await served.status(pause_id) is PauseStatus.PENDING


async def test_an_invalid_decision_is_422_and_the_pause_keeps_waiting(served: Served) -> None:
    pause_id = await served.paused_on(EXPENSE)
    response = await served.post(pause_id, {"decision": {"approved": "yes"}})
    assert response.status_code == 422
    assert response.json()["code"] == "dto.invalid"
    assert response.json()["errors"]
    assert await served.status(pause_id) is PauseStatus.PENDING


async def test_a_reply_that_cannot_be_read_is_422(served: Served) -> None:
    pause_id = await served.paused_on(EXPENSE)  # its code interpreter reads a button's JSON
    response = await served.post(pause_id, {"reply": "hmm, maybe"})
    assert response.status_code == 422
    assert response.json()["code"] == "pause.uninterpretable-reply"
    assert await served.status(pause_id) is PauseStatus.PENDING


async def test_another_owners_pause_is_refused_as_if_it_were_not_there(served: Served) -> None:
    pause_id = await served.paused_on(EXPENSE)
    unknown = await served.post("no-such-pause", {"decision": {"approved": True}}, "tok-other")
    response = await served.post(pause_id, {"decision": {"approved": True}}, token="tok-other")
    assert response.status_code == 404
    assert response.json() == unknown.json()  # "not yours" says what "not there" says
    by_id = await served.http.post(
        "/agboss/answers",
        json={"pause_id": pause_id, "decision": {"approved": True}},
        headers={"Authorization": "Bearer tok-other"},
    )
    assert (by_id.status_code, by_id.json()) == (404, unknown.json())
    assert await served.status(pause_id) is PauseStatus.PENDING


async def test_an_owner_answering_a_channel_pause_is_403(served: Served) -> None:
    pause_id = await served.paused_on(REFUND)
    response = await served.post(pause_id, {"decision": {"approved": True}})
    assert response.status_code == 403
    assert response.json()["code"] == "pause.wrong-answerer"
    hint = response.json()["hint"]
    assert "owner_id=" not in hint.replace("Caller(owner_id=", "")  # no Python argument
    assert "Caller(answered_by=" in hint  # what an HTTP door's authenticator returns


async def test_a_name_in_the_body_is_refused_never_trusted(served: Served) -> None:
    pause_id = await served.paused_on(EXPENSE)
    response = await served.post(
        pause_id, {"decision": {"approved": True}, "owner_id": "user-1"}, token="tok-other"
    )
    assert response.status_code == 422
    assert response.json()["code"] == "dto.invalid"
    assert await served.status(pause_id) is PauseStatus.PENDING


async def test_no_credential_is_401(served: Served) -> None:
    pause_id = await served.paused_on(EXPENSE)
    response = await served.http.post(
        "/agboss/answers", json={"pause_ref": pause_ref(pause_id), "decision": {"approved": True}}
    )
    assert response.status_code == 401
    assert response.json()["code"] == "web.not-authenticated"
    assert (await served.http.get("/agboss/pauses")).status_code == 401


async def test_a_spent_budget_is_429(served: Served) -> None:
    pause_id = await served.paused_on(REFUND, TightOfficeWorkflow)
    response = await served.post(pause_id, {"reply": "ok"}, token="tok-manager")
    assert response.status_code == 429
    assert response.json()["code"] == "budget.exceeded"
    assert await served.status(pause_id) is PauseStatus.PENDING


async def test_a_store_that_went_away_is_503(served: Served) -> None:
    pause_id = await served.paused_on(EXPENSE)
    await served.env.app.store.close()
    response = await served.post(pause_id, {"decision": {"approved": True}})
    assert response.status_code == 503
    assert response.json()["code"].startswith("store.")
    assert response.headers["retry-after"] == "1"


async def test_a_body_over_the_limit_is_413(served: Served) -> None:
    pause_id = await served.paused_on(EXPENSE)
    response = await served.post(pause_id, {"reply": "x" * 5000})
    assert response.status_code == 413
    assert response.json()["code"] == "web.too-large"
    assert await served.status(pause_id) is PauseStatus.PENDING


@pytest.mark.parametrize(
    ("content", "media"),
    [(b"{not json", "application/json"), (b"[1]", "application/json"), (b"a=1", "text/plain")],
)
async def test_a_body_that_is_not_a_json_object_is_400(
    served: Served, content: bytes, media: str
) -> None:
    await served.paused_on(EXPENSE)
    response = await served.http.post(
        "/agboss/answers",
        content=content,
        headers={"Authorization": "Bearer tok-owner", "Content-Type": media},
    )
    assert response.status_code == 400
    assert response.json()["code"] == "web.unreadable"


# ---- the inbox -------------------------------------------------------------------------------


async def test_the_inbox_lists_the_authenticated_owners_pauses_only(served: Served) -> None:
    pause_id = await served.paused_on(EXPENSE)
    mine = (await served.inbox()).json()
    [entry] = mine["entries"]
    assert entry["pause_ref"] == pause_ref(pause_id)
    assert "pause_id" not in entry
    assert entry["ask"]["arguments"] == {"purpose": "taxi", "amount": 12.5}
    assert entry["accepts_reply"] is True
    assert set(entry["arguments_schema"]["properties"]) == {"purpose", "amount"}
    assert entry["waited_seconds"] >= 0
    assert mine["next"] is None
    assert (await served.inbox("tok-other")).json()["entries"] == []
    assert (await served.inbox("tok-manager")).status_code == 403


async def test_the_inbox_lists_a_channel_pause_by_its_reference_without_its_id(
    served: Served,
) -> None:
    secret = await served.paused_on(REFUND)
    response = await served.inbox()
    [entry] = response.json()["entries"]
    assert (entry["pause_ref"], entry["answered_by"]) == (pause_ref(secret), "channel")
    assert entry["channel"] == "refund-approval-channel"
    assert secret not in response.text


async def test_the_inbox_pages_by_cursor_and_filters_bad_arguments(served: Served) -> None:
    await served.paused_on(EXPENSE, then_done=False)
    await served.paused_on(EXPENSE, then_done=False)
    first = (await served.inbox(limit="1")).json()
    assert len(first["entries"]) == 1
    second = (await served.inbox(limit="1", after=first["next"])).json()
    assert second["entries"][0]["execution_id"] != first["entries"][0]["execution_id"]
    for bad in ({"limit": "0"}, {"limit": "ten"}, {"after": "nope"}, {"asked_before": "soon"}):
        response = await served.inbox(**bad)
        assert response.status_code == 422, bad
        assert response.json()["code"] == "dto.invalid"


# ---- the schema and the wiring ---------------------------------------------------------------


async def test_the_openapi_schema_is_valid_and_names_the_mount(served: Served) -> None:
    document = (await served.http.get("/agboss/openapi.json")).json()
    validate(document)
    assert document["servers"] == [{"url": "/agboss"}]
    assert set(document["paths"]) == {
        "/pauses",
        "/answers",
        "/claims",
        "/claims/release",
        "/reassignments",
        "/executions",
        "/executions/failed",
        "/executions/retry",
        "/standing",
        "/standing/{decision_id}",
        "/delegations",
        "/delegations/{delegation_id}",
    }
    assert "{pause" not in str(document["paths"])  # no route takes a pause in its path
    responses = document["paths"]["/answers"]["post"]["responses"]
    assert {"202", "404", "409", "422", "403", "429", "503"} <= set(responses)


def test_each_error_has_its_http_status() -> None:
    assert status_of(UnknownPauseError()) == 404
    assert status_of(NotPausedError()) == 409
    assert status_of(DtoValidationError()) == 422
    assert status_of(PauseAnswererError()) == 403
    assert status_of(ThreadOwnerError()) == 403
    assert status_of(UnknownStandingDecisionError()) == 404
    assert status_of(BudgetExceededError()) == 429
    assert status_of(StoreBusyError()) == 503
    assert status_of(StoreUnavailableError()) == 503
    assert status_of(LeaseBusyError()) == 503
    assert status_of(ModelProviderError("down")) == 502
    assert status_of(ConfigurationError()) == 500  # the server's wiring, not the caller's


def test_a_caller_is_exactly_one_of_owner_and_answerer() -> None:
    with pytest.raises(ConfigurationError):
        Caller()
    with pytest.raises(ConfigurationError):
        Caller(owner_id="a", answered_by="b")


async def test_an_authenticator_that_returns_no_caller_is_a_500_not_an_answer(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with test_with(OfficeApplication, store=f"sqlite:///{tmp_path}/w.db") as env:
        router = pause_router(env.app, authenticate=lambda request: "user-1")  # type: ignore[arg-type,return-value]
        server, task, port = await serve(router)
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
                response = await http.post(
                    "/answers", json={"pause_id": "p-1", "decision": {"approved": True}}
                )
        finally:
            server.should_exit = True
            await task
    assert response.status_code == 500
    assert response.json()["code"] == "config.invalid"
    assert any("config.invalid" in record.getMessage() for record in caplog.records)  # logged


async def test_the_router_refuses_a_bad_wiring(tmp_path: Path) -> None:
    async with test_with(OfficeApplication, store=f"sqlite:///{tmp_path}/w.db") as env:
        with pytest.raises(ConfigurationError):
            pause_router(env.app, authenticate="bearer", max_body=10)  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError):
            pause_router(env.app, authenticate=bearer, max_body=0)
