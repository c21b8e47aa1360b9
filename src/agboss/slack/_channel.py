"""A channel that asks in Slack: a Block Kit message with buttons, updated once answered and
taken back when its pause closes without an answer."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel

from agboss.components import (
    ApprovalAsk,
    ChannelAnswered,
    ChannelAsk,
    ChannelHandler,
    ChannelOutcome,
    ChannelReminder,
    ChannelWithdrawal,
)
from agboss.context import ExecutionContext
from agboss.enums import PauseResolution
from agboss.errors import ConfigurationError
from agboss.records import shown_digest
from agboss.slack._blocks import (
    Decided,
    Question,
    Token,
    changed_arguments,
    closed_blocks,
    decided_blocks,
    escaped,
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
    PauseResolution.REASSIGNED: "_Reassigned: it was handed to someone else, who is asked "
    "instead._",
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
        allowed_users: Who in Slack may answer its questions, by user id (``U…``).
        allowed_user_groups: … and the members of these user groups (``S…``, read with
            ``usergroups.users.list`` at each click; the app needs ``usergroups:read``). When
            either names anyone, any other user who clicks is refused — a message only they
            see, nothing recorded — before `slack_router`'s answerer is asked; when both are
            empty, anyone the answerer maps may answer.
    """

    conversation: ClassVar[str | None] = None
    allowed_users: ClassVar[frozenset[str]] = frozenset()
    allowed_user_groups: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in ("allowed_users", "allowed_user_groups"):
            value = getattr(cls, name)
            if isinstance(value, str) or not all(
                isinstance(each, str) and each.strip() for each in value
            ):
                raise ConfigurationError(
                    f"{cls.__name__}.{name} must be a set of Slack ids, not {value!r}",
                    hint=f'{name} = frozenset({{"U0123ABCD"}})',
                )
            setattr(cls, name, frozenset(value))

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
            claimable=ask.claimable,
            handled_by=None if ask.claimed_by is None else escaped(ask.claimed_by),
            handled_until=ask.claimed_until,
            handoffs=ask.handoffs,
        )
        token = Token(
            ask.pause_ref,
            self.context.tenant.tenant_id,
            ask.answered_by,
            shown_digest(ask.value.digest),
        )
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

    async def answered(self, answered: ChannelAnswered[ArgsT]) -> None:
        """Shows the question as answered — who (as recorded), what, when — its buttons gone:
        for an answer whose clicking instance stopped before it showed it (`slack_router`
        shows an answer at once, naming the Slack user, and marks it shown)."""
        found = read_reference(answered.reference)
        if found is None:
            return  # posted by an earlier build that kept nothing: nothing to update
        conversation, ts = found
        question = _question(answered.value, answered.agent, answered.channel, False)
        decision = answered.decision
        decided = Decided(
            approved=decision.approved,
            by=escaped(answered.responder or "its channel"),
            at=answered.resolved_at,
            reason=decision.reason,
            changed=changed_arguments(
                answered.value.arguments.model_dump(mode="json"), decision.override_arguments
            ),
            reply=answered.reply,
        )
        await self.workspace.client.chat_update(
            channel=conversation,
            ts=ts,
            text=question_text(question),
            blocks=decided_blocks(question, decided),
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
        digest=ask.digest,
    )
