"""A channel implementation per environment (issue 28): the application lists the channels a
role may be answered by, and each instance chooses one at `App.create(channels=...)` — a desk
in one, a chat in another, a test's own or one that decides at once — checked with the rest of
the application; on both stores, through the public API."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agboss import (
    App,
    AssemblyError,
    AutoApproveChannel,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    ChannelWithdrawal,
    ConfigurationError,
    Escalate,
    ExecutionStatus,
    FunctionProvider,
    PauseAnswerer,
    PauseResolution,
    ToolHandler,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
    agent,
    application,
    channel,
    channel_role,
    tool,
    workflow,
)
from agboss.models import ChatResponse
from agboss.testing import TestEnv, call_tools, reply_with, tool_call
from tests.apps.office_parts import DeskDoneDto, office_flow
from tests.stores import STORE_KINDS, env_on

TOLD: list[str] = []
"""What each implementation was sent and told, as ``<implementation> <what> <order>``."""

RUNS: list[str] = []
"""The orders refunded."""

REQUEST = WorkflowStartTextDto(text="Refund o-1")
MODELS = FunctionProvider(lambda request: ChatResponse(content="x"))
"""Serves the agents' model, for the tests that only assemble."""
DONE = reply_with(WorkflowFinishTextDto, text="Done.")

PAUSE_IDS: list[str] = []
"""The pause ids the channels were sent, in order."""


class OrderDto(BaseModel):
    order_id: str


@channel_role(
    name="lead-choice-channel",
    description="The lead approves refunds nobody else did",
    approves=OrderDto,
    answered_by=PauseAnswerer.CHANNEL,
)
class LeadChoiceChannel(ChannelOf[OrderDto]): ...


@channel_role(
    name="refund-choice-channel",
    description="Approves refunds",
    approves=OrderDto,
    answered_by=PauseAnswerer.CHANNEL,
)
class RefundChoiceChannel(ChannelOf[OrderDto]): ...


@channel_role(
    name="escalating-choice-channel",
    description="Approves refunds, or the lead does after an hour",
    approves=OrderDto,
    answered_by=PauseAnswerer.CHANNEL,
    ladder=[Escalate(after=timedelta(hours=1), to=LeadChoiceChannel)],
)
class EscalatingChoiceChannel(ChannelOf[OrderDto]): ...


class _Told:
    """Sends and withdraws, written to `TOLD` under the implementation's name."""

    name = ""

    async def send(self, ask: ChannelAsk[OrderDto]) -> ChannelOutcome:
        TOLD.append(f"{self.name} send {ask.value.arguments.order_id}")
        PAUSE_IDS.append(ask.pause_id)
        return ChannelOutcome.await_reply(reference=f"{self.name}/{ask.pause_id}")

    async def withdraw(self, withdrawal: ChannelWithdrawal[OrderDto]) -> None:
        TOLD.append(f"{self.name} withdraw {withdrawal.reference}")


@channel(name="desk-refund-choice-channel", description="Asks the desk (development)")
class DeskRefundChoiceChannel(_Told, RefundChoiceChannel):
    name = "desk"


@channel(name="chat-refund-choice-channel", description="Asks in the team's chat (production)")
class ChatRefundChoiceChannel(_Told, RefundChoiceChannel):
    name = "chat"


@channel(name="test-refund-choice-channel", description="A test's own, listed nowhere")
class TestRefundChoiceChannel(_Told, RefundChoiceChannel):
    name = "test"


@channel(name="desk-lead-choice-channel", description="Asks the lead at the desk")
class DeskLeadChoiceChannel(_Told, LeadChoiceChannel):
    name = "desk-lead"


@channel(name="chat-lead-choice-channel", description="Asks the lead in the chat")
class ChatLeadChoiceChannel(_Told, LeadChoiceChannel):
    name = "chat-lead"


