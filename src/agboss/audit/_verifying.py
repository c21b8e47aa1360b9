"""Walking a tenant's decision log: each entry against the one before, and the chain's end
against its head (and an anchor kept elsewhere), reporting the first place it breaks."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from agboss.records import LoggedDecision, chain_digest, chain_genesis
from agboss.store.protocol import Store

__all__ = ["Anchor", "ChainBreak", "Tampering", "Verification", "verify_decisions"]

_PAGE = 1000


class Tampering(StrEnum):
    """How a chain was found broken."""

    EDITED = "edited"
    """An entry's content (or its digest) is not what was hashed."""
    REMOVED = "removed"
    """An entry is missing: a gap in the places, or the end short of the head."""
    REORDERED = "reordered"
    """An entry is in another's place: it follows an entry that is not the one before it."""


@dataclass(frozen=True, slots=True)
class ChainBreak:
    """The first place a tenant's chain breaks.

    Attributes:
        seq: The place of the first entry edited, removed or reordered.
        tampering: What was found there.
        detail: What was expected and what was found, in a sentence.
    """

    seq: int
    tampering: Tampering
    detail: str


@dataclass(frozen=True, slots=True)
class Anchor:
    """A place and digest of a tenant's chain recorded outside the store (`Verification.anchor`
    printed by ``agboss audit verify``, kept by the auditor): a later verification checks the
    log still holds it, so a log rewritten whole, head included, is found.

    Attributes:
        seq: The entry's place.
        digest: Its digest then.
    """

    seq: int
    digest: str

    @classmethod
    def parse(cls, text: str) -> Anchor:
        """``"<seq>:<digest>"``, as `str` gives it.

        Raises:
            ValueError: ``text`` is not of that form.
        """
        seq, _, digest = text.partition(":")
        if not seq.isdigit() or len(digest) != 64:
            raise ValueError(f"{text!r} is not an anchor (<seq>:<64 hex digits>)")
        return cls(int(seq), digest.lower())

    def __str__(self) -> str:
        return f"{self.seq}:{self.digest}"


@dataclass(frozen=True, slots=True)
class Verification:
    """What walking a tenant's chain found.

    Attributes:
        tenant_id: Whose log.
        checked: How many entries were checked.
        cut_seq: Where retention cut the chain (0: nothing removed): the first entry kept
            follows the digest recorded there.
        anchor: The chain's end as found (``None``: no entry yet): record it to check the
            next verification against (`Anchor`).
        broken: The first place the chain breaks; ``None`` when it holds.
    """

    tenant_id: str
    checked: int
    cut_seq: int
    anchor: Anchor | None
    broken: ChainBreak | None

    @property
    def ok(self) -> bool:
        """Whether the chain holds."""
        return self.broken is None


async def verify_decisions(
    store: Store, tenant_id: str, *, anchor: Anchor | None = None
) -> Verification:
    """Walks a tenant's decision log from where retention cut it to its head.

    Each entry must have the next place, follow the entry before it (its ``previous`` is that
    entry's digest) and have the digest of its own content; the last must be the head the
    store keeps, and ``anchor``, when given, an entry the log still holds unchanged.

    Args:
        store: The store, opened.
        tenant_id: Whose log.
        anchor: A place and digest recorded earlier, outside the store.

    Returns:
        What was found: `Verification.broken` is the first place the chain breaks.
    """
    chain = await store.records.decision_chain(tenant_id)
    cut_seq = 0 if chain is None else chain.cut_seq
    start = (chain and chain.cut_digest) or chain_genesis(tenant_id)
    walk = _Walk(cut_seq, start, anchor)
    after = cut_seq
    while walk.broken is None:
        page = await store.records.decision_log(tenant_id, after=after, limit=_PAGE)
        for index, logged in enumerate(page):
            walk.step(logged, page[index + 1 :])
            if walk.broken is not None:
                break
        if len(page) < _PAGE:
            break
        after = page[-1].seq
    if walk.broken is None:
        walk.end(None if chain is None else (chain.seq, chain.head))
    return Verification(
        tenant_id=tenant_id,
        checked=walk.checked,
        cut_seq=cut_seq,
        anchor=None if walk.seq == cut_seq else Anchor(walk.seq, walk.previous),
        broken=walk.broken,
    )


class _Walk:
    """The walk's state: the last place and digest that held, and the anchor to meet."""

    def __init__(self, seq: int, previous: str, anchor: Anchor | None) -> None:
        self.start = seq
        self.seq = seq
        self.previous = previous
        self.anchor = anchor
        self.checked = 0
        self.broken: ChainBreak | None = None

    def step(self, logged: LoggedDecision, ahead: list[LoggedDecision]) -> None:
        expected = self.seq + 1
        if logged.seq != expected:
            self.broken = ChainBreak(
                expected,
                Tampering.REMOVED,
                f"entry {expected} is missing: the log goes from {self.seq} to {logged.seq}",
            )
            return
        if logged.digest != chain_digest(logged.previous, logged.entry_json):
            self.broken = ChainBreak(
                logged.seq,
                Tampering.EDITED,
                f"entry {logged.seq} is not what was hashed: its content or digest changed",
            )
            return
        if logged.previous != self.previous:
            self.broken = self._unlinked(logged, ahead)
            return
        anchor = self.anchor
        if anchor is not None and anchor.seq == logged.seq and anchor.digest != logged.digest:
            self.broken = ChainBreak(
                logged.seq,
                Tampering.EDITED,
                f"entry {logged.seq} is not the one the anchor recorded: the log was "
                "rewritten from there, or before",
            )
            return
        self.seq, self.previous = logged.seq, logged.digest
        self.checked += 1

    def _unlinked(self, logged: LoggedDecision, ahead: list[LoggedDecision]) -> ChainBreak:
        """An entry whole in itself that does not follow the one before it: it was moved
        (it follows an entry now after it), or the entry before was rewritten whole."""
        if any(later.digest == logged.previous for later in ahead):
            return ChainBreak(
                logged.seq,
                Tampering.REORDERED,
                f"entry {logged.seq} follows an entry placed after it: entries were swapped",
            )
        before = logged.seq - 1
        if before == self.start:
            return ChainBreak(
                logged.seq,
                Tampering.EDITED,
                f"entry {logged.seq} does not follow where the chain "
                f"{'begins' if before == 0 else 'was cut'}",
            )
        return ChainBreak(
            before,
            Tampering.EDITED,
            f"entry {before} was rewritten with its digest recomputed: entry {logged.seq} "
            "follows what it was",
        )

    def end(self, head: tuple[int, str] | None) -> None:
        if head is not None and head != (self.seq, self.previous):
            seq, digest = head
            if seq > self.seq:
                self.broken = ChainBreak(
                    self.seq + 1,
                    Tampering.REMOVED,
                    f"the log ends at entry {self.seq} and its head says {seq}: the entries "
                    "after it were removed",
                )
            else:
                self.broken = ChainBreak(
                    seq,
                    Tampering.EDITED,
                    f"the head says entry {seq} has digest {digest[:12]}…, the log ends at "
                    f"entry {self.seq}",
                )
            return
        if head is None and self.seq:
            self.broken = ChainBreak(
                self.seq, Tampering.REMOVED, "the log has entries and its head was removed"
            )
            return
        if self.anchor is not None and self.anchor.seq > self.seq:
            self.broken = ChainBreak(
                self.seq + 1,
                Tampering.REMOVED,
                f"the anchor names entry {self.anchor.seq}; the log ends at entry {self.seq}",
            )
