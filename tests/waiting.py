"""Waiting in a test for what happens in the background (a tree moved by `App.answer`)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable


async def eventually(
    check: Callable[[], bool | Awaitable[bool]], what: str, *, seconds: float = 5.0
) -> None:
    """Returns once ``check`` holds; fails after ``seconds`` (five) of checks every 10 ms,
    naming ``what`` did not happen."""
    for _ in range(int(seconds * 100)):
        held = check()
        if inspect.isawaitable(held):
            held = await held
        if held:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{what} did not happen")
