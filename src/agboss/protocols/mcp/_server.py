"""Workflows served as the tools of an MCP server: a pause is the tool call's input-required
result (protocol 2026-07-28), and the client's answers, sent with the call again, resume it.

The round's state — which execution, whose, which questions — rides the result's
``request_state``, sealed by the SDK's own boundary (`RequestStateBoundary`: encrypted,
authenticated, bound to the call's arguments and to this server, expiring): the client holds
it and cannot read or forge it. The person it was sealed for is checked again on its way back:
another person's state is refused as an invalid one is.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

import mcp.types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError
from starlette.requests import Request

from agboss.app import App
from agboss.components import WorkflowSpec, spec_of
from agboss.enums import ExecutionStatus
from agboss.errors import AgbossError, ConfigurationError, NotPausedError, StepFailedError
from agboss.http import NotAuthenticatedError, app_function, opened_app
from agboss.protocols._questions import (
    Answer,
    OpenQuestion,
    answer_of,
    answering,
    checked_answers,
    open_questions,
    person_of,
)
from agboss.records import ExecutionOutput
from agboss.web import Authenticator, Caller, authenticated

__all__ = ["mcp_server"]

_STATE_VERSION: Final = 1
_REFUSED_STATE: Final = "Invalid or expired requestState"  # the SDK's own words for its refusals

ANSWER_FORM: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean", "title": "Approve", "description": "May it run?"},
        "reason": {"type": "string", "title": "Why", "description": "In your words."},
    },
    "required": ["approved"],
}
"""The form each question asks (an elicitation's flat schema): a decision."""


@dataclass(frozen=True, slots=True)
class _Round:
    """What the client holds between two rounds of a call, sealed: whose execution waits on
    which questions."""

    execution_id: str
    thread_id: str
    owner_id: str
    tenant_id: str | None
    refs: tuple[str, ...]

    def sealed_form(self) -> str:
        """The plaintext the SDK's boundary seals."""
        return json.dumps(
            {
                "v": _STATE_VERSION,
                "execution": self.execution_id,
                "thread": self.thread_id,
                "owner": self.owner_id,
                "tenant": self.tenant_id,
                "refs": list(self.refs),
            },
            separators=(",", ":"),
        )

    @classmethod
    def of(cls, plaintext: str, caller: Caller) -> _Round:
        """The round a state held, once the boundary verified it — for its own person only.

        Raises:
            MCPError: The state is not one this server seals, or another person's: refused
                in the words the SDK refuses a forged one with.
        """
        try:
            held = json.loads(plaintext)
            found = cls(
                held["execution"],
                held["thread"],
                held["owner"],
                held["tenant"],
                tuple(held["refs"]),
            )
            fits = held["v"] == _STATE_VERSION
        except (ValueError, KeyError, TypeError):
            fits = False
        if not fits or (found.owner_id, found.tenant_id) != (caller.owner_id, caller.tenant_id):
            raise MCPError(
                mcp.types.INVALID_PARAMS, _REFUSED_STATE, {"reason": "invalid_request_state"}
            )
        return found


@dataclass(frozen=True, slots=True)
class _Tools:
    app_of: Callable[[], App | None]
    workflows: dict[str, type[Any]]
    authenticate: Authenticator

    def app(self) -> App:
        return opened_app(self.app_of, "mcp_server")

    async def listed(
        self, ctx: ServerRequestContext[Any], params: mcp.types.PaginatedRequestParams | None
    ) -> mcp.types.ListToolsResult:
        app = self.app()
        tools = []
        for name, workflow in self.workflows.items():
            definition = app.assembly.workflows[workflow]
            tools.append(
                mcp.types.Tool(
                    name=name,
                    description=definition.spec.description,
                    input_schema=definition.graph.start_node.input.model_json_schema(),
                )
            )
        return mcp.types.ListToolsResult(tools=tools)

    async def called(
        self, ctx: ServerRequestContext[Any], params: mcp.types.CallToolRequestParams
    ) -> mcp.types.CallToolResult | mcp.types.InputRequiredResult:
        workflow = self.workflows.get(params.name)
        if workflow is None:
            return _failed(f"no tool is named {params.name}", "tool.unknown")
        try:
            caller = await self._caller(ctx)
            app = self.app()
            if params.request_state is None:
                output = await app.execute(
                    workflow,
                    params.arguments or {},
                    tenant_id=caller.tenant_id,
                    owner_id=person_of(caller, "MCP"),
                )
            else:
                held = _Round.of(params.request_state, caller)
                output = await _answered(app, caller, held, params.input_responses or {})
            return await _result(app, caller, output)
        except AgbossError as error:
            if params.request_state is not None and not isinstance(error, StepFailedError):
                # A refused answer: the round stays answerable, sent again answered otherwise.
                raise MCPError(
                    mcp.types.INVALID_PARAMS,
                    error.message,
                    {"code": error.code, "hint": error.hint},
                ) from None
            return _failed(error.message, error.code, error.hint)

    async def _caller(self, ctx: ServerRequestContext[Any]) -> Caller:
        request = ctx.request
        if not isinstance(request, Request):  # stdio: no request to read a person from
            raise NotAuthenticatedError()
        found = await authenticated(self.authenticate, request)
        if found is None:
            raise NotAuthenticatedError()
        return found


async def _answered(
    app: App, caller: Caller, held: _Round, responses: dict[str, Any]
) -> ExecutionOutput:
    """Records the round's answers and moves the tree; where it stands when none is new.

    An answer to a question that no longer waits (answered elsewhere, or in a round the
    client sent twice) is not recorded again: each question is answered once.
    """
    answers = [_answer(ref, response) for ref, response in responses.items() if ref in held.refs]
    waiting = []
    for answer in answers:
        if answer is None:
            continue  # dismissed: the question keeps waiting, and is asked again
        try:
            waiting += await checked_answers(app, caller, [answer], thread_id=held.thread_id)
        except NotPausedError:
            continue
    if not waiting:
        return await app.get(held.execution_id, tenant_id=caller.tenant_id)
    return await (await answering(app, caller, waiting))


def _answer(ref: str, response: Any) -> Answer | None:
    """An elicitation's result as an answer: accepted with the form's fields, declined as a
    rejection; ``None`` for one the person dismissed (``cancel``)."""
    if not isinstance(response, mcp.types.ElicitResult) or response.action == "cancel":
        return None
    if response.action == "decline":
        return answer_of(ref, {"approved": False, "reason": "declined in the MCP client"})
    return answer_of(ref, dict(response.content or {}))


async def _result(
    app: App, caller: Caller, output: ExecutionOutput
) -> mcp.types.CallToolResult | mcp.types.InputRequiredResult:
    if output.status is ExecutionStatus.COMPLETED:
        value = None if output.output is None else output.output.model_dump(mode="json")
        return mcp.types.CallToolResult(
            content=[mcp.types.TextContent(type="text", text=json.dumps(value))],
            structured_content=value,
        )
    questions = await open_questions(app, output, caller)
    if questions:
        held = _Round(
            output.execution_id,
            output.thread_id,
            person_of(caller, "MCP"),
            caller.tenant_id,
            tuple(question.ref for question in questions),
        )
        return mcp.types.InputRequiredResult(
            input_requests={question.ref: _asked(question) for question in questions},
            request_state=held.sealed_form(),
        )
    standing = {
        "status": output.status.value,
        "executionId": output.execution_id,
        "waitingOnOthers": len(output.pending),
    }
    return mcp.types.CallToolResult(
        content=[
            mcp.types.TextContent(
                type="text",
                text=f"The execution is {output.status.value}: it waits on "
                f"{len(output.pending)} question(s) others answer.",
            )
        ],
        structured_content=standing,
    )


def _asked(question: OpenQuestion) -> mcp.types.ElicitRequest:
    ask = question.pause.ask
    return mcp.types.ElicitRequest(
        params=mcp.types.ElicitRequestFormParams(
            message=f"{question.prompt()} Arguments: {json.dumps(ask.arguments)}",
            requested_schema=ANSWER_FORM,
        )
    )


def _failed(message: str, code: str, hint: str | None = None) -> mcp.types.CallToolResult:
    said = f"[{code}] {message}" + (f" ({hint})" if hint else "")
    return mcp.types.CallToolResult(
        content=[mcp.types.TextContent(type="text", text=said)],
        structured_content={"code": code, "message": message, "hint": hint},
        is_error=True,
    )


def mcp_server(
    app: App | Callable[[], App | None],
    workflows: Sequence[type[Any]],
    *,
    authenticate: Authenticator,
    state_keys: Sequence[bytes | str],
    state_ttl: timedelta = timedelta(hours=24),
    name: str = "agboss",
) -> Server[Any]:
    """The application's workflows as the tools of an MCP server (the SDK's low-level
    `Server`), to serve over streamable HTTP: ``mcp_server(...).streamable_http_app()``.

    Each workflow is a tool named as the workflow, described by its description, its input the
    start DTO's schema. A call runs the workflow as the signed-in person. When it pauses on
    questions that person may answer, the call's result is the input-required result: one
    form elicitation per question, keyed by the question's reference, and the round's state.
    The client calls again with the answers and the state; the tree moves on, to its result
    or to the next round. A question dismissed (``cancel``) keeps waiting and is asked again.

    Args:
        app: The application, or a function of nothing returning it (``None`` until open).
        workflows: The ``@workflow`` classes served, each a tool.
        authenticate: Reads the signed-in person (`Caller(owner_id=…)`) from the HTTP request.
        state_keys: The keys that seal the round's state, at least 32 bytes each: the first
            seals, every one unseals (rotation). Every instance shares them, so a round sealed
            by one is answered on another, or after a restart.
        state_ttl: How long a round's state can be answered; a later one is refused and the
            call begins again (the questions still wait, on every other door).
        name: The server's name: the state's audience (another server's state is refused).

    Raises:
        ConfigurationError: No workflow, two of one name, a key shorter than 32 bytes, or a
            ``state_ttl`` that is not positive.
    """
    if not callable(authenticate):
        raise ConfigurationError(
            "authenticate= must be a function of the request returning a Caller or None",
            hint="async def authenticate(request): return Caller(owner_id=…)",
        )
    named: dict[str, type[Any]] = {}
    for workflow in workflows:
        spec = spec_of(workflow, WorkflowSpec)
        tool = None if spec is None else spec.name
        if tool is None or tool in named:
            raise ConfigurationError(
                f"{workflow!r} is not a @workflow class, or its name is served twice",
                hint="pass each @workflow class once",
            )
        named[tool] = workflow
    if not named or state_ttl <= timedelta(0):
        raise ConfigurationError(
            "mcp_server serves at least one workflow, its state for a positive time",
            hint="mcp_server(app, [MyWorkflow], authenticate=…, state_keys=[secret])",
        )
    try:
        security = RequestStateSecurity(
            keys=list(state_keys),
            ttl=state_ttl.total_seconds(),
            bind_principal=None,  # the person is checked on the way back (_Round.of)
            audience=name,
        )
    except (TypeError, ValueError) as refused:
        raise ConfigurationError(
            f"state_keys are refused: {refused}",
            hint='python -c "import secrets; print(secrets.token_hex(32))" makes one',
        ) from None
    tools = _Tools(app_function(app, "mcp_server"), named, authenticate)
    server: Server[Any] = Server(name, on_list_tools=tools.listed, on_call_tool=tools.called)
    server.middleware.append(RequestStateBoundary(security, default_audience=name))
    return server
