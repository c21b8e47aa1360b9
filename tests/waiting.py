"""Waiting in a test for what happens in the background (a tree moved by `App.answer`)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable


async def eventually(check: Callable[[], bool | Awaitable[bool]], what: str) -> None:
    """Returns once ``check`` holds; fails after five seconds, naming ``what`` did not happen."""
    for _ in range(500):
        held = check()
        if inspect.isawaitable(held):
            held = await held
        if held:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{what} did not happen")
