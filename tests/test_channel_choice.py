"""A channel implementation per environment (issue 28): the application lists the channels a
role may be answered by, and each instance chooses one at `App.create(channels=...)` — a desk
in one, a chat in another, a test's own or one that decides at once — checked with the rest of
the application; on both stores, through the public API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agboss import (
    App,
    AssemblyError,
    AutoApproveChannel,
    ChannelAsk,
    ChannelOutcome,
    ConfigurationError,
    ExecutionStatus,
    FunctionProvider,
    PauseResolution,
    WorkflowFinishTextDto,
    WorkflowStartTextDto,
)
from agboss.models import ChatResponse
from agboss.testing import TestEnv, call_tools, reply_with, tool_call
from tests.apps.choice_app import (
    ChatLeadChoiceChannel,
    ChatRefundChoiceChannel,
    ChoiceRecorder,
    DeskLeadChoiceChannel,
    DeskRefundChoiceChannel,
    EscalatingChoiceApplication,
    EscalatingChoiceChannel,
    EscalatingRefundChoiceTool,
    LeadChoiceChannel,
    OrderDto,
    RefundChoiceAgent,
    RefundChoiceApplication,
    RefundChoiceChannel,
    RefundChoiceTool,
    RefundChoiceWorkflow,
    TestRefundChoiceChannel,
)
from tests.apps.recorded import recording
from tests.stores import STORE_KINDS, env_on

REQUEST = WorkflowStartTextDto(text="Refund o-1")
MODELS = FunctionProvider(lambda request: ChatResponse(content="x"))
"""Serves the agents' model, for the tests that only assemble."""
DONE = reply_with(WorkflowFinishTextDto, text="Done.")


async def _asked(env: TestEnv) -> Any:
    env.mock_llm(RefundChoiceAgent).then_return(
        call_tools(tool_call(RefundChoiceTool, order_id="o-1")), DONE
    )
    return await env.app.execute(RefundChoiceWorkflow, REQUEST, owner_id="ada")


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_each_instance_asks_a_role_through_the_implementation_it_chose(
    kind: str, tmp_path: Path
) -> None:
    for chosen, name in ((DeskRefundChoiceChannel, "desk"), (ChatRefundChoiceChannel, "chat")):
        recorded = ChoiceRecorder()
        async with env_on(
            kind,
            tmp_path / name,
            RefundChoiceApplication,
            channels={RefundChoiceChannel: chosen},
            dependencies=recording(recorded),
        ) as env:
            result = await _asked(env)
            assert result.status is ExecutionStatus.PAUSED
            assert [f"{name} send o-1"] == recorded.told
            [pending] = result.pending
            assert pending.channel == "refund-choice-channel"  # the role's: any instance answers
            done = await env.app.resume(
                recorded.pause_ids[-1], decision={"approved": True}, answered_by="bo"
            )
            assert done.status is ExecutionStatus.COMPLETED
            assert recorded.runs == ["o-1"]


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


@pytest.mark.application.with_args(
    RefundChoiceApplication, channels={RefundChoiceChannel: AutoApproveChannel}
)
async def test_a_staging_instance_answers_a_role_at_once_with_a_channel_that_takes_any_question(
    env: TestEnv,
    recorded: ChoiceRecorder,
) -> None:
    result = await _asked(env)
    assert result.status is ExecutionStatus.COMPLETED
    assert recorded.runs == ["o-1"]
    assert recorded.told == []
    done = await env.app.get(result.execution_id, record=True)
    assert done.record is not None
    [entry] = done.record.pauses
    assert entry.resolution is PauseResolution.DECIDED


@pytest.mark.application.with_args(
    RefundChoiceApplication, channels={RefundChoiceChannel: TestRefundChoiceChannel}
)
async def test_a_test_swaps_in_an_implementation_the_application_does_not_list(
    env: TestEnv, tmp_path: Path, recorded: ChoiceRecorder
) -> None:
    sent = env.mock_of(RefundChoiceChannel)  # the role resolves to the chosen one
    result = await _asked(env)
    assert recorded.told == ["test send o-1"]
    assert sent.send.call_count == 1
    await env.restart()  # chosen again by every instance the kit opens
    done = await env.app.resume(
        recorded.pause_ids[-1], decision={"approved": True}, answered_by="bo"
    )
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