@tool(
    name="refund-choice-tool",
    description="Refunds an order",
    input=OrderDto,
    output=DeskDoneDto,
    channel=RefundChoiceChannel,
)
class RefundChoiceTool(ToolHandler[OrderDto, DeskDoneDto]):
    async def run(self, args: OrderDto) -> DeskDoneDto:
        RUNS.append(args.order_id)
        return DeskDoneDto(status="refunded")


@agent(
    name="refund-choice-agent",
    description="Refunds orders",
    model="gpt-4o",
    tools=[RefundChoiceTool],
    prompt="Refund what you are asked to.",
)
class RefundChoiceAgent: ...


@workflow(
    name="refund-choice-workflow",
    description="Refunds",
    version="1",
    flow=office_flow(RefundChoiceAgent),
)
class RefundChoiceWorkflow: ...


@channel(name="desk-escalating-choice-channel", description="Asks the desk, then the lead")
class DeskEscalatingChoiceChannel(_Told, EscalatingChoiceChannel):
    name = "desk"


@tool(
    name="escalating-refund-choice-tool",
    description="Refunds an order, asking the lead if the desk does not answer",
    input=OrderDto,
    output=DeskDoneDto,
    channel=EscalatingChoiceChannel,
)
class EscalatingRefundChoiceTool(RefundChoiceTool): ...


@agent(
    name="escalating-refund-choice-agent",
    description="Refunds orders",
    model="gpt-4o",
    tools=[EscalatingRefundChoiceTool],
    prompt="Refund what you are asked to.",
)
class EscalatingRefundChoiceAgent: ...


@workflow(
    name="escalating-refund-choice-workflow",
    description="Refunds",
    version="1",
    flow=office_flow(EscalatingRefundChoiceAgent),
)
class EscalatingRefundChoiceWorkflow: ...


@application(
    name="escalating-choice-application",
    workflows=[EscalatingRefundChoiceWorkflow],
    channels=[DeskEscalatingChoiceChannel, DeskLeadChoiceChannel, ChatLeadChoiceChannel],
)
class EscalatingChoiceApplication: ...


@application(
    name="refund-choice-application",
    workflows=[RefundChoiceWorkflow],
    channels=[DeskRefundChoiceChannel, ChatRefundChoiceChannel],
)
class RefundChoiceApplication: ...


async def _asked(env: TestEnv) -> Any:
    env.mock_llm(RefundChoiceAgent).then_return(
        call_tools(tool_call(RefundChoiceTool, order_id="o-1")), DONE
    )
    return await env.app.execute(RefundChoiceWorkflow, REQUEST, owner_id="ada")


@pytest.fixture(autouse=True)
def _clear() -> None:
    TOLD.clear()
    RUNS.clear()
    PAUSE_IDS.clear()


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_each_instance_asks_a_role_through_the_implementation_it_chose(
    kind: str, tmp_path: Path
) -> None:
    for chosen, name in ((DeskRefundChoiceChannel, "desk"), (ChatRefundChoiceChannel, "chat")):
        async with env_on(
            kind,
            tmp_path / name,
            RefundChoiceApplication,
            channels={RefundChoiceChannel: chosen},
        ) as env:
            result = await _asked(env)
            assert result.status is ExecutionStatus.PAUSED
            assert [f"{name} send o-1"] == TOLD
            [pending] = result.pending
            assert pending.channel == "refund-choice-channel"  # the role's: any instance answers
            done = await env.app.resume(
                PAUSE_IDS[-1], decision={"approved": True}, answered_by="bo"
            )
            assert done.status is ExecutionStatus.COMPLETED
            assert RUNS == ["o-1"]
        TOLD.clear()
        RUNS.clear()


async def test_a_role_listed_with_two_implementations_and_none_chosen_says_how_to_choose() -> None:
    with pytest.raises(AssemblyError) as caught:
        await App.create(RefundChoiceApplication, providers=[MODELS])
    [ambiguous] = [v for v in caught.value.violations if v.rule == "channel.role-ambiguous"]
    assert ambiguous.component == "refund-choice-channel"
    assert "desk-refund-choice-channel, chat-refund-choice-channel" in ambiguous.message
    assert "App.create(channels={RefundChoiceChannel: ...})" in ambiguous.message


