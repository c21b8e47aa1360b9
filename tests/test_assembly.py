"""App.create checks the whole application at once: every violation, with rule and component."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agboss import (
    App,
    AssemblyError,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    ConfigurationError,
    DecidedBy,
    ExecutionContext,
    FunctionProvider,
    JoinHandler,
    JoinInput,
    PauseAnswerer,
    Provide,
    ReplyInterpreterHandler,
    Scope,
    ToolHandler,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
    agent,
    application,
    channel,
    channel_role,
    join,
    provide,
    reply_interpreter,
    start,
    tool,
    workflow,
    workflow_finish,
    workflow_start,
)
from agboss.models import ChatResponse, ModelResolver
from agboss.models._decisions import DecisionResponse
from tests.apps.office import DeskDoneDto, OfficeApplication


def _provider(*serves: str) -> FunctionProvider:
    return FunctionProvider(lambda request: ChatResponse(content="x"), serves=serves or ("*",))


async def violations(
    application: type[Any], *serves: str, dependencies: list[Provide] | None = None
) -> list[tuple[str, str]]:
    with pytest.raises(AssemblyError) as caught:
        await App.create(
            application, providers=[_provider(*serves)], dependencies=dependencies or []
        )
    return [(v.rule, v.component) for v in caught.value.violations]


class OrderDto(BaseModel):
    order_id: str


class SummaryDto(BaseModel):
    summary: str


@tool(name="Refund", description="Refunds", input=OrderDto, output=DeskDoneDto)
class BadlyNamedTool(ToolHandler[OrderDto, DeskDoneDto]):
    async def run(self, args: OrderDto) -> DeskDoneDto:
        return DeskDoneDto(status="ok")


@tool(name="lookup-tool", description="Looks up", input=OrderDto, output=DeskDoneDto)
class LookupTool(ToolHandler[OrderDto, DeskDoneDto]):
    async def run(self, args: OrderDto) -> DeskDoneDto:
        return DeskDoneDto(status="ok")


@tool(name="lookup-tool", description="Looks up too", input=OrderDto, output=DeskDoneDto)
class OtherLookupTool(ToolHandler[OrderDto, DeskDoneDto]):
    async def run(self, args: OrderDto) -> DeskDoneDto:
        return DeskDoneDto(status="ok")


@agent(
    name="first-agent",
    description="d",
    prompt="p",
    model="nobody/serves-this",
    tools=[BadlyNamedTool, LookupTool, OtherLookupTool],
    input=OrderDto,
    output=SummaryDto,
)
class FirstAgent: ...


@workflow_start(name="broken-workflow-start", description="s", input=WorkflowStartTextDto)
class BrokenStart: ...


@workflow_finish(name="broken-workflow-finish", description="f", output=WorkflowFinishTextDto)
class BrokenFinish: ...


@workflow(
    name="broken-workflow",
    version="1",
    flow=[
        start(BrokenStart)
        .returns(WorkflowStartTextDto)
        .to_agent(FirstAgent)
        .to_finish(BrokenFinish)
    ],
)
class BrokenWorkflow: ...


@application(name="broken-application", workflows=[BrokenWorkflow])
class BrokenApplication: ...


async def test_every_violation_is_listed_at_once() -> None:
    found = await violations(BrokenApplication, "openai/*")
    assert ("name.kind-suffix", "Refund") in found
    assert ("name.duplicate", "lookup-tool") in found
    assert ("model.unserved", "first-agent") in found
    assert ("flow.type-mismatch", "broken-workflow") in found
    rules = {rule for rule, _ in found}
    assert rules >= {"name.kind-suffix", "name.duplicate", "model.unserved", "flow.type-mismatch"}


async def test_the_error_renders_each_rule_component_and_fix() -> None:
    with pytest.raises(AssemblyError) as caught:
        await App.create(BrokenApplication, providers=[_provider("openai/*")])
    text = str(caught.value)
    assert text.startswith("[assembly.invalid] broken-application cannot be assembled:")
    assert "[model.unserved] first-agent: names the model 'nobody/serves-this'" in text
    assert "[name.kind-suffix] Refund: a @tool name must be kebab-case and end with '-tool'" in text


def test_a_model_resolves_to_the_first_provider_that_serves_it() -> None:
    first, second = _provider("moonshotai/*"), _provider("*")
    resolver = ModelResolver([first, second])
    assert resolver.provider_for("moonshotai/kimi-k2.6") is first
    assert resolver.provider_for("openai/gpt-5") is second
    assert ModelResolver([first]).provider_for("openai/gpt-5") is None


async def test_a_served_model_breaks_no_model_rule() -> None:
    found = await violations(BrokenApplication, "nobody/*")
    assert "model.unserved" not in {rule for rule, _ in found}


@workflow(
    name="not-finished-workflow",
    version="1",
    flow=[start(BrokenStart).returns(WorkflowStartTextDto).to_agent(FirstAgent)],
)  # type: ignore[list-item]
class UnfinishedWorkflow: ...


class NotAWorkflow: ...


@application(name="shapes-application", workflows=[UnfinishedWorkflow, NotAWorkflow])
class ShapesApplication: ...


async def test_a_flow_must_end_at_a_finish_and_listed_classes_must_be_decorated() -> None:
    found = await violations(ShapesApplication)
    assert ("flow.shape", "not-finished-workflow") in found
    assert ("component.wrong-kind", "NotAWorkflow") in found


class SlackClient:
    def __init__(self, token: str) -> None:
        self.token = token


class Audit:
    def __init__(self, context: ExecutionContext) -> None:
        self.context = context


class A:
    def __init__(self, b: B) -> None: ...


class B:
    def __init__(self, a: A) -> None: ...


@tool(
    name="needs-tool",
    description="Needs things",
    input=OrderDto,
    output=DeskDoneDto,
    deps=[SlackClient, ExecutionContext, A],
)
class NeedsTool(ToolHandler[OrderDto, DeskDoneDto]):
    def __init__(self, slack: SlackClient) -> None:  # takes one of its three deps
        self.slack = slack

    async def run(self, args: OrderDto) -> DeskDoneDto:
        return DeskDoneDto(status="ok")


@agent(name="needs-agent", description="d", prompt="p", model="m", tools=[NeedsTool])
class NeedsAgent: ...


@workflow(
    name="needs-workflow",
    version="1",
    flow=[
        start(BrokenStart)
        .returns(WorkflowStartTextDto)
        .to_agent(NeedsAgent)
        .to_finish(BrokenFinish)
    ],
)
class NeedsWorkflow: ...


@application(
    name="needs-application",
    workflows=[NeedsWorkflow],
    dependencies=[
        provide(A, deps=[B]),
        provide(B, deps=[A]),
        provide(Audit, deps=[ExecutionContext]),
    ],
)
class NeedsApplication: ...


async def test_the_container_reports_missing_dependencies_cycles_scopes_and_constructors() -> None:
    found = await violations(NeedsApplication)
    assert ("container.missing-dependency", "needs-tool") in found
    assert ("container.cycle", "A") in found
    assert ("container.scope", "Audit") in found
    assert ("component.constructor", "needs-tool") in found


async def test_an_instances_registrations_replace_the_applications_and_are_checked_with_them() -> (
    None
):
    found = await violations(
        NeedsApplication,
        dependencies=[
            provide(A, instance=A.__new__(A)),  # an A made without its B: no cycle
            provide(Audit, deps=[ExecutionContext], scope=Scope.EXECUTION),  # in its scope
            provide(SlackClient, instance=SlackClient(token="xoxb-test")),  # was missing
            provide(B, deps=[ExecutionContext]),  # a mistake of the instance's own
        ],
    )
    assert ("container.cycle", "A") not in found
    assert ("container.scope", "Audit") not in found
    assert ("container.missing-dependency", "needs-tool") not in found
    assert ("container.scope", "B") in found
    assert ("component.constructor", "needs-tool") in found


@pytest.mark.parametrize("given", ["provide(A)", [A], [provide(A), "B"]])
async def test_dependencies_that_are_not_registrations_are_a_configuration_error(
    given: object,
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        await App.create(NeedsApplication, dependencies=given)  # type: ignore[arg-type]
    assert caught.value.code == "config.invalid"
    assert "provide(" in (caught.value.hint or "")


class RefundDto(BaseModel):
    order_id: str


@channel_role(
    name="refund-approval-channel",
    description="Approves refunds",
    approves=RefundDto,
    answered_by=PauseAnswerer.CHANNEL,
)
class RefundApprovalChannel(ChannelOf[RefundDto]): ...


@channel(name="slack-refund-approval-channel", description="Slack")
class SlackRefundApprovalChannel(RefundApprovalChannel):
    async def send(self, ask: ChannelAsk[RefundDto]) -> ChannelOutcome:
        return ChannelOutcome.await_reply()


@channel(name="mail-refund-approval-channel", description="Mail")
class MailRefundApprovalChannel(RefundApprovalChannel):
    async def send(self, ask: ChannelAsk[RefundDto]) -> ChannelOutcome:
        return ChannelOutcome.await_reply()


@tool(
    name="refund-tool",
    description="Refunds",
    input=RefundDto,
    output=DeskDoneDto,
    channel=RefundApprovalChannel,
)
class RefundTool(ToolHandler[RefundDto, DeskDoneDto]):
    async def run(self, args: RefundDto) -> DeskDoneDto:
        return DeskDoneDto(status="refunded")


@agent(name="refund-agent", description="d", prompt="p", model="m", tools=[RefundTool])
class RefundAgent: ...


@workflow(
    name="refund-workflow",
    version="1",
    flow=[
        start(BrokenStart)
        .returns(WorkflowStartTextDto)
        .to_agent(RefundAgent)
        .to_finish(BrokenFinish)
    ],
)
class RefundWorkflow: ...


@application(
    name="two-channels-application",
    workflows=[RefundWorkflow],
    channels=[SlackRefundApprovalChannel, MailRefundApprovalChannel],
)
class TwoChannelsApplication: ...


@application(name="no-channel-application", workflows=[RefundWorkflow])
class NoChannelApplication: ...


async def test_a_role_implemented_twice_is_an_assembly_error() -> None:
    assert ("channel.role-ambiguous", "refund-approval-channel") in await violations(
        TwoChannelsApplication
    )


async def test_a_role_nobody_implements_is_an_assembly_error() -> None:
    assert ("channel.role-unimplemented", "refund-approval-channel") in await violations(
        NoChannelApplication
    )


async def test_a_valid_application_assembles(tmp_path: Any) -> None:
    app = await App.create(
        OfficeApplication, store=f"sqlite:///{tmp_path / 'a.db'}", providers=[_provider()]
    )
    await app.close()


def test_decorators_register_nothing_globally() -> None:
    # A decorated class is only a class with a frozen spec: nothing runs until App.create.
    @tool(name="x", description="y", input=OrderDto, output=DeskDoneDto)
    class Loose(ToolHandler[OrderDto, DeskDoneDto]):
        async def run(self, args: OrderDto) -> DeskDoneDto:
            return DeskDoneDto(status="")

    from agboss.components import spec_of

    spec = spec_of(Loose)
    assert spec is not None
    assert spec.name == "x"
    with pytest.raises(AttributeError):
        spec.name = "z"  # type: ignore[misc]


class AnswerDto(BaseModel):
    text: str


@reply_interpreter(name="Lazy", description="d", decided_by=DecidedBy.CODE)
class LazyInterpreter(ReplyInterpreterHandler[RefundDto]): ...


@reply_interpreter(
    name="jev-question-reply-interpreter",
    description="d",
    decided_by=DecidedBy.MODEL,
    model="typesafe/jev-1.13",
)
class JevQuestionInterpreter: ...


class NotAnInterpreter: ...


@channel_role(
    name="lazy-approval-channel",
    description="d",
    approves=RefundDto,
    answered_by=PauseAnswerer.CHANNEL,
    reply_interpreter=LazyInterpreter,
)
class LazyApprovalChannel(ChannelOf[RefundDto]): ...


@channel_role(
    name="other-lazy-approval-channel",
    description="d",
    approves=RefundDto,
    answered_by=PauseAnswerer.CHANNEL,
    reply_interpreter=LazyInterpreter,
)
class OtherLazyApprovalChannel(ChannelOf[RefundDto]): ...


@channel_role(
    name="question-channel",
    description="Asks a clerk a question",
    asks=OrderDto,
    answers=AnswerDto,
    answered_by=PauseAnswerer.CHANNEL,
    reply_interpreter=JevQuestionInterpreter,
)
class QuestionChannel(ChannelOf[OrderDto]): ...


@channel_role(
    name="plain-approval-channel",
    description="d",
    approves=RefundDto,
    answered_by=PauseAnswerer.CHANNEL,
    reply_interpreter=NotAnInterpreter,
)
class PlainApprovalChannel(ChannelOf[RefundDto]): ...


def _implementation(role: type[Any], name: str) -> type[Any]:
    async def send(self: Any, ask: ChannelAsk[Any]) -> ChannelOutcome:
        return ChannelOutcome.await_reply()

    return channel(name=name, description="d")(type(name, (role,), {"send": send}))


@application(
    name="interpreters-application",
    workflows=[RefundWorkflow],
    channels=[
        SlackRefundApprovalChannel,
        _implementation(LazyApprovalChannel, "lazy-channel"),
        _implementation(OtherLazyApprovalChannel, "other-lazy-channel"),
        _implementation(QuestionChannel, "clerk-question-channel"),
        _implementation(PlainApprovalChannel, "plain-channel"),
    ],
)
class InterpretersApplication: ...


async def test_the_reply_interpreter_rules_are_checked_at_once_with_the_channel_rules() -> None:
    with pytest.raises(AssemblyError) as caught:
        await App.create(
            InterpretersApplication,
            providers=[
                FunctionProvider(
                    lambda request: ChatResponse(content="x"),
                    decide=lambda request: DecisionResponse(probabilities={}),
                    decision_models=["typesafe/*"],
                )
            ],
        )
    found = {(v.rule, v.component) for v in caught.value.violations}
    assert ("name.kind-suffix", "Lazy") in found
    assert ("reply-interpreter.no-interpret-method", "Lazy") in found
    assert ("channel.shared-interpreter", "LazyInterpreter") in found
    assert ("reply-interpreter.not-an-interpreter", "plain-approval-channel") in found
    assert ("reply-interpreter.decision-model", "jev-question-reply-interpreter") in found
    [decision_model] = [
        v for v in caught.value.violations if v.rule == "reply-interpreter.decision-model"
    ]
    assert "AnswerDto" in decision_model.message


def _url_application(prompt_url: str) -> type[Any]:
    @reply_interpreter(
        name="url-reply-interpreter",
        description="d",
        decided_by=DecidedBy.MODEL,
        model="m",
        prompt="Read the reply.",
        prompt_urls=[prompt_url],
    )
    class UrlInterpreter: ...

    @channel_role(
        name="url-approval-channel",
        description="d",
        approves=RefundDto,
        answered_by=PauseAnswerer.CHANNEL,
        reply_interpreter=UrlInterpreter,
    )
    class UrlApprovalChannel(ChannelOf[RefundDto]): ...

    @application(
        name="url-application",
        workflows=[RefundWorkflow],
        channels=[SlackRefundApprovalChannel, _implementation(UrlApprovalChannel, "url-channel")],
    )
    class UrlApplication: ...

    return UrlApplication


async def test_prompt_urls_are_read_once_into_the_interpreters_instructions(tmp_path: Any) -> None:
    policy = tmp_path / "refund-policy.md"
    policy.write_text("Refunds above 100 EUR need a reason.")
    app = await App.create(
        _url_application(policy.as_uri()), store=tmp_path / "a.db", providers=[_provider()]
    )
    await app.close()
    told = app._runtime.prompts["url-reply-interpreter"]  # the interpreter's instructions
    assert told == "Read the reply.\n\nRefunds above 100 EUR need a reason."


async def test_an_unreadable_prompt_url_is_an_assembly_error(tmp_path: Any) -> None:
    with pytest.raises(AssemblyError) as caught:
        await App.create(_url_application(str(tmp_path / "missing.md")), providers=[_provider()])
    assert caught.value.rules == ["reply-interpreter.prompt-url"]


class ItemsDto(BaseModel):
    orders: list[OrderDto]
    note: str = ""


class VerdictDto(BaseModel):
    verdict: str


@agent(name="untyped-agent", description="d", prompt="p", model="m", input=ItemsDto)
class UntypedAgent: ...


@agent(name="item-check-agent", description="d", prompt="p", model="m", output=VerdictDto)
class ItemCheckAgent: ...


@join(name="verdicts-join", description="d", output=SummaryDto)
class VerdictsJoin(JoinHandler[SummaryDto]):
    def join(self, input: JoinInput) -> SummaryDto:
        return SummaryDto(summary="")


@join(name="other-join", description="d", output=VerdictDto)
class OtherJoin(JoinHandler[VerdictDto]):
    def join(self, input: JoinInput) -> VerdictDto:
        return VerdictDto(verdict="")


@workflow_start(name="items-workflow-start", description="s", input=ItemsDto)
class ItemsStart: ...


@workflow_finish(name="summary-workflow-finish", description="f", output=SummaryDto)
class SummaryFinish: ...


@workflow(
    name="launches-workflow",
    version="1",
    flow=[
        start(ItemsStart)
        .returns(ItemsDto)
        .to_parallel(UntypedAgent, max_concurrency=0)
        .join(VerdictsJoin)
        .on_join_error(ValueError, OtherJoin)
        .to_finish(SummaryFinish)
    ],
)
class LaunchesWorkflow: ...


@workflow(
    name="each-over-workflow",
    version="1",
    flow=[
        start(ItemsStart)
        .returns(ItemsDto)
        .to_each(ItemCheckAgent, over="note")
        .join_quorum(VerdictsJoin, min=1)
        .to_finish(SummaryFinish)
    ],
)
class EachOverWorkflow: ...


@workflow(
    name="quorum-workflow",
    version="1",
    flow=[
        start(ItemsStart)
        .returns(ItemsDto)
        .to_parallel(UntypedAgent)
        .join_quorum(VerdictsJoin, min=2)
        .to_finish(SummaryFinish)
    ],
)
class TooMuchQuorumWorkflow: ...


@application(
    name="launches-application",
    workflows=[LaunchesWorkflow, EachOverWorkflow, TooMuchQuorumWorkflow],
)
class LaunchesApplication: ...


async def test_the_launch_rules_are_checked_at_once() -> None:
    found = await violations(LaunchesApplication)
    assert ("flow.max-concurrency", "launches-workflow") in found
    assert ("flow.type-mismatch", "launches-workflow") in found  # the error join's output
    assert ("flow.each-over", "each-over-workflow") in found
    assert ("flow.quorum", "quorum-workflow") in found


def test_on_join_error_comes_right_after_a_join() -> None:
    with pytest.raises(ConfigurationError, match="right after"):
        start(ItemsStart).returns(ItemsDto).on_join_error(ValueError, VerdictsJoin)


@tool(
    name="mistyped-tool", description="Declares A, handles B", input=SummaryDto, output=SummaryDto
)
class MistypedTool(ToolHandler[OrderDto, DeskDoneDto]):
    async def run(self, args: OrderDto) -> DeskDoneDto:
        return DeskDoneDto(status=args.order_id)


@agent(
    name="mistyped-agent",
    description="d",
    prompt="p",
    model="test/model",
    tools=[MistypedTool, LookupTool],
)
class MistypedAgent: ...


@workflow(
    name="mistyped-workflow",
    version="1",
    flow=[
        start(BrokenStart)
        .returns(WorkflowStartTextDto)
        .to_agent(MistypedAgent)
        .to_finish(BrokenFinish)
    ],
)
class MistypedWorkflow: ...


@application(name="mistyped-application", workflows=[MistypedWorkflow])
class MistypedApplication: ...


async def test_a_tools_input_and_output_must_be_its_tool_handlers_types() -> None:
    assert await violations(MistypedApplication) == [
        ("tool.handler-input", "mistyped-tool"),
        ("tool.handler-output", "mistyped-tool"),
    ]


# ---- decorator arguments of the wrong type ------------------------------------------------


@channel_role(
    name="typo-approval-channel",
    description="Answered by a name, not an answerer",
    answered_by="manager",  # type: ignore[arg-type]  # the mistake under test
    approves=OrderDto,
)
class TypoApprovalChannel(ChannelOf[OrderDto]): ...


@tool(
    name="slow-lookup-tool",
    description="A timeout in seconds, not a timedelta",
    input=OrderDto,
    output=DeskDoneDto,
    timeout=30,  # type: ignore[arg-type]  # the mistake under test
    channel=TypoApprovalChannel,
)
class SlowLookupTool(ToolHandler[OrderDto, DeskDoneDto]):
    async def run(self, args: OrderDto) -> DeskDoneDto:
        return DeskDoneDto(status="found")


@agent(
    name="typo-agent",
    description="d",
    prompt="p",
    model="openai/gpt",
    tools=[SlowLookupTool],
    input=OrderDto,
    output=SummaryDto,
    max_tool_loop_iterations="3",  # type: ignore[arg-type]  # the mistake under test
)
class TypoAgent: ...


@workflow_start(name="typo-workflow-start", description="s", input=OrderDto)
class TypoStart: ...


@workflow_finish(name="typo-workflow-finish", description="f", output=SummaryDto)
class TypoFinish: ...


@workflow(
    name="typo-workflow",
    version="1",
    flow=[start(TypoStart).returns(OrderDto).to_agent(TypoAgent).to_finish(TypoFinish)],
)
class TypoWorkflow: ...


@application(name="typo-application", workflows=[TypoWorkflow])
class TypoApplication: ...


async def test_decorator_arguments_of_the_wrong_type_are_all_reported_at_start_up() -> None:
    assert sorted(await violations(TypoApplication)) == [
        ("agent.argument-type", "typo-agent"),
        ("channel-role.argument-type", "typo-approval-channel"),
        ("tool.argument-type", "slow-lookup-tool"),
    ]


async def test_a_wrong_argument_type_says_what_to_give_instead() -> None:
    with pytest.raises(AssemblyError) as caught:
        await App.create(TypoApplication, providers=[_provider()])
    text = str(caught.value)
    assert "timeout=30 is an int; give a timedelta (for example timedelta(seconds=30))" in text
    assert "answered_by='manager' is a str; give a PauseAnswerer (PauseAnswerer." in text
    assert "max_tool_loop_iterations='3' is a str; give a whole number" in text


def test_a_misspelt_decorator_argument_is_refused_where_it_is_written() -> None:
    suggestion = r"@agent has no argument nmae=; did you mean name="
    with pytest.raises(ConfigurationError, match=suggestion):

        @agent(  # type: ignore[call-arg]  # the mistake under test
            nmae="typo-agent", description="d", prompt="p", model="openai/gpt"
        )
        class Misspelt: ...


def test_a_missing_decorator_argument_is_refused_where_it_is_written() -> None:
    with pytest.raises(ConfigurationError, match=r"@workflow needs version=") as caught:

        @workflow(name="unversioned-workflow", flow=[])  # type: ignore[call-arg]  # under test
        class Unversioned: ...

    assert "without a default are required" in str(caught.value.hint)
    with pytest.raises(ConfigurationError, match=r"@agent needs description=, prompt="):
        agent(name="bare-agent", model="openai/gpt")  # type: ignore[call-arg]  # under test


def test_a_decorator_argument_given_by_position_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="@tool takes its arguments by name only"):
        tool("a-tool")  # type: ignore[misc]
