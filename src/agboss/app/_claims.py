"""Claiming a waiting question, and releasing it: the approvers' share of the work."""

from __future__ import annotations

from agboss.app._instance import Instance
from agboss.pauses import ClaimReceipt, claim_pause, release_pause

__all__ = ["Claiming"]


class Claiming(Instance):
    """The claims of `App`: `claim`, `release`."""

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
