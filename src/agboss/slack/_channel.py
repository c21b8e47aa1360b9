"""A channel that asks in Slack: a Block Kit message with buttons, updated once answered and
taken back when its pause closes without an answer."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel

from agboss.components import (
    ApprovalAsk,
    ChannelAsk,
    ChannelHandler,
    ChannelOutcome,
    ChannelReminder,
    ChannelWithdrawal,
)
from agboss.context import ExecutionContext
from agboss.enums import PauseResolution
from agboss.errors import ConfigurationError
from agboss.slack._blocks import (
    Question,
    Token,
    closed_blocks,
    question_blocks,
    question_text,
    slack_time,
)
from agboss.slack._workspace import SlackWorkspace

__all__ = ["SlackChannel", "message_reference", "read_reference"]

ArgsT = TypeVar("ArgsT", bound=BaseModel)

_WHY = {
    PauseResolution.WITHDRAWN: "_No longer needed: the question was withdrawn before an answer._",
    PauseResolution.CANCELLED: "_Cancelled: the conversation ended before an answer._",
    PauseResolution.EXPIRED: "_Expired: nobody answered before its deadline, which decided._",
    PauseResolution.ESCALATED: "_Escalated: nobody answered in time, so it was asked of "
    "someone else._",
}


def message_reference(conversation: str, ts: str) -> str:
    """A posted message as the pause keeps it (`ChannelOutcome.await_reply`)."""
    return f"{conversation}/{ts}"


def read_reference(reference: str | None) -> tuple[str, str] | None:
    """A kept message's conversation and ``ts``; ``None`` when nothing was kept."""
    if reference is None or "/" not in reference:
        return None
    conversation, _, ts = reference.partition("/")
    return conversation, ts


class SlackChannel(ChannelHandler[ArgsT]):
    """Asks in Slack: a message with the masked call and its buttons — Approve, Reject,
    Reject with reason, Edit (a form from the tool's input) and, when the role reads words,
    Answer in words — answered through `slack_router`.

    Subclass it for a role (list it before the role) or as a channel of its own, and name
    the conversation::

        @channel(
            name="slack-refund-approval-channel",
            description="Asks the finance managers in Slack",
            deps=[SlackWorkspace, ExecutionContext],
        )
        class SlackRefundApprovalChannel(SlackChannel[RefundDto], RefundApprovalChannel):
            conversation = "C0FINANCE"

    The pause's id never leaves the server: the buttons' ``value`` carries its reference
    (`ChannelAsk.pause_ref`), which the route maps back once Slack's signature is checked. The
    message's conversation and ``ts`` are kept with the pause, so that whichever instance
    closes it updates the message.

    Attributes:
        conversation: Where its questions go (a channel's id); the workspace's when ``None``.
            Override `conversation_for` to choose one per question.
    """

    conversation: ClassVar[str | None] = None

    def __init__(self, workspace: SlackWorkspace, context: ExecutionContext) -> None:
        self.workspace = workspace
        self.context = context

    def conversation_for(self, ask: ChannelAsk[ArgsT]) -> str:
        """The conversation a question goes to: by default the class's ``conversation``, else
        the workspace's. ``self.context`` has the tenant, the thread's owner and the step.

        Raises:
            ConfigurationError: Neither names one.
        """
        found = self.conversation or self.workspace.conversation
        if not found:
            raise ConfigurationError(
                f"{type(self).__name__} has no conversation to post in",
                hint="set conversation = 'C…' on the class, SLACK_CONVERSATION, or override "
                "conversation_for()",
            )
        return found

    async def send(self, ask: ChannelAsk[ArgsT]) -> ChannelOutcome:
        """Posts the question; the pause keeps the message's conversation and ``ts``."""
        question = replace(
            _question(ask.value, ask.agent, ask.channel, ask.accepts_reply),
            expires_at=ask.expires_at,
        )
        token = Token(ask.pause_ref, self.context.tenant.tenant_id, ask.answered_by)
        posted: Any = await self.workspace.client.chat_postMessage(
            channel=self.conversation_for(ask),
            text=question_text(question),
            blocks=question_blocks(question, token),
            unfurl_links=False,
            unfurl_media=False,
        )
        return ChannelOutcome.await_reply(
            reference=message_reference(str(posted["channel"]), str(posted["ts"]))
        )

    async def remind(self, reminder: ChannelReminder[ArgsT]) -> None:
        """Reminds in the question's thread, shown in the conversation too (a step of its
        role's ladder)."""
        found = read_reference(reminder.reference)
        if found is None:
            return  # posted by an earlier build that kept nothing: nothing to reply to
        conversation, ts = found
        await self.workspace.client.chat_postMessage(
            channel=conversation,
            thread_ts=ts,
            reply_broadcast=True,
            text=reminder_text(reminder),
            unfurl_links=False,
            unfurl_media=False,
        )

    async def withdraw(self, withdrawal: ChannelWithdrawal[ArgsT]) -> None:
        """Takes the question back: its message says why, its buttons gone."""
        found = read_reference(withdrawal.reference)
        if found is None:
            return  # posted by an earlier build that kept nothing: nothing to find
        conversation, ts = found
        question = _question(withdrawal.value, "", "", accepts_reply=False)
        why = _WHY.get(withdrawal.resolution, f"_{withdrawal.resolution.value}_")
        await self.workspace.client.chat_update(
            channel=conversation,
            ts=ts,
            text=f"{question_text(question)}: {why.strip('_')}",
            blocks=closed_blocks(question, why),
        )


def reminder_text(reminder: ChannelReminder[Any]) -> str:
    """A reminder as the question's thread shows it."""
    said = "Reminder: this question still waits for an answer."
    if reminder.expires_at is not None:
        said += f" It expires {slack_time(reminder.expires_at)}."
    return said


def _question(ask: ApprovalAsk[Any], agent: str, channel: str, accepts_reply: bool) -> Question:
    return Question(
        tool=ask.tool,
        arguments=ask.arguments.model_dump(mode="json"),
        kind=ask.kind,
        agent=agent,
        channel=channel,
        accepts_reply=accepts_reply,
    )
