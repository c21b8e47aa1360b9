"""The component decorators. Each attaches a frozen spec to its class and does nothing else.

Nothing is registered and nothing but the arguments' names is checked here (a misspelt one is
a `ConfigurationError` where it is written, with the nearest name): a decorated class takes
part only once an application that reaches it is given to `App.create`, which checks every
rule at once.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from pydantic import BaseModel

from agboss.components._claims import Claims
from agboss.components._ladder import LadderStep
from agboss.components._quorum import Quorum
from agboss.components._specs import (
    SPEC_ATTRIBUTE,
    AgentSpec,
    ApplicationSpec,
    ChannelRoleSpec,
    ChannelSpec,
    ComponentKind,
    ComponentSpec,
    JoinComponentSpec,
    ReplyInterpreterSpec,
    ToolSpec,
    WorkflowFinishSpec,
    WorkflowSpec,
    WorkflowStartSpec,
    interrupted_default,
)
from agboss.enums import DecidedBy, OnExpiry, OnInterrupted, PauseAnswerer
from agboss.errors import ConfigurationError
from agboss.inputs import InputLimits
from agboss.mcp import McpServer
from agboss.pii import PiiRule
from agboss.policies import DEFAULT_HISTORY, History, RetryPolicy
from agboss.records import PendingCall

if TYPE_CHECKING:
    from agboss.flow import Flow
    from agboss.policies import Budget

__all__ = [
    "agent",
    "application",
    "channel",
    "channel_role",
    "join",
    "reply_interpreter",
    "tool",
    "workflow",
    "workflow_finish",
    "workflow_start",
]

C = TypeVar("C", bound=type[Any])


P = ParamSpec("P")
R = TypeVar("R")


def _keywords_checked(decorator: Callable[P, R]) -> Callable[P, R]:
    """The decorator, with a misspelt, missing or positional argument a `ConfigurationError`
    that says which (and suggests the nearest name: ``nmae=`` → ``name=``), raised where it is
    written."""
    parameters = inspect.signature(decorator).parameters
    names = list(parameters)
    required = [name for name, p in parameters.items() if p.default is inspect.Parameter.empty]

    @functools.wraps(decorator)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        label = f"@{decorator.__name__}"
        if args:
            raise ConfigurationError(
                f"{label} takes its arguments by name only",
                hint=f"write {label}({', '.join(f'{n}=...' for n in names[:2])}, ...)",
            )
        for given in kwargs:
            if given not in names:
                near = difflib.get_close_matches(given, names, n=1)
                guess = f"; did you mean {near[0]}=?" if near else ""
                raise ConfigurationError(
                    f"{label} has no argument {given}={guess}",
                    hint=f"{label} takes {', '.join(names)}",
                )
        missing = [name for name in required if name not in kwargs]
        if missing:
            raise ConfigurationError(
                f"{label} needs {', '.join(f'{name}=' for name in missing)}",
                hint=f"{label} takes {', '.join(names)}; those without a default are required",
            )
        return decorator(*args, **kwargs)

    return checked


def _attach(spec: ComponentSpec) -> Callable[[C], C]:
    def decorate(cls: C) -> C:
        # Set on the class's own __dict__: a subclass (a role's implementation) has its own.
        type.__setattr__(cls, SPEC_ATTRIBUTE, spec)
        return cls

    return decorate


@_keywords_checked
def agent(
    *,
    name: str,
    description: str,
    prompt: str,
    model: str,
    tools: Sequence[type[Any] | McpServer] = (),
    input: type[BaseModel] | None = None,
    output: type[BaseModel] | None = None,
    deps: Sequence[type[Any]] = (),
    max_tool_loop_iterations: int = 10,
    max_validation_attempts: int = 3,
    history: History = DEFAULT_HISTORY,
    retry_policy: RetryPolicy | None = None,
) -> Callable[[C], C]:
    """Declares an agent: a model with a prompt and tools.

    Args:
        name: Kebab-case, ending in ``-agent``.
        description: What it does, in a sentence.
        prompt: The model's instructions.
        model: The model's name; a provider whose ``serves`` matches it serves it.
        tools: The ``@tool`` classes its model may call, and `McpServer` declarations whose
            tools it may call.
        input: The DTO it reads; by default what the flow's previous node returns.
        output: The DTO it answers with; by default what the flow's next node takes.
        deps: Reserved for agents with code; agents have none today.
        max_tool_loop_iterations: Model turns before the step fails.
        max_validation_attempts: Invalid answers sent back to the model before the step fails.
        history: How much of its thread's earlier conversation it is sent, in an execution
            of the root workflow: `History.all()` (the default), `History.last(n)` or
            `History.none()`.
        retry_policy: How its model calls are tried again on a transient failure; the
            application's, else `DEFAULT_MODEL_RETRY`, when ``None``.
    """
    return _attach(
        AgentSpec(
            kind=ComponentKind.AGENT,
            name=name,
            description=description,
            prompt=prompt,
            model=model,
            tools=tuple(tools),
            input=input,
            output=output,
            deps=tuple(deps),
            max_tool_loop_iterations=max_tool_loop_iterations,
            max_validation_attempts=max_validation_attempts,
            history=history,
            retry_policy=retry_policy,
        )
    )


@_keywords_checked
def tool(
    *,
    name: str,
    description: str,
    input: type[BaseModel],
    output: type[BaseModel],
    channel: type[Any] | None = None,
    deps: Sequence[type[Any]] = (),
    timeout: timedelta | None = None,
    on_interrupted: OnInterrupted | None = None,
    retry_policy: RetryPolicy | None = None,
    expires_after: timedelta | None = None,
    on_expiry: OnExpiry | None = None,
) -> Callable[[C], C]:
    """Declares a tool; its class implements `ToolHandler[input, output]`.

    Args:
        name: Kebab-case, ending in ``-tool``.
        description: What it does; the model reads it.
        input: The DTO of its arguments; the model's call is validated against it.
        output: The DTO it returns.
        channel: A ``@channel_role`` or a concrete ``@channel`` that approves each call.
        deps: Types the container injects into its constructor, in order.
        timeout: How long a run may take on the application's Clock.
        on_interrupted: What happens to a call that may have run but left no result (its
            process died mid-call): `OnInterrupted.RERUN`, `OnInterrupted.FAIL` or
            `OnInterrupted.ASK` (a question to its channel); by default ``ASK`` for a tool with
            a channel, ``RERUN`` otherwise (see ``docs/executions.md``).
        retry_policy: How a run that raised one of its ``retry_on`` types is tried again
            (with the same idempotency key, ``StepContext.attempt`` counting); none by default.
        expires_after: How long its calls' questions wait for an answer, over its channel
            role's deadline (see ``docs/pauses.md``, Deadlines).
        on_expiry: What such a deadline decides, over its role's; `OnExpiry.APPROVE` only
            where the role itself says ``APPROVE``.
    """
    return _attach(
        ToolSpec(
            kind=ComponentKind.TOOL,
            name=name,
            description=description,
            input=input,
            output=output,
            channel=channel,
            deps=tuple(deps),
            timeout=timeout,
            on_interrupted=interrupted_default(on_interrupted, channel),
            retry_policy=retry_policy,
            expires_after=expires_after,
            on_expiry=on_expiry,
        )
    )


@_keywords_checked
def channel(*, name: str, description: str, deps: Sequence[type[Any]] = ()) -> Callable[[C], C]:
    """Declares a concrete channel: a role's implementation, or a channel a tool names as is.

    Args:
        name: Kebab-case, ending in ``-channel``.
        description: Where it asks.
        deps: Types the container injects into its constructor, in order.
    """
    return _attach(
        ChannelSpec(
            kind=ComponentKind.CHANNEL, name=name, description=description, deps=tuple(deps)
        )
    )


@_keywords_checked
def channel_role(
    *,
    name: str,
    description: str,
    answered_by: PauseAnswerer,
    approves: type[BaseModel] | None = None,
    asks: type[BaseModel] | None = None,
    answers: type[BaseModel] | None = None,
    reply_interpreter: type[Any] | None = None,
    expires_after: timedelta | None = None,
    on_expiry: OnExpiry = OnExpiry.REJECT,
    ladder: Sequence[LadderStep] = (),
    approvals: Quorum | int | None = None,
    distinct_from_owner: bool = False,
    claims: Claims | None = None,
) -> Callable[[C], C]:
    """Declares a channel role: an abstract contract ``@channel`` classes implement.

    An approval role names ``approves`` (the tool input DTO whose calls it approves); a
    question role names ``asks`` and ``answers`` instead (declared and checked; tools cannot
    name question roles yet).

    Args:
        name: Kebab-case, ending in ``-channel``.
        description: What it approves.
        answered_by: Who may answer its pauses; required, so that nobody approves by default.
        approves: The tool input DTO it approves.
        asks: A question role's question DTO.
        answers: A question role's answer DTO.
        reply_interpreter: The ``@reply_interpreter`` that reads free-text replies.
        expires_after: How long its questions wait for an answer, on the application's
            Clock (``None``: as long as it takes).
        on_expiry: What the deadline decides when nobody answered: `OnExpiry.REJECT` (the
            model reads why), `OnExpiry.APPROVE` or `OnExpiry.WITHDRAW` (the step fails
            with `PauseExpiredError`).
        ladder: What happens to a question nobody answered yet, in the order of its times:
            `Remind` steps (the channel's ``remind`` is called), each ``after`` a time since
            the question was asked, before its deadline.
        approvals: Several approvers on one question: a count (``2``: two of anyone who
            may answer) or a `Quorum` (the count, who may vote, whether one rejection
            decides). Each answer is a vote; the question resolves once the count is
            reached, or cannot be. ``None``: the first answer decides.
        distinct_from_owner: The thread's owner — the person whose request asks — may not
            answer its questions, nor vote on them (separation of duties).
        claims: How its questions are claimed (`App.claim`): how long a claim holds, and
            whether someone else's answer is taken meanwhile; ``None``: `Claims()` (an hour,
            only the claimant answers).
    """
    return _attach(
        ChannelRoleSpec(
            kind=ComponentKind.CHANNEL_ROLE,
            name=name,
            description=description,
            approves=approves,
            asks=asks,
            answers=answers,
            answered_by=answered_by,
            reply_interpreter=reply_interpreter,
            expires_after=expires_after,
            on_expiry=on_expiry,
            ladder=tuple(ladder),
            approvals=approvals,
            distinct_from_owner=distinct_from_owner,
            claims=claims or Claims(),
        )
    )


@_keywords_checked
def reply_interpreter(
    *,
    name: str,
    description: str,
    decided_by: DecidedBy,
    model: str | None = None,
    prompt: str | None = None,
    prompt_urls: Sequence[str] = (),
    deps: Sequence[type[Any]] = (),
) -> Callable[[C], C]:
    """Declares a reply interpreter, read by a model (`DecidedBy.MODEL`) or by code.

    Args:
        name: Kebab-case, ending in ``-reply-interpreter``.
        description: What it reads.
        decided_by: A model reads the reply, or the class's ``interpret`` does.
        model: The model's name, for `DecidedBy.MODEL`.
        prompt: The model's instructions, for `DecidedBy.MODEL`.
        prompt_urls: More instructions, read from these files or URLs.
        deps: Types the container injects into its constructor, for `DecidedBy.CODE`.
    """
    return _attach(
        ReplyInterpreterSpec(
            kind=ComponentKind.REPLY_INTERPRETER,
            name=name,
            description=description,
            decided_by=decided_by,
            model=model,
            prompt=prompt,
            prompt_urls=tuple(prompt_urls),
            deps=tuple(deps),
        )
    )


@_keywords_checked
def workflow_start(*, name: str, description: str, input: type[BaseModel]) -> Callable[[C], C]:
    """Declares where a workflow starts: the DTO it is started with."""
    return _attach(
        WorkflowStartSpec(
            kind=ComponentKind.WORKFLOW_START, name=name, description=description, input=input
        )
    )


@_keywords_checked
def workflow_finish(*, name: str, description: str, output: type[BaseModel]) -> Callable[[C], C]:
    """Declares where a workflow finishes: the DTO it returns."""
    return _attach(
        WorkflowFinishSpec(
            kind=ComponentKind.WORKFLOW_FINISH, name=name, description=description, output=output
        )
    )


@_keywords_checked
def join(
    *, name: str, description: str, output: type[BaseModel], deps: Sequence[type[Any]] = ()
) -> Callable[[C], C]:
    """Declares a join; its class implements `JoinHandler[Out].join(input)`.

    Args:
        name: Kebab-case, ending in ``-join``.
        description: What it makes of the branches.
        output: The DTO it returns: what the flow hands on after the launch.
        deps: Types the container injects into its constructor, in order.
    """
    return _attach(
        JoinComponentSpec(
            kind=ComponentKind.JOIN,
            name=name,
            description=description,
            output=output,
            deps=tuple(deps),
        )
    )


@_keywords_checked
def workflow(
    *,
    name: str,
    version: str,
    flow: Sequence[Flow],
    description: str = "",
    budget: Budget | None = None,
    pii: Sequence[PiiRule] = (),
    continues: Sequence[str] = (),
    continuation: Callable[[PendingCall], PendingCall] | None = None,
) -> Callable[[C], C]:
    """Declares a workflow.

    Args:
        name: Kebab-case, ending in ``-workflow``.
        version: The workflow's version, stored with each execution.
        flow: Its flow, built with `start(...)` and ending in ``.to_finish(...)``.
        description: What it does.
        budget: What each of its execution trees may spend on models.
        pii: PII rules for its executions, added to the application's (a rule for a kind the
            application covers too replaces the application's for these executions).
        continues: Earlier versions whose waiting trees this build moves too, beside its own:
            each an exact version (``"1.0.0"``) or a prefix ending in ``*`` (``"1.0.*"``).
            Checked at `App.create` against what those trees wait on (docs/deploying.md).
        continuation: Moves the waiting trees of the versions it continues to this build, on
            purpose: called with each call such a tree waits on (`PendingCall`) when the tree
            next moves here, it returns the call as this build makes it (a renamed tool, a
            changed input). The tree runs under this version from then on, and its record
            keeps the move (``record.continuations``). A pure function: the deploy check runs
            it on every waiting call before traffic moves.
    """
    if isinstance(continues, str):
        raise ConfigurationError(
            f"@workflow(continues={continues!r}) takes a list of versions, not one string",
            hint=f"write continues=[{continues!r}]",
        )
    if continuation is not None and not callable(continuation):
        raise ConfigurationError(
            f"@workflow(continuation={continuation!r}) takes a function of a PendingCall",
            hint="pass a function that returns the call as this build makes it",
        )
    return _attach(
        WorkflowSpec(
            kind=ComponentKind.WORKFLOW,
            name=name,
            description=description,
            version=version,
            flow=tuple(flow),
            budget=budget,
            pii=tuple(pii),
            continues=tuple(continues),
            continuation=continuation,
        )
    )


@_keywords_checked
def application(
    *,
    name: str,
    workflows: Sequence[type[Any]],
    channels: Sequence[type[Any]] = (),
    description: str = "",
    pause_record_retention: timedelta = timedelta(hours=24),
    dependencies: Sequence[Any] = (),
    deps: Sequence[type[Any]] = (),
    budget: Budget | None = None,
    limits: InputLimits | None = None,
    pii: Sequence[PiiRule] = (),
    mcp_servers: Sequence[McpServer] = (),
    retry_policy: RetryPolicy | None = None,
) -> Callable[[C], C]:
    """Declares an application: what `App.create` assembles.

    Its class may define ``on_execution_pause(self, event)`` and
    ``on_execution_resume(self, event)`` (plain or async) to hear when an execution rests
    paused and when a pause is answered; ``deps`` are injected into its constructor.

    Args:
        name: Kebab-case, ending in ``-application``.
        workflows: The ``@workflow`` classes it runs.
        channels: The concrete ``@channel`` classes that implement its roles.
        description: What it is for.
        pause_record_retention: How long a resolved pause record is kept before the sweep
            removes it (its audit entry stays).
        dependencies: `provide(...)` registrations for types components list in ``deps``.
        deps: Types the container injects into the application class's constructor.
        budget: What each execution tree of the application may spend on models.
        limits: The largest identifiers, replies, reasons and overrides its callers may
            pass; `InputLimits`' defaults when ``None``.
        pii: PII rules for every execution tree (see ``docs/pii.md``).
        mcp_servers: `McpServer` declarations whose tools every agent of the application may
            call (besides those an agent lists in its own ``tools=``).
        retry_policy: How its agents' model calls are tried again on a transient failure,
            unless an agent declares its own; `DEFAULT_MODEL_RETRY` when ``None``.
    """
    return _attach(
        ApplicationSpec(
            kind=ComponentKind.APPLICATION,
            name=name,
            description=description,
            workflows=tuple(workflows),
            channels=tuple(channels),
            pause_record_retention=pause_record_retention,
            dependencies=tuple(dependencies),
            deps=tuple(deps),
            budget=budget,
            limits=InputLimits() if limits is None else limits,
            pii=tuple(pii),
            mcp_servers=tuple(mcp_servers),
            retry_policy=retry_policy,
        )
    )
