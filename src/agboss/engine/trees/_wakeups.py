"""An instance's ears on its store: what other instances' commits announce, acted on.

Two signals matter (`agboss.store.protocol.SignalKind`):

- **released**: a tree's lease was freed. A caller waiting for that lease (`Wakeups.waiting`:
  a resume behind another instance's pass, a retry) looks again at once, instead of polling.
- **answered**: an answer was recorded by an instance that does not move it (``app.answer(
  move=False)``, the command line). This instance tries to acquire the tree's lease and move it;
  every instance that hears it tries, one acquires the lease, the others see it held. At most
  `MOVERS` such moves run at once here; the rest queue, each tree once.

A signal is a hint: what it says is read from the store again, so a spurious one costs a
read. One that is lost (a listening connection cut, or another process on a SQLite file) is
covered by the recovery sweep, and a waiter also looks again by itself: at once when signals
may have been missed, else after `Wakeups.looks` — a third of the lease's time to live
where every instance is heard (a holder that died never says its lease is free), a few
milliseconds where another process may hold the lease unheard.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any

from agboss.engine.instance import Runtime
from agboss.engine.trees._lease import Held, acquire_lease
from agboss.errors import LeaseBusyError
from agboss.store.protocol import Signal, SignalKind

__all__ = ["MOVERS", "Wakeups"]

MOVERS = 4
"""How many trees this instance moves at once because another instance said they were answered."""

Spawn = Callable[[Coroutine[Any, Any, Any], str], None]
"""Runs a coroutine in the background for a tree (its failures logged)."""


class Wakeups:
    """Hears the store's signals for one instance (a `agboss.store.protocol.Hearer`).

    Args:
        runtime: The instance.
        move: Moves a tree that another instance said was answered (acquires its lease, or finds it
            held and does nothing).
        sweep: Reads the store for what signals would have said (after they may have been
            missed).
        spawn: How work runs in the background.
    """

    def __init__(
        self,
        runtime: Runtime,
        *,
        move: Callable[[str], Coroutine[Any, Any, Any]],
        sweep: Callable[[], Coroutine[Any, Any, Any]],
        spawn: Spawn,
    ) -> None:
        self.runtime = runtime
        self._move = move
        self._sweep = sweep
        self._spawn = spawn
        self._waiting: dict[str, set[asyncio.Event]] = {}
        self._answered: dict[str, None] = {}  # an ordered set: each tree once
        self._movers = 0
        self._stop: Callable[[], None] | None = None
        self._moves = True
        self.heard_count = 0
        """How many signals this instance heard (for tests and benchmarks)."""

    async def listen(self, *, moves: bool = True) -> None:
        """Starts hearing the store's signals (``moves``: whether it moves the trees other
        instances say were answered, or only wakes its own waiters)."""
        self._moves = moves
        if self._stop is None:
            self._stop = await self.runtime.store.signals.listen(self)

    def close(self) -> None:
        """Stops hearing; what is queued is left to the sweep of any instance."""
        stop, self._stop = self._stop, None
        if stop is not None:
            stop()
        self._answered.clear()

    def looks(self) -> Iterator[float]:
        """How long, in seconds, a waiter waits at most before each time it looks again by
        itself: a third of the lease's time to live where every instance is heard, else from
        2 ms doubling up to 50 ms (another process may hold the lease unheard)."""
        if self.runtime.store.signals.reaches_every_instance:
            yield from itertools.repeat(self.runtime.lease_ttl.total_seconds() / 3)
        delay = 0.002
        while True:
            yield delay
            delay = min(delay * 2, 0.05)

    # ---- Hearer ----------------------------------------------------------------------

    def heard(self, signal: Signal) -> None:
        if self._stop is None:
            return
        self.heard_count += 1
        root = signal.root_execution_id
        if signal.kind is SignalKind.RELEASED:
            for event in self._waiting.get(root, ()):
                event.set()
        elif (
            signal.kind is SignalKind.ANSWERED
            and self._moves
            and signal.origin != self.runtime.holder
        ):
            # Its own: the instance that said so chose not to move it.
            self._answered[root] = None
            if self._movers < MOVERS:
                self._movers += 1
                self._spawn(self._moving(), root)

    def missed(self) -> None:
        if self._stop is None:
            return
        for events in self._waiting.values():
            for event in events:
                event.set()
        if self._moves:
            self._spawn(self._sweep(), "(the trees signals may not have reached)")

    # ---- what listens -------------------------------------------------------------------

    @contextmanager
    def waiting(self, root_execution_id: str) -> Iterator[asyncio.Event]:
        """An event set when the tree's lease is said to be freed (or signals may have been
        missed), while the block runs: enter it before looking at the lease, so that a
        release between the look and the wait is not missed."""
        event = asyncio.Event()
        events = self._waiting.setdefault(root_execution_id, set())
        events.add(event)
        try:
            yield event
        finally:
            events.discard(event)
            if not events:
                del self._waiting[root_execution_id]

    async def acquire_when_free(self, root_execution_id: str, said: str, hint: str) -> Held:
        """The tree's lease, once the instance whose pass holds it ends that pass: looked at
        again when its release is heard, or after each of `looks` (what no signal says).

        Raises:
            LeaseBusyError: The holder did not end its pass within ``resume_timeout``
                (``said``, ``hint``: what the error adds).
        """
        runtime = self.runtime
        loop = asyncio.get_running_loop()
        deadline = loop.time() + runtime.resume_timeout.total_seconds()
        looks = self.looks()
        with self.waiting(root_execution_id) as released:
            while True:
                held = await acquire_lease(runtime, root_execution_id)
                if held is not None:
                    return held
                left = deadline - loop.time()
                if left <= 0:
                    raise LeaseBusyError(
                        f"execution tree {root_execution_id} stayed in another instance's pass "
                        f"for {runtime.resume_timeout}; {said}",
                        hint=hint,
                    )
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(released.wait(), min(next(looks), left))
                released.clear()

    async def _moving(self) -> None:
        """Moves the trees said to be answered, one after the other, until none is queued."""
        try:
            while self._answered:
                root = next(iter(self._answered))
                del self._answered[root]
                try:
                    await self._move(root)
                except Exception as error:  # the sweep moves it; the queue goes on
                    self.runtime.logger.warning(
                        "run.wake-failed: execution tree %s, said to be answered, could not be "
                        "moved: %s",
                        root,
                        error,
                        extra={"event": "run.wake-failed", "execution_id": root},
                    )
        finally:
            self._movers -= 1
