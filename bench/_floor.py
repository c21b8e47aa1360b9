"""The PostgreSQL pause cycle's floor: its own transactions, replayed without the engine.

One agboss cycle's transactions are recorded as they go to the server (each is one
simple-protocol query: ``BEGIN; EXECUTE …; COMMIT``), with the ``PREPARE``s its statements
were prepared by, then sent again, as they were, on a connection of their own: every 32-digit
hexadecimal id (executions, threads, questions, grants) replaced by a new one each time, so
each replay is a new tree that makes the same round trips, runs the same statements and waits
for the same disk flushes. What the cycle costs beyond this is agboss's Python (the engine and
the building of the statements); what it costs below it would need fewer commits or
statements.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from psycopg import AsyncConnection

_ID = re.compile(r"([0-9a-f]{32})")
"""An id; captured, so that splitting a text on it keeps the ids at the odd places."""

PREPARING = 2
"""Cycles run before the one recorded: a statement is prepared on its second use
(`agboss.store.postgres._prepared.THRESHOLD`), so the third cycle sends what every later one
does."""


@dataclass(frozen=True, slots=True)
class Recorded:
    """What one cycle sent: its transactions, and the ``PREPARE``s they rely on."""

    prepares: tuple[str, ...]
    transactions: tuple[str, ...]


async def recorded(cycle: Callable[[], Awaitable[float]]) -> Recorded:
    """The transactions the cycle sends once its statements are prepared, in order, and the
    ``PREPARE``s sent until then. Call it before the app's first cycle.

    Raises:
        RuntimeError: The recorded cycle sent something else than batched transactions (a
            read of its own, say): a replay would leave it out.
    """
    prepares: dict[str, str] = {}
    sent: list[str] = []
    execute = AsyncConnection.execute

    async def recording(self: AsyncConnection[Any], query: Any, *args: Any, **kwargs: Any) -> Any:
        text = query if isinstance(query, str) else repr(query)
        if text.startswith("PREPARE "):
            prepares[text.split()[1]] = text  # the same text on every connection
        else:
            sent.append(text)
        return await execute(self, query, *args, **kwargs)

    AsyncConnection.execute = recording  # type: ignore[method-assign]
    try:
        for _ in range(PREPARING):
            await cycle()
        sent.clear()
        await cycle()
    finally:
        AsyncConnection.execute = execute  # type: ignore[method-assign]
    others = [text for text in sent if not text.startswith(("BEGIN", "PREPARE "))]
    if others:
        raise RuntimeError(f"the cycle sent more than its transactions: {others[0][:200]}")
    return Recorded(tuple(prepares.values()), tuple(sent))


@asynccontextmanager
async def replayed(
    url: str, schema: str, cycle: Recorded
) -> AsyncIterator[Callable[[], Awaitable[float]]]:
    """A cycle that sends the recorded ``cycle``'s transactions again (new ids each time) on a
    connection of its own, in ``schema``, with its statements prepared there."""
    run = uuid.uuid4().hex[:8]  # the replays' ids: 16 + 8 + 8 hexadecimal digits, new in each
    pieces = [_ID.split(sent) for sent in cycle.transactions]  # split once: a cycle only joins
    ids = sorted({piece for parts in pieces for piece in parts[1::2]})
    connection = await AsyncConnection.connect(
        url, autocommit=True, options=f"-c search_path={schema}"
    )
    try:
        for prepare in cycle.prepares:
            await connection.execute(prepare)
        count = 0

        async def replay() -> float:
            nonlocal count
            count += 1
            new = {old: f"{count:016x}{place:08x}{run}" for place, old in enumerate(ids)}
            # A text between two ids is never an id itself (the split would have taken it).
            fresh = ["".join(new.get(part, part) for part in parts) for parts in pieces]
            began = time.perf_counter()
            for sent in fresh:
                await connection.execute(sent)
            return time.perf_counter() - began

        yield replay
    finally:
        await connection.close()