class NotAChannel:
    async def send(self, ask: ChannelAsk[OrderDto]) -> ChannelOutcome:
        return ChannelOutcome.await_reply()


async def test_choices_that_cannot_answer_a_role_are_each_an_assembly_error_at_once() -> None:
    with pytest.raises(AssemblyError) as caught:
        await App.create(
            RefundChoiceApplication,
            providers=[MODELS],
            channels={
                RefundChoiceChannel: DeskLeadChoiceChannel,  # implements another role
                LeadChoiceChannel: ChatLeadChoiceChannel,  # no tool asks the lead
                OrderDto: DeskRefundChoiceChannel,  # not a role
                EscalatingChoiceChannel: NotAChannel,  # not a @channel
            },
        )
    found = {(v.rule, v.component) for v in caught.value.violations}
    assert found == {
        ("channel.choice-not-implementing", "refund-choice-channel"),
        ("channel.choice-unused", "lead-choice-channel"),
        ("channel.choice-not-a-role", "OrderDto"),
        ("channel.choice-not-a-channel", "escalating-choice-channel"),
    }
    rendered = str(caught.value)
    assert "choose a @channel class that subclasses RefundChoiceChannel" in rendered


@pytest.mark.parametrize("given", [[ChatRefundChoiceChannel], {"refund": "chat"}])
async def test_channels_that_are_not_a_mapping_of_classes_is_a_clear_error(given: Any) -> None:
    with pytest.raises(ConfigurationError) as caught:
        await App.create(RefundChoiceApplication, channels=given)
    assert caught.value.code == "config.invalid"
    assert "must map channel roles to channel classes" in caught.value.message


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_staging_instance_answers_a_role_at_once_with_a_channel_that_takes_any_question(
    kind: str, tmp_path: Path
) -> None:
    async with env_on(
        kind, tmp_path, RefundChoiceApplication, channels={RefundChoiceChannel: AutoApproveChannel}
    ) as env:
        result = await _asked(env)
        assert result.status is ExecutionStatus.COMPLETED
        assert RUNS == ["o-1"]
        assert TOLD == []
        done = await env.app.get(result.execution_id, record=True)
        assert done.record is not None
        [entry] = done.record.pauses
        assert entry.resolution is PauseResolution.DECIDED


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_test_swaps_in_an_implementation_the_application_does_not_list(
    kind: str, tmp_path: Path
) -> None:
    async with env_on(
        kind,
        tmp_path,
        RefundChoiceApplication,
        channels={RefundChoiceChannel: TestRefundChoiceChannel},
    ) as env:
        sent = env.mock_of(RefundChoiceChannel)  # the role resolves to the chosen one
        result = await _asked(env)
        assert TOLD == ["test send o-1"]
        assert sent.send.call_count == 1
        await env.restart()  # chosen again by every instance the kit opens
        done = await env.app.resume(PAUSE_IDS[-1], decision={"approved": True}, answered_by="bo")
        assert done.status is ExecutionStatus.COMPLETED
        assert result.execution_id == done.execution_id


async def test_the_role_a_ladder_escalates_to_is_chosen_like_any_other(tmp_path: Path) -> None:
    with pytest.raises(AssemblyError) as caught:
        await App.create(EscalatingChoiceApplication, providers=[MODELS])
    [unchosen] = caught.value.violations
    assert (unchosen.rule, unchosen.component) == (
        "channel.escalate-unimplemented",
        "escalating-choice-channel",
    )
    assert "App.create(channels={LeadChoiceChannel: ...})" in unchosen.message
    app = await App.create(
        EscalatingChoiceApplication,
        store=tmp_path / "agboss.db",
        providers=[MODELS],
        channels={LeadChoiceChannel: ChatLeadChoiceChannel},
    )
    try:
        [escalation] = app.assembly.tool_channels[EscalatingRefundChoiceTool].escalations
        assert escalation.implementation is ChatLeadChoiceChannel
    finally:
        await app.close()
