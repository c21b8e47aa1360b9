"""What waits, for a screen or a door: the inbox, one pause described, a reference mapped back
to its id, an answer shown, and what an answering screen offers."""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from agboss.app._instance import Instance
from agboss.assembly import McpTool
from agboss.context import DEFAULT_TENANT_ID
from agboss.dto import schema_of
from agboss.engine import handoffs_of, mark_shown
from agboss.enums import PauseKind
from agboss.inputs import check_id, check_optional_id
from agboss.mcp import McpInputRequest
from agboss.pauses import (
    InboxPage,
    PauseDescription,
    describe_pause,
    list_inbox,
    pause_id_of,
    query_of,
    with_delegated,
)
from agboss.records import PendingPause
from agboss.store.protocol import WaitingQuery

__all__ = ["PendingPauses"]


class PendingPauses(Instance):
    """What waits, as `App` shows it: `pending`, `count_pending`, `describe_pause`,
    `pause_id_of`, `answer_shown`, `accepts_reply`, `arguments_schema`."""

    def _inbox(
        self,
        tenant_id: object,
        owner_id: object,
        channel: object,
        asked_before: datetime | None,
        limit: int = 50,
        after: str | None = None,
        expiring_before: datetime | None = None,
        voter: object = None,
    ) -> WaitingQuery:
        """An inbox query, its arguments checked at the edge."""
        limits = self._limits
        return query_of(
            tenant_id=check_optional_id(tenant_id, "tenant_id", limits) or DEFAULT_TENANT_ID,
            owner_id=check_optional_id(owner_id, "owner_id", limits),
            voter=check_optional_id(voter, "voter", limits),
            channel=check_optional_id(channel, "channel", limits),
            asked_before=asked_before,
            limit=limit,
            after=after,
            expiring_before=expiring_before,
        )

    async def pending(
        self,
        *,
        tenant_id: str | None = None,
        owner_id: str | None = None,
        channel: str | None = None,
        asked_before: datetime | None = None,
        limit: int = 50,
        after: str | None = None,
        expiring_before: datetime | None = None,
        voter: str | None = None,
    ) -> InboxPage:
        """The pauses waiting across executions, oldest first: an approvals screen's list.

        Masked like ``ExecutionOutput.pending``; a `PauseAnswerer.CHANNEL` pause is listed
        without its id. Read by keyset from an index, so a page costs the same however many
        pauses wait.

        Args:
            tenant_id: The tenant; the default tenant when ``None``.
            owner_id: Only the pauses of this owner's threads.
            channel: Only the pauses asked through this channel (a role's or a channel's name).
            asked_before: Only the pauses asked before this time (a reminder job's filter).
            limit: The most entries on the page, 1 to 500.
            voter: Only the pauses that name this person among their voters, on anyone's thread
                (a thread-owner role's ``Quorum(of=...)``); with ``owner_id``, those and the
                owner's — a signed-in person's inbox (``owner_id=voter=`` their id). Either
                way, and the questions delegated to them (`delegate`): their principals'
                threads' and seats, within each delegation's role and tool.
            after: ``page.next`` of the page before; ``None`` for the first page.
            expiring_before: Only the pauses whose deadline (``expires_after``) comes before
                this time: what is about to expire. Each entry carries its ``expires_at``.

        Raises:
            DtoValidationError: An argument is not one of the above.
        """
        query = self._inbox(
            tenant_id, owner_id, channel, asked_before, limit, after, expiring_before, voter
        )
        return await list_inbox(self._runtime, query)

    async def count_pending(
        self,
        *,
        tenant_id: str | None = None,
        owner_id: str | None = None,
        channel: str | None = None,
        asked_before: datetime | None = None,
        expiring_before: datetime | None = None,
        voter: str | None = None,
    ) -> int:
        """How many pauses `pending` would list with these filters, over every page."""
        query = self._inbox(
            tenant_id, owner_id, channel, asked_before, expiring_before=expiring_before, voter=voter
        )
        query = await with_delegated(self._runtime, query)
        return await self._runtime.store.pauses.count_waiting(query)

    async def describe_pause(
        self, pause_id: str, *, tenant_id: str | None = None
    ) -> PauseDescription:
        """One pause by its id, wherever it stands: its question, who may answer, where it
        stands, and — once resolved — how, when, by whom and what was decided.

        Masked like ``ExecutionOutput.pending`` and the audit trail (PII rules); a
        `PauseAnswerer.CHANNEL` pause is shown without its id. Reading changes nothing.

        Args:
            pause_id: The pause's id, as its channel or ``pending`` gave it.
            tenant_id: The tenant it was asked in; the default tenant when ``None``.

        Raises:
            UnknownPauseError: No pause has this id in this tenant, or its record expired
                (``pause_record_retention``).
            DtoValidationError: An argument is not an id.
        """
        limits = self._limits
        return await describe_pause(
            self._runtime,
            check_optional_id(tenant_id, "tenant_id", limits) or DEFAULT_TENANT_ID,
            check_id(pause_id, "pause_id", limits),
        )

    async def pause_id_of(
        self, pause_ref: str, *, tenant_id: str | None = None, owner_id: str | None = None
    ) -> str:
        """The id of the pause a reference names (`PendingPause.pause_ref`), for a door that
        authenticated its caller: what it then answers or describes by.

        A reference travels where the id must not — a screen's list, a Slack button, a link —
        and is no right to answer: a door maps it back only once it knows who calls, and never
        hands the id on. A signed-in person's door passes their ``owner_id``: only a pause of
        their threads, or one that names them a voter, is found. A channel's own door (a
        signed Slack click, a signed link) passes none: it authenticated its caller as the
        channel's side, which the id was sent to.

        Args:
            pause_ref: The reference a screen, a button or a link carried.
            tenant_id: The tenant it was asked in; the default tenant when ``None``.
            owner_id: The signed-in person the door answers for, if it is one.

        Raises:
            UnknownPauseError: No pause of this tenant has this reference, or (with
                ``owner_id``) none that is theirs: "not yours" and "not there" alike.
            DtoValidationError: An argument is not an id.
        """
        limits = self._limits
        return await pause_id_of(
            self._runtime,
            check_optional_id(tenant_id, "tenant_id", limits) or DEFAULT_TENANT_ID,
            check_id(pause_ref, "pause_ref", limits),
            check_optional_id(owner_id, "owner_id", limits),
        )

    async def answer_shown(self, pause_id: str, *, tenant_id: str | None = None) -> None:
        """Says that an answer was shown on its channel's own message by the door that took it
        (``slack_router`` does): the channel is then not told of it (`ChannelHandler.answered`,
        owed durably in case that door stopped first)."""
        limits = self._limits
        await mark_shown(
            self._runtime,
            check_optional_id(tenant_id, "tenant_id", limits) or DEFAULT_TENANT_ID,
            check_id(pause_id, "pause_id", limits),
        )

    def accepts_reply(self, pause: PendingPause) -> bool:
        """Whether a pause takes the answerer's own words (``reply=``): its channel role
        names a reply interpreter. An answering screen offers a text box when it does."""
        assembly = self._runtime.assembly
        found = assembly.tool_named(pause.agent, pause.ask.tool)
        if found is None:  # a pause of a tool this build no longer has
            return False
        role = assembly.tool_channels[found[0]].asking(pause.channel).role
        return role is not None and role.reply_interpreter is not None

    def handoffs(self, pause: PendingPause) -> list[str]:
        """The roles a waiting question may be handed to (`reassign`), by name: every other
        role of the application that approves its tool's calls. Empty for a tool this build
        no longer has. An answering screen offers them to choose from."""
        return list(handoffs_of(self._runtime, pause))

    def arguments_schema(self, pause: PendingPause) -> dict[str, Any]:
        """The JSON schema of the tool's input: the shape ``override_arguments`` must have
        (an answering screen's form) — for a question an MCP tool asked, its answer's. Empty
        for a tool this build no longer has, and for a call that may have run
        (`PauseKind.INTERRUPTED`: it runs again as it was, or not at all)."""
        found = self._runtime.assembly.tool_named(pause.agent, pause.ask.tool)
        if found is None or pause.ask.kind is PauseKind.INTERRUPTED:
            return {}
        question = McpInputRequest.of(pause.ask.arguments)
        if question is not None and issubclass(found[0], McpTool):
            return copy.deepcopy(question.requested_schema)
        return copy.deepcopy(schema_of(found[1].input))
