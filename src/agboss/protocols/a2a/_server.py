"""A workflow served as an A2A agent (the SDK's JSON-RPC binding and agent card), its tasks
kept by person and found again in agboss's store after a restart."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from a2a.server.agent_execution import SimpleRequestContextBuilder
from a2a.server.context import ServerCallContext
from a2a.server.id_generator import IDGenerator, IDGeneratorContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    DefaultServerCallContextBuilder,
    create_agent_card_routes,
    create_jsonrpc_routes,
)
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
)
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT, TransportProtocol
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from agboss.app import App
from agboss.components import WorkflowSpec, spec_of
from agboss.errors import ConfigurationError
from agboss.http import app_function, opened_app
from agboss.protocols.a2a._executor import WorkflowExecutor
from agboss.protocols.a2a._tasks import CALLER_KEY, CONTEXT_MARK, Tasks
from agboss.web import Authenticator, Caller, authenticated

__all__ = ["INPUT_EXTENSION", "a2a_app"]

INPUT_EXTENSION: Final = "urn:agboss:a2a:workflow-input:v1"
"""The agent card's extension that carries the workflow's input schema (``params.schema``)."""


class _TaskIds(IDGenerator):
    """A new task's id names its context, so the task can be read again from its id alone."""

    def generate(self, context: IDGeneratorContext) -> str:
        made = uuid.uuid4().hex
        return f"{context.context_id}{CONTEXT_MARK}{made}" if context.context_id else made


class _ContextIds(IDGenerator):
    """A task begun without a context is its own context."""

    def generate(self, context: IDGeneratorContext) -> str:
        return context.task_id or uuid.uuid4().hex


class _CallContexts(DefaultServerCallContextBuilder):
    """The SDK's call context, with the person the request was authenticated as."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        caller = request.scope.get(CALLER_KEY)
        if isinstance(caller, Caller):
            context.state[CALLER_KEY] = caller
        return context


@dataclass(frozen=True, slots=True)
class _SignedIn:
    """Reads the person from each request with the application's authenticator, before the
    SDK reads the request (its call context is built without awaiting)."""

    inner: ASGIApp
    authenticate: Authenticator

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            found = await authenticated(self.authenticate, Request(scope))
            scope[CALLER_KEY] = found
        await self.inner(scope, receive, send)


def agent_card(spec: WorkflowSpec, url: str, schema: dict[str, Any] | None = None) -> AgentCard:
    """The workflow's agent card: its name, description and version; one skill; its input's
    schema (when known: the application is open) in the ``INPUT_EXTENSION`` extension."""
    extensions = []
    if schema is not None:
        extensions.append(
            AgentExtension(
                uri=INPUT_EXTENSION,
                description="The workflow's input: send it as a data part",
                params={"schema": schema},
            )
        )
    described = spec.description or f"Runs the {spec.name} workflow"
    return AgentCard(
        name=spec.name,
        description=described,
        version=spec.version,
        supported_interfaces=[
            AgentInterface(
                url=url,
                protocol_binding=TransportProtocol.JSONRPC.value,
                protocol_version=PROTOCOL_VERSION_CURRENT,
            )
        ],
        capabilities=AgentCapabilities(streaming=False, extensions=extensions),
        default_input_modes=["application/json", "text/plain"],
        default_output_modes=["application/json"],
        skills=[
            AgentSkill(
                id=spec.name,
                name=spec.name,
                description=described,
                tags=["agboss", "workflow"],
                input_modes=["application/json", "text/plain"],
                output_modes=["application/json"],
            )
        ],
    )


def a2a_app(
    app: App | Callable[[], App | None],
    workflow: type[Any],
    *,
    authenticate: Authenticator,
    url: str,
    keep_tasks: int = 10_000,
) -> ASGIApp:
    """A workflow served as an A2A agent: its agent card at
    ``/.well-known/agent-card.json``, the JSON-RPC binding at ``/``.

    A message without a task begins an execution as the signed-in person, in a thread named
    as the task; a task that pauses on questions that person may answer is
    ``input-required``, its status message carrying them (a data part: each by its
    reference, with its tool, arguments and the answer's schema); the next message answers
    them and the task moves on — to ``completed`` with the output as an artifact, or to its
    next questions. A message from a caller not signed in leaves the task ``auth-required``,
    nothing run. Another person's task is not found.

    Args:
        app: The application, or a function of nothing returning it (``None`` until open).
        workflow: The ``@workflow`` class the agent runs.
        authenticate: Reads the signed-in person (`Caller(owner_id=…)`) from a request's
            headers; ``None`` for none.
        url: Where clients reach the JSON-RPC binding (the card's interface).
        keep_tasks: How many tasks the SDK's memory keeps, the oldest forgotten first: an
            open one is read again from the store when next named; a finished one's artifact,
            and a task still waiting for a sign-in, are gone.

    Raises:
        ConfigurationError: ``workflow`` is not a ``@workflow`` class, ``authenticate`` is
            not callable, or ``keep_tasks`` is not a positive whole number.
    """
    if not callable(authenticate):
        raise ConfigurationError(
            "authenticate= must be a function of the request returning a Caller or None",
            hint="async def authenticate(request): return Caller(owner_id=…)",
        )
    if not isinstance(keep_tasks, int) or isinstance(keep_tasks, bool) or keep_tasks < 1:
        raise ConfigurationError(
            f"keep_tasks={keep_tasks!r} must be a positive whole number",
            hint="leave it out for 10,000",
        )
    spec = spec_of(workflow, WorkflowSpec)
    if spec is None:
        raise ConfigurationError(
            f"{workflow!r} is not a @workflow class",
            hint="pass one of the @workflow classes the application lists",
        )
    app_of = app_function(app, "a2a_app")
    card = agent_card(spec, url)

    async def described(card: AgentCard) -> AgentCard:
        """The card with the input's schema, read from the open application."""
        opened = opened_app(app_of, "a2a_app")
        schema = opened.assembly.workflows[workflow].graph.start_node.input.model_json_schema()
        return agent_card(spec, url, schema)

    tasks = Tasks(app_of, keep_tasks)
    handler = DefaultRequestHandler(
        agent_executor=WorkflowExecutor(app_of, workflow, tasks),
        task_store=tasks,
        agent_card=card,
        request_context_builder=SimpleRequestContextBuilder(
            task_id_generator=_TaskIds(), context_id_generator=_ContextIds()
        ),
    )
    routes = [
        *create_agent_card_routes(card, card_modifier=described),
        *create_jsonrpc_routes(handler, "/", context_builder=_CallContexts()),
    ]
    return _SignedIn(Starlette(routes=routes), authenticate)
