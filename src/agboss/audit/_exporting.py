"""A tenant's decision log as an auditor gets it: page by page, masked by each workflow's PII
rules as every record that leaves the server is, written as JSON lines or CSV and read back."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, TextIO, get_args

from agboss.pii import PiiOutside
from agboss.records import DecisionEntry, LoggedDecision
from agboss.store.protocol import ExecutionRow, Store

__all__ = [
    "DecisionPage",
    "ExportFormat",
    "LogEntry",
    "decision_page",
    "read_export",
    "write_export",
]


class ExportFormat(StrEnum):
    """How an export is written."""

    JSONL = "jsonl"
    """One JSON object per line: ``seq``, ``previous``, ``digest``, ``masked``, ``entry``."""
    CSV = "csv"
    """One row per entry, a header first: ``seq``, ``previous``, ``entry_digest`` (the
    entry's digest in the chain), ``masked``, then the entry's fields flat (``digest`` is the
    question's), nested ones as JSON."""


@dataclass(frozen=True, slots=True)
class LogEntry:
    """An entry of the decision log as it may be shown.

    Attributes:
        seq: Its place in the tenant's chain.
        previous: The digest of the entry before it.
        digest: Its digest, over the entry as stored (`agboss.chain_digest`).
        entry: The entry, masked by its workflow's PII rules.
        masked: Whether masking changed it: then ``digest`` is over values this copy does not
            hold (`agboss audit verify` checks the store's).
    """

    seq: int
    previous: str
    digest: str
    entry: DecisionEntry
    masked: bool


@dataclass(frozen=True, slots=True)
class DecisionPage:
    """One page of a tenant's decision log, in the chain's order.

    Attributes:
        entries: The page's entries.
        next: What ``after=`` takes for the next page; ``None`` on the last.
    """

    entries: list[LogEntry]
    next: int | None


async def decision_page(
    store: Store,
    outside: PiiOutside,
    tenant_id: str,
    *,
    after: int = 0,
    since: datetime | None = None,
    limit: int = 100,
) -> DecisionPage:
    """A page of a tenant's decision log, masked (``after``: the place the page before ended;
    ``since``: only entries decided at or after it)."""
    rows = await store.records.decision_log(tenant_id, after=after, since=since, limit=limit)
    trees: dict[str, ExecutionRow | None] = {}
    entries = []
    for logged in rows:
        entry = logged.entry
        if entry.root_execution_id not in trees:
            trees[entry.root_execution_id] = await store.executions.find_by_id(
                entry.root_execution_id
            )
        entries.append(_shown(outside, logged, entry, trees[entry.root_execution_id]))
    return DecisionPage(entries, rows[-1].seq if len(rows) == limit else None)


def _shown(
    outside: PiiOutside, logged: LoggedDecision, entry: DecisionEntry, root: ExecutionRow | None
) -> LogEntry:
    workflow = "" if root is None else root.workflow
    known = [] if root is None else outside.input_values(workflow, root.input_json)
    shown = outside.logged(entry, outside.policy(workflow), known)
    return LogEntry(logged.seq, logged.previous, logged.digest, shown, shown != entry)


_NESTED = ("arguments", "decision", "reading")
"""The entry's fields a CSV cell holds as JSON."""

_COLUMNS = ("seq", "previous", "entry_digest", "masked", *DecisionEntry.model_fields)

_OPTIONAL = frozenset(
    name
    for name, field in DecisionEntry.model_fields.items()
    if type(None) in get_args(field.annotation)
)
"""The fields whose ``None`` a CSV cell holds as nothing."""


def write_export(entries: Iterable[LogEntry], out: TextIO, form: ExportFormat) -> int:
    """Writes ``entries`` to ``out`` as ``form``; how many (a CSV's header first)."""
    count = 0
    if form is ExportFormat.JSONL:
        for shown in entries:
            out.write(json.dumps(_object(shown), ensure_ascii=False) + "\n")
            count += 1
        return count
    writer = csv.DictWriter(out, fieldnames=_COLUMNS)
    writer.writeheader()
    for shown in entries:
        flat = _object(shown)
        flat["entry_digest"] = flat.pop("digest")  # the entry's own field is the question's
        entry = flat.pop("entry")
        for name, value in entry.items():
            flat[name] = json.dumps(value) if name in _NESTED and value is not None else value
        writer.writerow(flat)
        count += 1
    return count


def _object(shown: LogEntry) -> dict[str, Any]:
    return {
        "seq": shown.seq,
        "previous": shown.previous,
        "digest": shown.digest,
        "masked": shown.masked,
        "entry": shown.entry.model_dump(mode="json"),
    }


def read_export(lines: Iterable[str], form: ExportFormat) -> Iterator[LogEntry]:
    """The entries an export holds, read back.

    Raises:
        ValueError: A line or row is not an entry of an export of this form.
    """
    if form is ExportFormat.JSONL:
        for line in lines:
            if line.strip():
                yield _entry(json.loads(line))
        return
    for row in csv.DictReader(lines):
        entry: dict[str, Any] = {}
        for name in DecisionEntry.model_fields:
            cell = row.get(name)
            if cell == "" and name in _OPTIONAL:
                entry[name] = None
            else:
                entry[name] = json.loads(cell) if name in _NESTED and cell else cell
        yield _entry(
            {
                "seq": row["seq"],
                "previous": row["previous"],
                "digest": row["entry_digest"],
                "masked": row["masked"] == "True",
                "entry": entry,
            }
        )


def _entry(data: dict[str, Any]) -> LogEntry:
    return LogEntry(
        seq=int(data["seq"]),
        previous=str(data["previous"]),
        digest=str(data["digest"]),
        entry=DecisionEntry.model_validate(data["entry"]),
        masked=bool(data["masked"]),
    )
