"""Claiming a waiting question, releasing it, and handing it on: the approvers' share of the
work."""

from __future__ import annotations

from typing import Any

from agboss.app._instance import Instance
from agboss.errors import DtoValidationError
from agboss.inputs import check_optional_id, check_text
from agboss.pauses import ClaimReceipt, Reassigned, claim_pause, reassign_pause, release_pause

__all__ = ["Claiming"]


class Claiming(Instance):
    """The claims of `App`: `claim`, `release`, `reassign`."""

    async def claim(
        self,
        pause_id: str,
        *,
        tenant_id: str | None = None,
        owner_id: str | None = None,
        answered_by: str | None = None,
    ) -> ClaimReceipt:
        """Claims a waiting question: the caller handles it, and everyone else sees who does
        (the inbox, `describe_pause`).

        Who may claim is who may answer, given as for `answer` (``owner_id`` for a
        thread-owner question, ``answered_by`` for a channel's). While the claim holds,
        another answerer's answer is refused with `PauseClaimedError` — unless the role's
        ``claims=Claims(others_answer=True)`` — and another claim too. It ends when released
        (`release`), when the question is answered or closed, or after the role's
        ``Claims.lasts`` (an hour unless declared); claiming it again renews it.

        Args:
            pause_id: The question's id, as for `answer`.
            tenant_id: Its tenant; the default tenant when ``None``.
            owner_id: The thread's owner, for a thread-owner question.
            answered_by: Who claims, as the channel authenticated them, for a channel's.

        Returns:
            Who handles it, and until when.

        Raises:
            PauseClaimedError: Someone else's claim holds.
            NotPausedError: The question no longer waits.
            UnknownPauseError: No such question for this tenant.
            DtoValidationError: The question takes several approvals (each voter answers
                it), or an id is not a non-blank string within the limits.
            PauseAnswererError, ThreadOwnerError, NotAnAnswererError: The caller may not
                answer it, as for `answer`.
        """
        credentials = self._credentials(pause_id, tenant_id, owner_id, answered_by)
        return await claim_pause(self._engine, credentials)

    async def release(
        self,
        pause_id: str,
        *,
        tenant_id: str | None = None,
        owner_id: str | None = None,
        answered_by: str | None = None,
    ) -> bool:
        """Ends the caller's claim on a waiting question, for anyone to take on.

        Args:
            pause_id: As for `claim`.
            tenant_id: As for `claim`.
            owner_id: As for `claim`.
            answered_by: As for `claim`.

        Returns:
            Whether the caller held a claim on it that still held.

        Raises:
            The errors of `claim` but `PauseClaimedError`.
        """
        credentials = self._credentials(pause_id, tenant_id, owner_id, answered_by)
        return await release_pause(self._engine, credentials)

    async def reassign(
        self,
        pause_id: str,
        *,
        reason: str,
        role: type[Any] | str | None = None,
        to: str | None = None,
        tenant_id: str | None = None,
        owner_id: str | None = None,
        answered_by: str | None = None,
    ) -> Reassigned:
        """Hands a waiting question to another role, or to a person, or to a person of another
        role.

        The question is taken back from its channel (``withdraw``, resolution
        `PauseResolution.REASSIGNED`) and asked again under a new id — the old id then answers
        nothing — through ``role``'s channel (its own when no role is named). Handed to a
        person, it is asked claimed for them (`claim`), for the new role's ``Claims.lasts``.
        It keeps its deadline, what the deadline decides, and its place on its ladder. The
        audit trail and the decision log say who handed it on, to whom, and why.

        Who may hand it on is who may answer it, given as for `answer` — and not while
        someone else's claim holds, unless the role takes others' answers.

        Args:
            pause_id: The question's id, as for `answer`.
            reason: Why, in the words of whoever hands it on (recorded).
            role: The role to hand it to: a ``@channel_role`` class, or its name; any role of
                the application that approves the same DTO and has one implementation.
            to: The person to hand it to, as its channel authenticates them.
            tenant_id: Its tenant; the default tenant when ``None``.
            owner_id: The thread's owner, for a thread-owner question.
            answered_by: Who hands it on, as the channel authenticated them, for a channel's.

        Returns:
            Where it went: the new question's reference (never its id), its role, the person
            and until when they hold it, and where the tree stands.

        Raises:
            ReassignTargetError: It cannot go there: no such role approves the call, it is
                asked of that role already, or one person cannot hold it (several approve it,
                or its thread's owner answers it).
            PauseClaimedError: Someone else's claim holds.
            NotPausedError: The question no longer waits.
            UnknownPauseError: No such question for this tenant.
            DtoValidationError: Neither ``role`` nor ``to`` is given, or an id or the reason
                is not a non-blank string within the limits.
            PauseAnswererError, ThreadOwnerError, NotAnAnswererError: The caller may not
                answer it, as for `answer`; or ``to`` owns the thread and the role takes its
                answers from someone else.
            LeaseBusyError: Another instance's pass held the tree past ``resume_timeout``:
                nothing was reassigned.
        """
        credentials = self._credentials(pause_id, tenant_id, owner_id, answered_by)
        limits = self._limits
        said = check_text(reason, "reason", limits.reason_length, "reason_length")
        if not said.strip():
            raise DtoValidationError(
                "the reason is empty", hint="say why the question is handed on"
            )
        if role is not None and not isinstance(role, type | str):
            raise DtoValidationError(
                f"role must be a @channel_role class or its name, not {type(role).__name__}",
                hint="pass role=FinanceApprovers or role='finance-approvers'",
            )
        person = check_optional_id(to, "to", limits)
        return await reassign_pause(self._engine, credentials, role=role, to=person, reason=said)
