"""A store's write as data (`Write`), what one transaction's writes returned (`Results`), and
one write applied alone (`write_one`): the ground every write of `agboss.store.writes` stands
on."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, cast

from agboss.store.protocol import Fence, Signal

if TYPE_CHECKING:
    from agboss.store.protocol import Store

__all__ = ["Results", "Write", "write_one"]

T = TypeVar("T")


class Write(Generic[T]):
    """A write whose result is a ``T``; subclasses are frozen dataclasses."""

    __slots__ = ()

    durable: ClassVar[bool] = True
    """Whether a commit that holds it waits for the disk, so that it survives a power loss or a
    crash of the database server. ``False`` only for a write whose loss — and with it the loss
    of every commit after it up to the next durable one, which a database's ordered log makes
    durable too — leaves a state a killed process could have left, from which recovery
    re-derives it, with nothing outside the store done on its strength alone: a lease renewed
    or released (it expires), an execution begun (promised to no one until a durable commit
    of its pass), a question marked sent (sent again, under the same id), a branch's place,
    a tree rested. A commit waits if any of its writes is durable. The crash harness proves
    each (``make crash``: such a commit lost, with what followed it)."""

    def changed_executions(self) -> tuple[str, ...] | None:
        """The executions whose rows this write may change (``None``: not known which)."""
        return ()

    def announces(self) -> tuple[Signal, ...]:
        """What its transaction announces to every instance that listens (`Store.signals`)
        when it commits. A hint, so it may be said when nothing changed (a lease already
        freed): a listener reads the store again."""
        return ()


class Results:
    """What the writes of one transaction returned, each read by its write.

    ``results[write]`` is the result of ``write`` — a ``Write[T]`` gives a ``T`` — so no caller
    counts positions. A write object given twice in one transaction has two results: read them
    with `pairs` (``results[write]`` refuses to choose).

    Args:
        writes: The writes, in the order applied.
        values: Their results, in the same order.
    """

    __slots__ = ("_by_write", "_twice", "_values", "_writes")

    def __init__(self, writes: Sequence[Write[Any]], values: Sequence[object]) -> None:
        if len(writes) != len(values):
            raise ValueError(f"{len(writes)} writes gave {len(values)} results")
        self._writes = tuple(writes)  # kept: the ids below stay theirs
        self._values = tuple(values)
        self._by_write = {id(write): value for write, value in zip(writes, values, strict=True)}
        self._twice: set[int] = set()
        if len(self._by_write) < len(self._writes):  # rare: counted only then
            given = Counter(id(write) for write in writes)
            self._twice = {key for key, times in given.items() if times > 1}

    def __getitem__(self, write: Write[T]) -> T:
        key = id(write)
        if key in self._twice:
            raise KeyError(f"{write!r} was written twice in this transaction: read pairs()")
        try:
            return cast(T, self._by_write[key])
        except KeyError:
            raise KeyError(f"{write!r} was not written in this transaction") from None

    def __repr__(self) -> str:
        return f"Results({list(self.pairs())!r})"

    def pairs(self) -> Iterator[tuple[Write[Any], object]]:
        """Each write with its result, in the order applied."""
        return zip(self._writes, self._values, strict=True)


async def write_one(store: Store, write: Write[T], *, fence: Fence | None = None) -> T:
    """Applies one write as its own transaction (see `Store.write`); its result."""
    return (await store.write([write], fence=fence))[write]
