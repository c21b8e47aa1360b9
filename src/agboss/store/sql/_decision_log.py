"""The decision log's statements: an entry appended in the transaction that records its
decision, and the chain sealed as that transaction's last work.

An entry is appended unsealed (no place in the chain yet), under the same condition as the
audit entry it stands beside, and at most once (``source``: what it records). Sealing numbers
the transaction's entries after the tenant's head and hashes each over the one before
(``agboss_sha256``: a SQL function on PostgreSQL, one registered on each SQLite connection), in
the database: nothing is read back, so the commit takes no more round trips than it did.

The tenant's head row (``decision_chains``) is locked last in the transaction, after every row
the transaction's writes took: two instances appending for one tenant wait for each other
there and cannot deadlock on it, and the second chains after the first's committed head — the
chain never forks. On SQLite a write transaction holds the file's lock, which serializes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from agboss.records import DecisionEntry, LoggedDecision
from agboss.store._times import to_micros
from agboss.store.sql._dialect import Dialect, Sql
from agboss.store.sql._statements import Ops, do, many_later, when
from agboss.store.writes import CutDecisionLog

__all__ = ["append", "append_if_resolved", "cut_decision_log", "logged", "seal"]

_COLUMNS = "tenant_id, source, at, root_execution_id, entry_json"


def append(tenant_id: str, entry: DecisionEntry) -> Sql:
    """Appends ``entry`` to the tenant's log, unless what it records is logged already."""
    return do(
        f"INSERT INTO decision_log ({_COLUMNS}) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        *_values(tenant_id, entry),
    )


def append_if_resolved(
    tenant_id: str, entry: DecisionEntry, pause_id: str, status: str, resolved_at: int
) -> Sql:
    """`append`, only if the pause was resolved as ``status`` at ``resolved_at`` (by the
    statement before, in this transaction): sent with it, nothing read first."""
    return do(
        f"INSERT INTO decision_log ({_COLUMNS}) SELECT ?, ?, ?, ?, ? FROM pauses "
        "WHERE tenant_id = ? AND pause_id = ? AND status = ? AND resolved_at = ? "
        "ON CONFLICT DO NOTHING",
        *_values(tenant_id, entry),
        tenant_id,
        pause_id,
        status,
        resolved_at,
    )


def _values(tenant_id: str, entry: DecisionEntry) -> tuple[object, ...]:
    return (
        tenant_id,
        entry.source,
        to_micros(datetime.fromisoformat(entry.decided_at)),
        entry.root_execution_id,
        entry.model_dump_json(),
    )


_ENSURE = (
    "INSERT INTO decision_chains (tenant_id, seq, head) "
    "SELECT DISTINCT tenant_id, 0, agboss_sha256('agboss decision log ' || tenant_id) "
    "FROM decision_log WHERE seq IS NULL ON CONFLICT DO NOTHING"
)
"""A tenant's first entry makes its head row, from its genesis (concurrent firsts wait for
each other on its key, and the second finds it)."""

_TODO = (
    "todo AS (SELECT entry_id, tenant_id, entry_json, "
    "ROW_NUMBER() OVER (PARTITION BY tenant_id ORDER BY entry_id) AS n "
    "FROM decision_log WHERE seq IS NULL)"
)
"""The transaction's unsealed entries, numbered per tenant in the order appended."""


def _chained(heads: str) -> str:
    """Each unsealed entry after the one before, from the heads ``heads`` reads."""
    return (
        "chained (tenant_id, n, entry_id, seq, previous, digest) AS ("
        "SELECT tenant_id, CAST(0 AS BIGINT), CAST(NULL AS BIGINT), seq, CAST(NULL AS TEXT), "
        f"head FROM {heads} "
        "UNION ALL SELECT t.tenant_id, t.n, t.entry_id, c.seq + 1, c.digest, "
        "agboss_sha256(c.digest || t.entry_json) "
        "FROM chained c JOIN todo t ON t.tenant_id = c.tenant_id AND t.n = c.n + 1)"
    )


