"""Approval channels: what a tool's call asks, and how a channel answers or takes it back."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from agboss.dto import ToolCallApprovalDecisionDto
from agboss.enums import PauseAnswerer, PauseKind, PauseResolution
from agboss.errors import ConfigurationError
from agboss.records import pause_ref

__all__ = [
    "ApprovalAsk",
    "ChannelAnswered",
    "ChannelAsk",
    "ChannelHandler",
    "ChannelOf",
    "ChannelOutcome",
    "ChannelReminder",
    "ChannelWithdrawal",
]

ArgsT = TypeVar("ArgsT", bound=BaseModel)


class _NamesAPause:
    """What a channel is given about one pause: its id, and the reference made of it."""

    __slots__ = ()
    pause_id: str

    @property
    def pause_ref(self) -> str:
        """The pause's reference (`agboss.pause_ref`): what a message, a button or a link
        carries in the id's place; the channel's door maps it back (`App.pause_id_of`)."""
        return pause_ref(self.pause_id)


@dataclass(frozen=True, slots=True)
class ApprovalAsk(Generic[ArgsT]):
    """A tool call waiting for approval, with its arguments as the tool's input DTO.

    Attributes:
        tool: The tool's name.
        call_id: The model's id of the call.
        arguments: The call's validated arguments.
        kind: What is asked: `PauseKind.APPROVAL` (may it run?), `PauseKind.TOOL_INPUT` (the
            tool's question, in ``arguments``) or `PauseKind.INTERRUPTED` (the call may have
            run already: run it again, as it was?).
        digest: What it asks, digested (`ToolCallApprovalAskDto.digest`): a channel shows it
            beside the question (its first characters, `agboss.records.shown_digest`), so
            that what was decided can be told from what was shown.
    """

    tool: str
    call_id: str
    arguments: ArgsT
    kind: PauseKind = PauseKind.APPROVAL
    digest: str | None = None


@dataclass(frozen=True, slots=True)
class ChannelAsk(_NamesAPause, Generic[ArgsT]):
    """What a channel's ``send`` gets.

    Attributes:
        pause_id: The pause's secret id: the right to answer it, and a safe idempotency key
            towards the system that shows the question (the same on a retried send). It stays
            on the server: what is posted carries `pause_ref` instead.
        value: The question: the tool call and its arguments.
        channel: The name of the channel asked (a role's name, or a concrete channel's).
        answered_by: Who may answer.
        agent: The agent whose call waits.
        accepts_reply: Whether the pause takes the answerer's own words (``reply=``): its
            role names a reply interpreter, so the question may offer a text box.
        expires_at: The question's deadline (``expires_after``), on the application's Clock;
            ``None`` when it waits as long as it takes. A channel may say it.
        claimable: Whether a person may claim it (`App.claim`): not a question several
            approve, which each voter answers. A channel may offer a button that claims.
        claimed_by: Who handles it from the start: the person it was handed to
            (`App.reassign`), as their claim; ``None`` for a question anyone may take on.
        claimed_until: Until when that claim holds.
        handoffs: The roles it may be handed to (`App.reassign`), by name: a channel may
            offer to hand it on.
    """

    pause_id: str
    value: ApprovalAsk[ArgsT]
    channel: str
    answered_by: PauseAnswerer
    agent: str
    accepts_reply: bool = False
    expires_at: datetime | None = None
    claimable: bool = True
    claimed_by: str | None = None
    claimed_until: datetime | None = None
    handoffs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ChannelWithdrawal(_NamesAPause, Generic[ArgsT]):
    """What a channel's ``withdraw`` gets when its pause closed without an answer.

    Attributes:
        pause_id: The id the question was sent with.
        value: The question that was sent.
        resolution: `PauseResolution.WITHDRAWN`, `PauseResolution.CANCELLED`,
            `PauseResolution.EXPIRED` (its deadline passed), `PauseResolution.ESCALATED` (its
            ladder asked another role) or `PauseResolution.REASSIGNED` (a person handed it to
            another role or person).
        reference: What ``send`` kept of the question it posted
            (``ChannelOutcome.await_reply(reference=…)``: a message's id), ``None`` if nothing.
    """

    pause_id: str
    value: ApprovalAsk[ArgsT]
    resolution: PauseResolution
    reference: str | None = None


@dataclass(frozen=True, slots=True)
class ChannelReminder(_NamesAPause, Generic[ArgsT]):
    """What a channel's ``remind`` gets: a question still waiting, at a `Remind` step of its
    role's ladder.

    Attributes:
        pause_id: The pause's id, as ``send`` got it.
        value: The question, as ``send`` got it.
        reference: What ``send`` kept of the question it posted, ``None`` if nothing.
        reminder: Which reminder this is (1 for the first); with ``pause_id``, a key the
            channel can drop a repeat by (a crash between the call and its record repeats it).
        asked_at: When the question was asked, on the application's Clock.
        expires_at: Its deadline, ``None`` if it has none.
    """

    pause_id: str
    value: ApprovalAsk[ArgsT]
    reference: str | None
    reminder: int
    asked_at: datetime
    expires_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class ChannelAnswered(_NamesAPause, Generic[ArgsT]):
    """What a channel's ``answered`` gets: a question it posted was answered.

    Attributes:
        pause_id: The id the question was sent with.
        value: The question that was sent.
        reference: What ``send`` kept of the question it posted, ``None`` if nothing.
        decision: What was decided, masked as the audit trail shows it.
        responder: Who answered, as recorded (``answered_by`` or the thread's owner; the
            deciding voter of a question several approve).
        resolved_at: When the answer was recorded, on the application's Clock.
        channel: The name of the channel asked (a role's name, or a concrete channel's).
        agent: The agent whose call waited.
        reply: The answerer's words the decision was read from, masked, if any.
    """

    pause_id: str
    value: ApprovalAsk[ArgsT]
    reference: str | None
    decision: ToolCallApprovalDecisionDto
    responder: str | None
    resolved_at: datetime
    channel: str
    agent: str
    reply: str | None = None


MAX_REFERENCE_LENGTH = 1000
"""The longest reference a channel may keep of a question it posted, in characters."""


class ChannelOutcome:
    """What a channel's ``send`` returns: wait for an answer, or a decision made at once."""

    __slots__ = ("_decision", "_reference")

    def __init__(
        self,
        decision: ToolCallApprovalDecisionDto | Mapping[str, Any] | None,
        reference: str | None = None,
    ) -> None:
        if reference is not None and (
            not isinstance(reference, str) or not 0 < len(reference) <= MAX_REFERENCE_LENGTH
        ):
            raise ConfigurationError(
                f"a channel's reference must be text of 1 to {MAX_REFERENCE_LENGTH} "
                f"characters, not {reference!r:.80}",
                hint="keep what finds the posted question again (a message's channel and ts)",
            )
        self._decision = decision
        self._reference = reference

    @classmethod
    def await_reply(cls, reference: str | None = None) -> ChannelOutcome:
        """The call pauses until someone answers it by its pause id.

        Args:
            reference: What the channel keeps of the question it posted — a message's id —
                stored with the pause and given back to its ``withdraw``
                (`ChannelWithdrawal.reference`), so that the question can be taken back.
        """
        return cls(None, reference)

    @classmethod
    def decided(cls, decision: ToolCallApprovalDecisionDto | Mapping[str, Any]) -> ChannelOutcome:
        """The channel decided at once; the call never pauses. Validated like any decision."""
        return cls(decision)

    @property
    def awaits_reply(self) -> bool:
        """Whether the call waits for an answer."""
        return self._decision is None

    @property
    def reference(self) -> str | None:
        """What the channel keeps of the question it posted, when it awaits a reply."""
        return self._reference

    @property
    def decision(self) -> ToolCallApprovalDecisionDto | Mapping[str, Any] | None:
        """The decision, as given (validated by the framework), or ``None`` when awaiting."""
        return self._decision

    def __repr__(self) -> str:
        if self._decision is None:
            shown = "" if self._reference is None else f"reference={self._reference!r}"
            return f"ChannelOutcome.await_reply({shown})"
        return f"ChannelOutcome.decided({self._decision!r})"


class ChannelHandler(Generic[ArgsT]):
    """A concrete ``@channel`` a tool names as is, with no role: answered by the thread's owner.

    ``send`` posts the question; ``withdraw`` (optional) takes it back when the pause closes
    without an answer. Either may be a plain method or an ``async def``.
    """

    def send(self, ask: ChannelAsk[ArgsT]) -> ChannelOutcome | Awaitable[ChannelOutcome]:
        """Asks the question; returns `ChannelOutcome.await_reply()` or a decision."""
        raise NotImplementedError(f"{type(self).__name__} must implement send()")

    def withdraw(self, withdrawal: ChannelWithdrawal[ArgsT]) -> Awaitable[None] | None:
        """Takes back a question whose pause closed without an answer (a no-op by default)."""
        return None

    def remind(self, reminder: ChannelReminder[ArgsT]) -> Awaitable[None] | None:
        """Reminds whoever was asked of a question still waiting, at a `Remind` step of its
        role's ladder (a no-op by default)."""
        return None

    def answered(self, answered: ChannelAnswered[ArgsT]) -> Awaitable[None] | None:
        """Shows a question it posted as answered (a no-op by default).

        Owed durably, like ``withdraw``: a channel that overrides it is told once its answer
        is recorded, by any instance — the one whose pass takes the answer after another died
        before telling it — so that a message is never left asking what was decided (the
        Slack route, which shows an answer at once, marks it shown, and the channel is then
        not told again). Best-effort: a throw is one warning.
        """
        return None


class ChannelOf(ChannelHandler[ArgsT]):
    """The base of a ``@channel_role``: an abstract contract whose ``@channel`` implements it."""
