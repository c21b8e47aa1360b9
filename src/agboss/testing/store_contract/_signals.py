"""The store contract's signals: what a commit announces reaches a hearer of the store, and
only once the transaction committed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from agboss.errors import LeaseLostError, StoreError
from agboss.store.protocol import Signal, SignalKind, Store
from agboss.store.writes import AcquireLease, Announce, AppendStep, ReleaseLease, write_one
from agboss.testing.store_contract._support import NOW, TTL, Contract, make_entry

__all__ = ["SignalContract"]

_HEARD_WITHIN = 10.0
"""How long, in seconds, a test waits for a signal before it fails (they take milliseconds)."""


class _Hearing:
    """A hearer that keeps what it heard, in order."""

    def __init__(self) -> None:
        self.heard_signals: asyncio.Queue[Signal] = asyncio.Queue()
        self.misses = 0

    def heard(self, signal: Signal) -> None:
        self.heard_signals.put_nowait(signal)

    def missed(self) -> None:
        self.misses += 1

    async def next(self) -> Signal:
        return await asyncio.wait_for(self.heard_signals.get(), _HEARD_WITHIN)


@asynccontextmanager
async def _hearing(store: Store) -> AsyncIterator[_Hearing]:
    """A hearer listening to ``store`` while the block runs."""
    hearing = _Hearing()
    stop = await store.signals.listen(hearing)
    try:
        yield hearing
    finally:
        stop()


def _due(root: str) -> Announce:
    return Announce(Signal(SignalKind.ANSWERED, root, "a"))


class SignalContract(Contract):
    """What a store's signals do."""

    async def test_a_freed_lease_is_heard_by_whoever_listens(self, store: Store) -> None:
        async with _hearing(store) as hearing:
            fence = await self._begin(store)
            await store.write([ReleaseLease(fence)], fence=fence)
            assert await hearing.next() == Signal(SignalKind.RELEASED, "ex-1", "a")

    async def test_an_announcement_is_heard_only_if_its_transaction_commits(
        self, store: Store
    ) -> None:
        async with _hearing(store) as hearing:
            fence = await self._begin(store)
            step = AppendStep("ex-1", make_entry("a"), NOW)
            await store.write([step], fence=fence)
            try:  # the same step again: the transaction fails
                await store.write([_due("refused"), step], fence=fence)
            except StoreError:
                pass
            else:
                raise AssertionError("a step was journaled twice")
            await store.write([AcquireLease("ex-1", "b", TTL, NOW + TTL)])
            try:  # a lost fence: nothing is written, nothing said
                await store.write([_due("fenced"), ReleaseLease(fence)], fence=fence)
            except LeaseLostError:
                pass
            else:
                raise AssertionError("a lost fence wrote")
            await store.write([_due("committed")])
            # Heard in the order committed: the refused ones would have come first.
            assert await hearing.next() == Signal(SignalKind.ANSWERED, "committed", "a")

    async def test_every_hearer_hears_and_one_that_stopped_hears_nothing_more(
        self, store: Store
    ) -> None:
        first, second = _Hearing(), _Hearing()
        stop_first = await store.signals.listen(first)
        stop_second = await store.signals.listen(second)
        try:
            await write_one(store, _due("ex-a"))
            assert (await first.next()).root_execution_id == "ex-a"
            assert (await second.next()).root_execution_id == "ex-a"
            stop_first()
            await write_one(store, _due("ex-b"))
            assert (await second.next()).root_execution_id == "ex-b"
            # Handed to the hearers in the order they listened: the first would have it now.
            assert first.heard_signals.empty()
        finally:
            stop_second()

    async def test_the_signals_of_one_transaction_arrive_together_in_order(
        self, store: Store
    ) -> None:
        async with _hearing(store) as hearing:
            await store.write([_due("ex-x"), _due("ex-y")])
            said = [await hearing.next(), await hearing.next()]
            assert [signal.root_execution_id for signal in said] == ["ex-x", "ex-y"]
