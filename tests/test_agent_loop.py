"""The agent's tool loop, through the public API and the test kit."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from pydantic import BaseModel

from agboss import (
    AgentFailedError,
    ExecutionContext,
    ExecutionStatus,
    ToolHandler,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
    agent,
    application,
    provide,
    start,
    tool,
    workflow,
    workflow_finish,
    workflow_start,
)
from agboss.errors import TestSetupError
from agboss.models import MessageRole
from agboss.testing import (
    ScriptedTurn,
    call_tools,
    invalid_answer,
    reply_with,
    test_with,
    tool_call,
)
from tests.apps.office import (
    BookExpenseTool,
    DeskDoneDto,
    OfficeAgent,
    OfficeApplication,
    OfficeRecorder,
    OfficeWorkflow,
    ReturnDepositTool,
)
from tests.apps.recorded import Recorder, recording

REQUEST = WorkflowStartTextDto(text="Return L-7's deposit and book the taxi")


@pytest.fixture
def recorded() -> OfficeRecorder:
    """What the office records in a test (this module's tests open their instance)."""
    return OfficeRecorder()


def tool_messages(script_requests: list, turn: int) -> list[str]:  # type: ignore[type-arg]
    return [m.content for m in script_requests[turn].messages if m.role is MessageRole.TOOL]


async def test_a_model_turn_may_call_several_tools_at_once(recorded: OfficeRecorder) -> None:
    async with test_with(OfficeApplication, dependencies=recording(recorded)) as env:
        env.mock_llm(OfficeAgent).then_return(
            call_tools(
                tool_call(ReturnDepositTool, lease_id="L-7"),
                tool_call(BookExpenseTool, purpose="taxi", amount=12.5),
            ),
            reply_with(WorkflowFinishTextDto, text="Both done."),
        )
        result = await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
    assert result.status is ExecutionStatus.COMPLETED
    assert result.output == WorkflowFinishTextDto(text="Both done.")
    assert sorted(run.split()[0] for run in recorded.runs) == ["book-expense", "return-deposit"]
    assert result.pending == []


async def test_the_model_reads_tool_results_in_its_next_turn() -> None:
    async with test_with(OfficeApplication) as env:
        script = env.mock_llm(OfficeAgent).then_return(
            call_tools(tool_call(ReturnDepositTool, lease_id="L-7")),
            reply_with(WorkflowFinishTextDto, text="ok"),
        )
        await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
    assert tool_messages(script.requests, 1) == ['{"status":"returned the deposit of L-7"}']


async def test_a_tool_that_raises_a_bug_fails_the_step_and_the_model_never_reads_it() -> None:
    async with test_with(OfficeApplication) as env:
        script = env.mock_llm(OfficeAgent).then_return(
            call_tools(tool_call(BookExpenseTool, purpose="taxi", amount=3)),
            reply_with(WorkflowFinishTextDto, text="never"),
        )
        env.mock_of(BookExpenseTool).run.side_effect = KeyError("ledger")
        with pytest.raises(AgentFailedError, match="book-expense-tool raised KeyError") as failed:
            await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
    assert isinstance(failed.value.__cause__, KeyError)
    assert len(script.requests) == 1  # the model was not asked again


async def test_a_tool_that_returns_the_wrong_type_fails_the_step() -> None:
    async with test_with(OfficeApplication) as env:
        env.mock_llm(OfficeAgent).then_return(
            call_tools(tool_call(BookExpenseTool, purpose="taxi", amount=3)),
        )

        async def wrong(args: object) -> object:
            return "booked"

        env.mock_of(BookExpenseTool).run.side_effect = wrong
        with pytest.raises(AgentFailedError, match="returned str, not"):
            await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")


async def test_invalid_tool_arguments_are_a_tool_error_the_model_can_correct(
    recorded: OfficeRecorder,
) -> None:
    async with test_with(OfficeApplication, dependencies=recording(recorded)) as env:
        script = env.mock_llm(OfficeAgent).then_return(
            call_tools(tool_call(BookExpenseTool, purpose="taxi", amount="a lot")),
            call_tools(tool_call(BookExpenseTool, purpose="taxi", amount=12.5)),
            reply_with(WorkflowFinishTextDto, text="booked"),
        )
        result = await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
    [error] = tool_messages(script.requests, 1)
    assert error.startswith("Tool error: invalid arguments for book-expense-tool: amount:")
    assert recorded.runs == ["book-expense taxi"]
    assert result.status is ExecutionStatus.COMPLETED


async def test_a_tool_that_raises_tool_error_is_a_tool_error_the_model_reads() -> None:
    async with test_with(OfficeApplication) as env:
        script = env.mock_llm(OfficeAgent).then_return(
            call_tools(tool_call(BookExpenseTool, purpose="taxi", amount=-1)),
            reply_with(WorkflowFinishTextDto, text="could not book it"),
        )
        result = await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1", record=True)
    assert tool_messages(script.requests, 1) == ["Tool error: an expense cannot be negative"]
    assert result.record is not None
    [tool_step] = [step for step in result.record.steps if step.kind == "tool-run"]
    assert tool_step.error == "Tool error: an expense cannot be negative"


async def test_a_call_of_an_unknown_tool_is_a_tool_error() -> None:
    async with test_with(OfficeApplication) as env:
        script = env.mock_llm(OfficeAgent).then_return(
            call_tools(tool_call("fly-to-the-moon-tool")),
            reply_with(WorkflowFinishTextDto, text="no"),
        )
        await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
    [error] = tool_messages(script.requests, 1)
    assert error.startswith("Tool error: there is no tool 'fly-to-the-moon-tool'")


async def test_a_text_answer_may_come_in_plain_text() -> None:
    async with test_with(OfficeApplication) as env:
        env.mock_llm(OfficeAgent).then_return(ScriptedTurn(content="Nothing to do."))
        result = await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
    assert result.output == WorkflowFinishTextDto(text="Nothing to do.")


async def test_an_invalid_answer_is_sent_back_to_the_model() -> None:
    async with test_with(OfficeApplication) as env:
        script = env.mock_llm(OfficeAgent).then_return(
            invalid_answer(words="no text field"),
            reply_with(WorkflowFinishTextDto, text="fixed"),
        )
        result = await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1", record=True)
    assert result.output == WorkflowFinishTextDto(text="fixed")
    [feedback] = tool_messages(script.requests, 1)
    assert feedback.startswith("Invalid answer: text: Field required")
    assert result.record is not None
    assert [s.validation_attempts for s in result.record.steps] == [0, 1]


async def test_answers_invalid_past_the_attempts_fail_the_step() -> None:
    async with test_with(OfficeApplication) as env:
        env.mock_llm(OfficeAgent).then_return(*[invalid_answer(words="x")] * 4)
        with pytest.raises(AgentFailedError, match="after 3 validation attempts") as caught:
            await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
    assert caught.value.code == "agent.failed"
    assert caught.value.agent == "office-agent"


class NumberDto(BaseModel):
    value: int


@tool(name="count-tool", description="Counts", input=NumberDto, output=NumberDto)
class CountTool(ToolHandler[NumberDto, NumberDto]):
    async def run(self, args: NumberDto) -> NumberDto:
        return NumberDto(value=args.value + 1)


@dataclass
class LoopRecorder(Recorder):
    """What the loop application's slow tool did in one test."""

    runs: list[str] = field(default_factory=list)
    started: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the slow tool starts."""


@tool(
    name="slow-tool",
    description="Waits",
    input=NumberDto,
    output=NumberDto,
    timeout=timedelta(seconds=5),
    deps=[ExecutionContext, LoopRecorder],
)
class SlowTool(ToolHandler[NumberDto, NumberDto]):
    def __init__(self, context: ExecutionContext, recorded: LoopRecorder) -> None:
        self.context = context
        self.recorded = recorded

    async def run(self, args: NumberDto) -> NumberDto:
        self.recorded.started.set()
        await self.context.signal.wait()
        self.recorded.runs.append(f"aborted: {self.context.signal.reason}")
        await asyncio.sleep(3600)  # cut off: the framework cancels it
        return args


@agent(
    name="loop-agent",
    description="Loops",
    prompt="Count.",
    model="any/model",
    tools=[CountTool, SlowTool],
    max_tool_loop_iterations=3,
)
class LoopAgent: ...


@workflow_start(name="loop-workflow-start", description="s", input=WorkflowStartTextDto)
class LoopStart: ...


@workflow_finish(name="loop-workflow-finish", description="f", output=WorkflowFinishTextDto)
class LoopFinish: ...


@workflow(
    name="loop-workflow",
    version="1",
    flow=[start(LoopStart).returns(WorkflowStartTextDto).to_agent(LoopAgent).to_finish(LoopFinish)],
)
class LoopWorkflow: ...


@application(
    name="loop-application", workflows=[LoopWorkflow], dependencies=[provide(LoopRecorder)]
)
class LoopApplication: ...


async def test_the_tool_loop_is_bounded() -> None:
    async with test_with(LoopApplication) as env:
        env.mock_llm(LoopAgent).then_return(*[call_tools(tool_call(CountTool, value=1))] * 3)
        with pytest.raises(AgentFailedError, match="within 3 model turns"):
            await env.app.execute(LoopWorkflow, REQUEST, owner_id="user-1")


async def test_a_tool_timeout_fires_the_abort_signal_on_the_clock_and_cuts_the_call_off() -> None:
    recorded = LoopRecorder()
    async with test_with(LoopApplication, dependencies=recording(recorded)) as env:
        script = env.mock_llm(LoopAgent).then_return(
            call_tools(tool_call(SlowTool, value=1)),
            reply_with(WorkflowFinishTextDto, text="gave up"),
        )
        running = asyncio.ensure_future(env.app.execute(LoopWorkflow, REQUEST, owner_id="u"))
        await recorded.started.wait()
        await env.clock.advance(timedelta(seconds=4))
        assert not running.done()
        await env.clock.advance(timedelta(seconds=1))
        result = await running
    assert result.output == WorkflowFinishTextDto(text="gave up")
    assert tool_messages(script.requests, 1) == [
        "Tool error: slow-tool did not finish within its timeout of 0:00:05"
    ]
    assert recorded.runs == ["aborted: slow-tool timed out after 0:00:05"]


async def test_each_step_has_a_deterministic_idempotency_key_handlers_can_read(
    recorded: OfficeRecorder,
) -> None:
    async with test_with(OfficeApplication, dependencies=recording(recorded)) as env:
        env.mock_llm(OfficeAgent).then_return(
            call_tools(tool_call(ReturnDepositTool, lease_id="L-7")),
            reply_with(WorkflowFinishTextDto, text="ok"),
        )
        result = await env.app.execute(OfficeWorkflow, REQUEST, owner_id="u", record=True)
    assert result.record is not None
    [tool_step] = [s for s in result.record.steps if s.kind == "tool-run"]
    assert [f"return-deposit L-7 {tool_step.key}"] == recorded.runs
    assert tool_step.key == f"{result.execution_id}/1:office-agent#0/turn-0/tool-0"


async def test_the_record_lists_every_step_and_the_spend() -> None:
    async with test_with(OfficeApplication) as env:
        env.mock_llm(OfficeAgent).then_return(
            call_tools(tool_call(ReturnDepositTool, lease_id="L-7")),
            reply_with(WorkflowFinishTextDto, text="ok"),
        )
        result = await env.app.execute(OfficeWorkflow, REQUEST, owner_id="u", record=True)
    assert result.record is not None
    steps = result.record.steps
    assert [(s.kind, s.tool_loop_iteration) for s in steps] == [
        ("model-call", 0),
        ("tool-run", 0),
        ("model-call", 1),
    ]
    assert steps[1].tool_call is not None
    assert steps[1].tool_call.arguments == {"lease_id": "L-7"}
    assert steps[0].agent.name == "office-agent"
    model_usage = [s.usage for s in steps if s.usage is not None]
    assert result.spend.model_calls == 2
    assert result.spend.total_tokens == sum(u.total_tokens for u in model_usage) > 0
    assert result.record.spend == result.spend


async def test_mock_llm_when_scripts_only_the_matching_calls() -> None:
    async with test_with(OfficeApplication) as env:
        script = env.mock_llm(OfficeAgent)
        script.when(input=WorkflowStartTextDto(text="a")).then_return(
            reply_with(WorkflowFinishTextDto, text="for a")
        )
        script.then_return(reply_with(WorkflowFinishTextDto, text="anything else"))
        b = await env.app.execute(OfficeWorkflow, {"text": "b"}, owner_id="u")
        a = await env.app.execute(OfficeWorkflow, {"text": "a"}, owner_id="u")
    assert a.output == WorkflowFinishTextDto(text="for a")
    assert b.output == WorkflowFinishTextDto(text="anything else")


async def test_a_script_that_runs_out_is_a_clear_error_naming_the_component() -> None:
    async with test_with(OfficeApplication) as env:
        env.mock_llm(OfficeAgent).then_return(
            call_tools(tool_call(ReturnDepositTool, lease_id="1"))
        )
        with pytest.raises(TestSetupError, match=r"mock_llm\(office-agent\) has no scripted"):
            await env.app.execute(OfficeWorkflow, REQUEST, owner_id="u")


async def test_mock_of_a_tool_records_calls_and_can_be_scripted(recorded: OfficeRecorder) -> None:
    async with test_with(OfficeApplication, dependencies=recording(recorded)) as env:
        env.mock_llm(OfficeAgent).then_return(
            call_tools(tool_call(ReturnDepositTool, lease_id="L-7")),
            call_tools(tool_call(ReturnDepositTool, lease_id="L-8")),
            reply_with(WorkflowFinishTextDto, text="ok"),
        )
        mock = env.mock_of(ReturnDepositTool)
        await env.app.execute(OfficeWorkflow, REQUEST, owner_id="u")
        assert mock.run.call_count == 2
        assert len(recorded.runs) == 2  # unscripted, the real method ran
        mock.run.return_value = DeskDoneDto(status="scripted")
        env.mock_llm(OfficeAgent).then_return(
            call_tools(tool_call(ReturnDepositTool, lease_id="L-9")),
            reply_with(WorkflowFinishTextDto, text="ok"),
        )
        await env.app.execute(OfficeWorkflow, REQUEST, owner_id="u")
    assert mock.run.call_count == 3
    assert len(recorded.runs) == 2