_SEAL_POSTGRES = (
    # One statement: the heads locked (the latest committed, once a writer before committed),
    # the entries chained after them, the heads moved to their last entries.
    f"WITH RECURSIVE {_TODO}, "
    "heads AS (SELECT tenant_id, seq, head FROM decision_chains "
    "WHERE tenant_id IN (SELECT tenant_id FROM todo) ORDER BY tenant_id FOR NO KEY UPDATE), "
    f"{_chained('heads')}, "
    "sealed AS (UPDATE decision_log SET seq = chained.seq, previous = chained.previous, "
    "digest = chained.digest FROM chained WHERE chained.entry_id = decision_log.entry_id "
    "RETURNING decision_log.tenant_id, decision_log.seq, decision_log.digest) "
    "UPDATE decision_chains SET seq = last.seq, head = last.digest "
    "FROM (SELECT DISTINCT ON (tenant_id) tenant_id, seq, digest FROM sealed "
    "ORDER BY tenant_id, seq DESC) AS last WHERE decision_chains.tenant_id = last.tenant_id"
)

_SEAL_SQLITE = (
    # A write transaction holds the file's lock: the heads are marked, chained from, moved.
    "UPDATE decision_chains SET sealing = TRUE "
    "WHERE tenant_id IN (SELECT tenant_id FROM decision_log WHERE seq IS NULL)",
    f"WITH RECURSIVE {_TODO}, {_chained('decision_chains WHERE sealing')} "
    "UPDATE decision_log SET seq = chained.seq, previous = chained.previous, "
    "digest = chained.digest FROM chained WHERE chained.entry_id = decision_log.entry_id",
    "UPDATE decision_chains SET seq = l.seq, head = l.digest, sealing = FALSE "
    "FROM decision_log l WHERE decision_chains.sealing "
    "AND l.tenant_id = decision_chains.tenant_id AND l.seq = (SELECT MAX(m.seq) "
    "FROM decision_log m WHERE m.tenant_id = decision_chains.tenant_id)",
)


def seal(dialect: Dialect) -> Ops:
    """Chains the entries this transaction appended, after their tenants' heads: run last."""
    yield do(_ENSURE)
    for text in (_SEAL_POSTGRES,) if dialect.name == "postgres" else _SEAL_SQLITE:
        yield do(text)


def logged(row: Sequence[Any]) -> LoggedDecision:
    """An entry as read: ``tenant_id, seq, previous, digest, entry_json``."""
    return LoggedDecision(
        tenant_id=str(row[0]),
        seq=int(row[1]),
        previous=str(row[2]),
        digest=str(row[3]),
        entry_json=str(row[4]),
    )


def cut_decision_log(write: CutDecisionLog) -> Ops:
    # The head row first: a seal of the tenant's chain waits (and the cut waits for one).
    yield do("UPDATE decision_chains SET sealing = sealing WHERE tenant_id = ?", write.tenant_id)
    # The cut: the entries before the first one decided at or after ``before``.
    end = (
        "(SELECT COALESCE(MIN(k.seq), (SELECT c.seq + 1 FROM decision_chains c "
        "WHERE c.tenant_id = ?)) FROM decision_log k WHERE k.tenant_id = ? AND k.at >= ?)"
    )
    at = to_micros(write.before)
    yield do(
        "UPDATE decision_chains SET cut_seq = l.seq, cut_digest = l.digest "
        "FROM decision_log l WHERE decision_chains.tenant_id = ? AND l.tenant_id = ? "
        f"AND l.seq = {end} - 1 AND l.seq > decision_chains.cut_seq",
        write.tenant_id,
        write.tenant_id,
        write.tenant_id,
        write.tenant_id,
        at,
    )
    rows = yield many_later(
        "DELETE FROM decision_log WHERE tenant_id = ? AND seq <= "
        "(SELECT cut_seq FROM decision_chains WHERE tenant_id = ?) RETURNING 1",
        write.tenant_id,
        write.tenant_id,
    )
    return when(rows, len)
