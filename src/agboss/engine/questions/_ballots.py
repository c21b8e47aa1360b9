"""The engine's door for a vote: recorded in one commit, said to the instances that listen."""

from __future__ import annotations

from typing import Any

from agboss.engine.instance import Runtime
from agboss.store.protocol import Signal, SignalKind
from agboss.store.writes import Announce, CastVote, Voted, Write

__all__ = ["cast_vote"]


async def cast_vote(runtime: Runtime, vote: CastVote, *, move: bool) -> Voted:
    """Records a vote (`CastVote`: counted once per voter; the one that decides the question
    resolves it in the same commit).

    Args:
        runtime: The application's runtime.
        vote: The vote.
        move: Whether the caller moves the tree itself once the vote decided it; otherwise an
            instance that hears of it does (a hint: a vote that did not decide finds nothing
            to take), else the sweep.

    Returns:
        What the store made of it.
    """
    writes: list[Write[Any]] = [vote]
    if not move:
        root = vote.pause.root_execution_id
        writes.append(Announce(Signal(SignalKind.ANSWERED, root, runtime.holder)))
    return (await runtime.store.write(writes))[vote]
