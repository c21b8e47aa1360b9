"""The PostgreSQL pause cycle's floor: its own transactions, replayed without the engine.

One agboss cycle's transactions are recorded as they go to the server (each is one
simple-protocol query: ``BEGIN; EXECUTE …; COMMIT``), then sent again, as they were, on a
connection of their own with the same prepared statements: every 32-digit hexadecimal id
(executions, threads, questions, grants) replaced by a new one each time, so each replay is a
new tree that makes the same round trips, runs the same statements and waits for the same
disk flushes. What the cycle costs beyond this is agboss's Python (the engine and the
building of the statements); what it costs below it would need fewer commits or statements.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from psycopg import AsyncConnection

from agboss import App
from agboss.store.postgres._prepared import _numbered

_ID = re.compile(r"[0-9a-f]{32}")

_PREPARED = re.compile(r"EXECUTE (agboss_[0-9a-f]{16})\(")


async def recorded(cycle: Callable[[], Awaitable[float]]) -> list[str]:
    """The transactions one run of ``cycle`` sends to PostgreSQL, in order.

    Raises:
        RuntimeError: The cycle sent something else than batched transactions and the
            statements they prepare (a read of its own, say): a replay would leave it out.
    """
    sent: list[str] = []
    others: list[str] = []
    execute = AsyncConnection.execute

    async def recording(self: AsyncConnection[Any], query: Any, *args: Any, **kwargs: Any) -> Any:
        text = query if isinstance(query, str) else repr(query)
        if text.startswith("BEGIN"):
            sent.append(text)
        elif not text.startswith("PREPARE "):
            others.append(text)
        return await execute(self, query, *args, **kwargs)

    AsyncConnection.execute = recording  # type: ignore[method-assign]
    try:
        await cycle()
    finally:
        AsyncConnection.execute = execute  # type: ignore[method-assign]
    if others:
        raise RuntimeError(f"the cycle sent more than its transactions: {others[0][:200]}")
    return sent


@asynccontextmanager
async def replayed(
    app: App, url: str, schema: str, transactions: list[str]
) -> AsyncIterator[Callable[[], Awaitable[float]]]:
    """A cycle that sends ``transactions`` again (new ids each time) on a connection of its
    own, in ``schema``, with the statements they execute prepared as ``app``'s store prepared
    them."""
    store: Any = app.store
    # The store's own record of what it prepared: its text, by the name its EXECUTEs use.
    texts = {name: text for text, name in store.driver._prepared._names.items()}
    run = uuid.uuid4().hex[:8]  # the replays' ids: 8 + 16 + 8 hexadecimal digits, new in each
    connection = await AsyncConnection.connect(
        url, autocommit=True, options=f"-c search_path={schema}"
    )
    try:
        used = {name for sent in transactions for name in _PREPARED.findall(sent)}
        for name in sorted(used):
            await connection.execute(f"PREPARE {name} AS {_numbered(texts[name])}")

        # Each text cut at its ids once, so that a cycle only joins new ones in.
        templates = [_ID.split(sent) for sent in transactions]
        found = [_ID.findall(sent) for sent in transactions]
        names = sorted({found_id for ids in found for found_id in ids})
        places = [[names.index(found_id) for found_id in ids] for ids in found]
        count = 0

        async def cycle() -> float:
            nonlocal count
            count += 1
            new = [f"{place:08x}{count:016x}{run}" for place in range(len(names))]
            fresh = [
                "".join(_joined(pieces, [new[place] for place in at]))
                for pieces, at in zip(templates, places, strict=True)
            ]
            began = time.perf_counter()
            for sent in fresh:
                await connection.execute(sent)
            return time.perf_counter() - began

        yield cycle
    finally:
        await connection.close()


def _joined(pieces: list[str], ids: list[str]) -> list[str]:
    """A text's pieces around its ids, with ``ids`` in their places."""
    out = [pieces[0]]
    for found_id, piece in zip(ids, pieces[1:], strict=True):
        out += (found_id, piece)
    return out
