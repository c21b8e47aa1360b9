"""Which trees a build serves, said in SQL: the predicate on a root execution ``e`` that the
recovery sweep filters by, and a listing of stranded trees negates."""

from __future__ import annotations

from collections.abc import Sequence

from agboss.store.protocol import Served

__all__ = ["served_by_root"]


def served_by_root(served: Sequence[Served] | None) -> tuple[str, list[object]]:
    """The predicate on a root ``e`` that one of ``served`` serves it, and its parameters
    (``None``: every root; nothing served: none).

    A prefix is compared by its length, written into the SQL (an integer this code made):
    ``LIKE`` ignores case on SQLite, and a bound length would be typed apart on PostgreSQL.
    """
    if served is None:
        return "1 = 1", []
    said: list[str] = []
    params: list[object] = []
    for each in served:
        versions = [
            *(
                ["e.workflow_version IN (" + ", ".join("?" for _ in each.versions) + ")"]
                if each.versions
                else []
            ),
            *(f"substr(e.workflow_version, 1, {len(prefix)}) = ?" for prefix in each.prefixes),
        ]
        if not versions:
            continue
        excluded = (
            " AND e.workflow_version NOT IN (" + ", ".join("?" for _ in each.excluded) + ")"
            if each.excluded
            else ""
        )
        said.append(f"(e.workflow = ? AND ({' OR '.join(versions)}){excluded})")
        params += [each.workflow, *each.versions, *each.prefixes, *each.excluded]
    return ("(" + " OR ".join(said) + ")", params) if said else ("1 = 0", [])
