"""The repositories of a SQL store: every read, written once for every dialect.

Prefix ranges (a launch's branches, a scope's steps, a path's pauses, a tree's executions —
children's ids extend their parent's, ``<parent>/<place>``) are ``>= prefix AND < prefix || max``
on columns that compare as bytes, so an index serves them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from agboss.enums import ExecutionStatus, PauseStatus
from agboss.models import Usage
from agboss.records import (
    DecisionChain,
    LoggedDecision,
    PauseAnswerRecord,
    PauseRecord,
    PauseVote,
    PendingPause,
)
from agboss.store._rows import (
    AT_NOW,
    EXECUTION_READ,
    PAUSE_COLUMNS,
    PENDING_COLUMNS,
    PENDING_IDS,
    STEPS_UNDER,
    TREE_DUE,
    by_seq,
    execution_of,
    pause_of,
    pending_of,
    qualified,
    step_of,
)
from agboss.store._times import from_micros, to_micros
from agboss.store.protocol import (
    BranchRow,
    BranchStatus,
    Exchange,
    ExecutionRow,
    ExecutionsQuery,
    FailedQuery,
    LedgerEntry,
    RetryRow,
    Served,
    StepEntry,
    ThreadRow,
    TreeNode,
    WaitingPause,
    WaitingQuery,
)
from agboss.store.sql._decision_log import logged
from agboss.store.sql._dialect import KEY_END, Returns, Sql, computed
from agboss.store.sql._driver import Driver
from agboss.store.sql._ops import shape_of, work_of
from agboss.store.sql._pause_ops import DeleteResolvedPauses, SavePauseAnswer
from agboss.store.sql._serving import served_by_root
from agboss.store.writes import Write

__all__ = [
    "SqlBranchRepository",
    "SqlBudgetLedgerRepository",
    "SqlExecutionRecordRepository",
    "SqlExecutionRepository",
    "SqlPausedExecutionRepository",
    "SqlStepJournalRepository",
]


_STATUS = {status.value: status for status in ExecutionStatus}

_OUTLINE = (
    "execution_id, parent_execution_id, thread_id, workflow, workflow_version, status, "
    "output_json, input_tokens, output_tokens, cost, model_calls, fingerprint"
)


def _nodes(rows: Sequence[Any]) -> list[TreeNode]:
    status = _STATUS.__getitem__
    # Both drivers give these columns as str, int and float already (cost: REAL, DOUBLE).
    return [
        TreeNode(
            row[0],
            row[1],
            row[2],
            row[3],
            row[4],
            status(row[5]),
            row[6],
            row[7],
            row[8],
            float(row[9]),
            row[10],
            row[11],
        )
        for row in rows
    ]


_WAITING = "FROM pauses p JOIN executions e ON e.execution_id = p.root_execution_id"
_NAMING = (
    "FROM pause_voters v JOIN pauses p ON p.tenant_id = v.tenant_id AND p.pause_id = v.pause_id "
    "JOIN executions e ON e.execution_id = p.root_execution_id"
)


def _waiting_parts(query: WaitingQuery, *, keyset: bool) -> list[tuple[str, list[Any]]]:
    """A listing's parts, each ``FROM … WHERE …`` with its values: the tenant's pauses (or the
    owner's), and those that name the voter — two index reads, not one that walks both."""
    narrowed = ""
    values: list[Any] = []
    if query.channel is not None:
        narrowed += " AND p.channel = ?"
        values.append(query.channel)
    if query.asked_before is not None:
        narrowed += " AND p.asked_at < ?"
        values.append(to_micros(query.asked_before))
    if query.expiring_before is not None:
        narrowed += " AND p.expires_at < ?"
        values.append(to_micros(query.expiring_before))
    if keyset and query.after is not None:
        at, root, seq = query.after
        narrowed += " AND (p.asked_at, p.root_execution_id, p.seq) > (?, ?, ?)"
        values += [to_micros(at), root, seq]
    parts: list[tuple[str, list[Any]]] = []
    if query.owner_id is not None or query.voter is None:
        where = "p.tenant_id = ? AND p.status = 'pending'"
        params: list[Any] = [query.tenant_id]
        if query.owner_id is not None:
            # Read from the owner's trees not over (`executions_open_by_owner`): a question
            # waits only in such a tree, as one that ends closes its questions in the same
            # commit.
            where += (
                " AND e.tenant_id = ? AND e.owner_id = ? "
                "AND e.status IN ('running', 'paused', 'waiting')"
            )
            params += [query.tenant_id, query.owner_id]
        parts.append((f"{_WAITING} WHERE {where}{narrowed}", [*params, *values]))
    if query.voter is not None:
        where = "v.tenant_id = ? AND v.voter = ? AND p.status = 'pending'"
        parts.append(
            (f"{_NAMING} WHERE {where}{narrowed}", [query.tenant_id, query.voter, *values])
        )
    for delegation in query.delegated:  # a principal's questions, within the scope given
        scoped, scope = "", []
        if delegation.role is not None:
            scoped += " AND p.channel = ?"
            scope.append(delegation.role)
        if delegation.tool is not None:
            scoped += " AND {ask_tool} = ?"
            scope.append(delegation.tool)
        owned = (
            "p.tenant_id = ? AND p.status = 'pending' AND e.tenant_id = ? AND e.owner_id = ? "
            "AND e.status IN ('running', 'paused', 'waiting')"
        )
        parts.append(
            (
                f"{_WAITING} WHERE {owned}{scoped}{narrowed}",
                [query.tenant_id, query.tenant_id, delegation.principal, *scope, *values],
            )
        )
        naming = "v.tenant_id = ? AND v.voter = ? AND p.status = 'pending'"
        parts.append(
            (
                f"{_NAMING} WHERE {naming}{scoped}{narrowed}",
                [query.tenant_id, delegation.principal, *scope, *values],
            )
        )
    return parts


def _one(text: str, *params: Any) -> Sql:
    return Sql(text, params, Returns.ONE)


def _all(text: str, *params: Any) -> Sql:
    return Sql(text, params, Returns.ALL)


def _usage(row: Any) -> Usage:
    return Usage(
        input_tokens=int(row[0]), output_tokens=int(row[1]), cost=float(row[2]), calls=int(row[3])
    )


class _Repository:
    def __init__(self, driver: Driver) -> None:
        self._driver = driver

    async def _read_in(self, query: str, first: str, values: Sequence[str]) -> list[Any]:
        """The rows of ``query`` (one ``?``, then ``IN (…)`` to end it) for every value, read
        500 at a time: under every database's limit on parameters."""
        rows: list[Any] = []
        for start in range(0, len(values), 500):
            some = values[start : start + 500]
            rows += await self._driver.read(
                _all(f"{query} ({', '.join('?' * len(some))})", first, *some)
            )
        return rows

    async def _write(self, write: Write[Any]) -> Any:
        """One write as its own transaction (what `SqlStore.write` does, for one)."""
        [result] = computed(
            await self._driver.transact(
                work_of([write], self._driver.dialect), shape=shape_of([write], None)
            )
        )
        return result


class SqlExecutionRepository(_Repository):
    """Threads and executions."""

    async def find_thread(self, tenant_id: str, thread_id: str) -> ThreadRow | None:
        row = await self._driver.read(
            _one(
                "SELECT owner_id FROM threads WHERE tenant_id = ? AND thread_id = ?",
                tenant_id,
                thread_id,
            )
        )
        return None if row is None else ThreadRow(tenant_id, thread_id, str(row[0]))

    async def find(self, tenant_id: str, execution_id: str) -> ExecutionRow | None:
        row = await self._driver.read(
            _one(
                f"SELECT {EXECUTION_READ} FROM executions WHERE execution_id = ? AND tenant_id = ?",
                execution_id,
                tenant_id,
            )
        )
        return None if row is None else execution_of(row)

    async def find_by_id(self, execution_id: str) -> ExecutionRow | None:
        row = await self._driver.read(
            _one(f"SELECT {EXECUTION_READ} FROM executions WHERE execution_id = ?", execution_id)
        )
        return None if row is None else execution_of(row)

    async def outline(self, root_execution_id: str) -> list[TreeNode]:
        rows = await self._driver.read(
            _all(
                f"SELECT {_OUTLINE} FROM executions WHERE root_execution_id = ? "
                "ORDER BY parent_execution_id IS NOT NULL, created_at, execution_id",
                root_execution_id,
            )
        )
        return _nodes(rows)

    async def outline_of(
        self, root_execution_id: str, execution_ids: Sequence[str]
    ) -> list[TreeNode]:
        rows = await self._read_in(
            f"SELECT {_OUTLINE} FROM executions WHERE root_execution_id = ? AND execution_id IN",
            root_execution_id,
            execution_ids,
        )
        return _nodes(rows)

    async def pii_tokens(self, root_execution_id: str) -> dict[str, str]:
        rows = await self._driver.read(
            _all(
                "SELECT token, value FROM pii_tokens WHERE root_execution_id = ?",
                root_execution_id,
            )
        )
        return {str(row[0]): str(row[1]) for row in rows}

    async def find_roots(self, tenant_id: str, thread_id: str) -> list[ExecutionRow]:
        rows = await self._driver.read(
            _all(
                f"SELECT {EXECUTION_READ} FROM executions WHERE tenant_id = ? "
                "AND thread_id = ? AND parent_execution_id IS NULL "
                "AND status IN ('running', 'paused', 'waiting') "
                "ORDER BY created_at, execution_id",
                tenant_id,
                thread_id,
            )
        )
        return [execution_of(row) for row in rows]

    async def find_exchanges(
        self, tenant_id: str, thread_id: str, before: ExecutionRow, limit: int | None
    ) -> list[Exchange]:
        at = to_micros(before.created_at)
        text = (
            "SELECT execution_id, workflow, input_json, output_json FROM executions "
            "WHERE tenant_id = ? AND thread_id = ? AND parent_execution_id IS NULL "
            "AND status = 'completed' AND execution_id <> ? AND created_at <= ? "
            "AND updated_at <= ? ORDER BY created_at DESC, updated_at DESC, execution_id DESC"
        )
        params: list[Any] = [tenant_id, thread_id, before.execution_id, at, at]
        if limit is not None:
            text += " LIMIT ?"
            params.append(limit)
        rows = await self._driver.read(_all(text, *params))
        return [Exchange(*row) for row in reversed(rows)]

    async def retries(self, root_execution_id: str) -> list[RetryRow]:
        rows = await self._driver.read(
            _all(
                "SELECT generation, retried_at, retried_by, error_json FROM retries "
                "WHERE root_execution_id = ? ORDER BY generation",
                root_execution_id,
            )
        )
        return [
            RetryRow(
                generation=int(row[0]),
                retried_at=from_micros(int(row[1])),
                retried_by=None if row[2] is None else str(row[2]),
                error_json=None if row[3] is None else str(row[3]),
            )
            for row in rows
        ]

    async def list_roots(self, query: ExecutionsQuery) -> list[ExecutionRow]:
        where = "tenant_id = ? AND parent_execution_id IS NULL"
        params: list[Any] = [query.tenant_id]
        for column, value in (
            ("status", None if query.status is None else query.status.value),
            ("owner_id", query.owner_id),
            ("workflow", query.workflow),
        ):
            if value is not None:
                where += f" AND {column} = ?"
                params.append(value)
        if query.since is not None:
            where += " AND updated_at >= ?"
            params.append(to_micros(query.since))
        if query.after is not None:
            at, execution_id = query.after
            where += " AND (updated_at, execution_id) < (?, ?)"
            params += [to_micros(at), execution_id]
        rows = await self._driver.read(
            _all(
                f"SELECT {EXECUTION_READ} FROM executions WHERE {where} "
                "ORDER BY updated_at DESC, execution_id DESC LIMIT ?",
                *params,
                query.limit,
            )
        )
        return [execution_of(row) for row in rows]

    async def list_failed(self, query: FailedQuery) -> list[ExecutionRow]:
        failed = ExecutionsQuery(
            tenant_id=query.tenant_id,
            status=ExecutionStatus.FAILED,
            owner_id=query.owner_id,
            after=query.after,
            limit=query.limit,
        )
        return await self.list_roots(failed)

    async def find_interrupted(
        self, now: datetime | None, limit: int, served: Sequence[Served] | None = None
    ) -> list[str]:
        # Candidates from four small indexes (running roots, resolved pauses, withdrawals
        # owed, wake-ups due), never a scan of every execution ever made.
        at = None if now is None else to_micros(now)
        serving, by = served_by_root(served)
        rows = await self._driver.read(
            _all(
                "SELECT e.execution_id FROM executions AS e "
                "LEFT JOIN leases AS l ON l.root_execution_id = e.execution_id "
                "WHERE e.execution_id IN ("
                "  SELECT execution_id FROM executions "
                "    WHERE status = 'running' AND parent_execution_id IS NULL "
                "  UNION SELECT root_execution_id FROM pauses WHERE status = 'resolved' "
                "  UNION SELECT root_execution_id FROM pauses WHERE withdrawal = 'due' "
                "  UNION SELECT execution_id FROM executions WHERE wake_at IS NOT NULL "
                "    AND parent_execution_id IS NULL "
                f"    AND {TREE_DUE}) "
                f"AND (l.holder IS NULL OR l.expires_at <= {AT_NOW}) "
                f"AND ((e.status IN ('running', 'paused', 'waiting') AND {serving}) "
                "  OR EXISTS (SELECT 1 "
                "  FROM pauses AS w WHERE w.root_execution_id = e.execution_id "
                "  AND w.withdrawal = 'due')) "
                "ORDER BY e.created_at LIMIT ?",
                at,
                at,
                *by,
                limit,
            )
        )
        return [str(row[0]) for row in rows]


class SqlStepJournalRepository(_Repository):
    """The step journal: one row per step."""

    async def load(self, execution_id: str, prefix: str = "") -> dict[str, StepEntry]:
        rows = await self._driver.read(_all(STEPS_UNDER, execution_id, prefix, prefix + KEY_END))
        return {str(row[0]): step_of(row) for row in rows}


_BRANCH_STATUS = {status.value: status for status in BranchStatus}


def _branch_rows(rows: list[Any]) -> dict[str, BranchRow]:
    # Text columns come back as str from both drivers: built as they are, the status by a
    # dict (a launch of thousands of branches reads them on every pass).
    status = _BRANCH_STATUS
    return {
        place: BranchRow(place, status[at], out, err, int(generation))
        for place, at, out, err, generation in rows
    }


class SqlBranchRepository(_Repository):
    """Launches' branch rows."""

    async def load(self, execution_id: str, prefix: str) -> dict[str, BranchRow]:
        rows = await self._driver.read(
            _all(
                "SELECT place, status, output_json, error_json, generation FROM branches "
                "WHERE execution_id = ? AND place >= ? AND place < ?",
                execution_id,
                prefix,
                prefix + KEY_END,
            )
        )
        return _branch_rows(rows)

    async def load_places(self, execution_id: str, places: Sequence[str]) -> dict[str, BranchRow]:
        rows = await self._read_in(
            "SELECT place, status, output_json, error_json, generation FROM branches "
            "WHERE execution_id = ? AND place IN",
            execution_id,
            places,
        )
        return _branch_rows(rows)

    async def count(self, execution_id: str, prefix: str) -> dict[BranchStatus, int]:
        rows = await self._driver.read(
            _all(
                "SELECT status, COUNT(*) FROM branches "
                "WHERE execution_id = ? AND place >= ? AND place < ? GROUP BY status",
                execution_id,
                prefix,
                prefix + KEY_END,
            )
        )
        return {_BRANCH_STATUS[str(row[0])]: int(row[1]) for row in rows}


_PAUSE_WITH_EXECUTION = (
    f"SELECT {qualified(PAUSE_COLUMNS, 'p')}, {qualified(EXECUTION_READ, 'e')} "
    "FROM pauses p JOIN executions e ON e.execution_id = p.execution_id "
    "WHERE p.tenant_id = ? AND p.pause_id = ?"
)
_PAUSE_WITH_EXECUTION_BY_REF = _PAUSE_WITH_EXECUTION.replace("p.pause_id = ?", "p.pause_ref = ?")
_PENDING_IN_ORDER = PENDING_IDS.replace("SELECT pause_id", f"SELECT {PENDING_COLUMNS}", 1)
"""A tree's pending pauses whole, in the order `PENDING_IDS` lists their ids."""
_PAUSE_WIDTH = PAUSE_COLUMNS.count(",") + 1
_PENDING_WIDTH = PENDING_COLUMNS.count(",") + 1


class SqlPausedExecutionRepository(_Repository):
    """The pauses: their state changes are writes (`agboss.store.sql._ops`)."""

    async def find_by_step(self, execution_id: str, step_key: str) -> PauseRecord | None:
        row = await self._driver.read(
            _one(
                f"SELECT {PAUSE_COLUMNS} FROM pauses WHERE execution_id = ? AND step_key = ? "
                "ORDER BY generation DESC, escalation DESC LIMIT 1",
                execution_id,
                step_key,
            )
        )
        return None if row is None else pause_of(row)

    async def find_by_tenant_id_and_pause_id(
        self, tenant_id: str, pause_id: str
    ) -> PauseRecord | None:
        row = await self._driver.read(
            _one(
                f"SELECT {PAUSE_COLUMNS} FROM pauses WHERE tenant_id = ? AND pause_id = ?",
                tenant_id,
                pause_id,
            )
        )
        return None if row is None else pause_of(row)

    async def find_with_execution(
        self, tenant_id: str, pause_id: str
    ) -> tuple[PauseRecord, ExecutionRow] | None:
        row = await self._driver.read(
            _one(
                _PAUSE_WITH_EXECUTION,
                tenant_id,
                pause_id,
            )
        )
        if row is None:
            return None
        return pause_of(row[:_PAUSE_WIDTH]), execution_of(row[_PAUSE_WIDTH:])

    async def find_with_execution_by_ref(
        self, tenant_id: str, pause_ref: str
    ) -> tuple[PauseRecord, ExecutionRow] | None:
        row = await self._driver.read(_one(_PAUSE_WITH_EXECUTION_BY_REF, tenant_id, pause_ref))
        if row is None:
            return None
        return pause_of(row[:_PAUSE_WIDTH]), execution_of(row[_PAUSE_WIDTH:])

    async def find_by_root(
        self, root_execution_id: str, statuses: tuple[PauseStatus, ...]
    ) -> list[PauseRecord]:
        marks = ", ".join("?" * len(statuses))
        rows = await self._driver.read(
            _all(
                # Sorted here: ORDER BY seq would make the database prefer the (root, seq)
                # index and read every pause of the tree.
                f"SELECT {PAUSE_COLUMNS} FROM pauses "
                f"WHERE root_execution_id = ? AND status IN ({marks})",
                root_execution_id,
                *(status.value for status in statuses),
            )
        )
        return sorted((pause_of(row) for row in rows), key=by_seq)

    async def list_pending(
        self, root_execution_id: str, ids: Sequence[str] | None = None
    ) -> list[PendingPause]:
        if ids is None:  # one statement: the rows, in the order the ids would be read
            rows = await self._driver.read(_all(_PENDING_IN_ORDER, root_execution_id))
            return [pending_of(row, root_execution_id) for row in rows]
        full = await self._read_in(
            f"SELECT {PENDING_COLUMNS} FROM pauses WHERE root_execution_id = ? AND pause_id IN",
            root_execution_id,
            ids,
        )
        read = {str(row[0]): pending_of(row, root_execution_id) for row in full}
        return [read[pause_id] for pause_id in ids]

    async def pending_ids(self, root_execution_id: str) -> list[str]:
        rows = await self._driver.read(_all(PENDING_IDS, root_execution_id))
        return [str(row[0]) for row in rows]

    async def list_waiting(self, query: WaitingQuery) -> list[WaitingPause]:
        columns = qualified(PENDING_COLUMNS, "p")
        select = (
            f"SELECT {columns}, p.root_execution_id, e.workflow, e.thread_id, e.owner_id, "
            "p.asked_at, p.seq, e.input_json, p.expires_at, p.ladder_step, p.next_step_at, "
            "p.claimed_by, p.claimed_until"
        )
        order = "ORDER BY p.asked_at, p.root_execution_id, p.seq LIMIT ?"
        width = _PENDING_WIDTH
        parts = _waiting_parts(query, keyset=True)
        if len(parts) == 1:
            [(found, params)] = parts
            text, values = f"{select} {found} {order}", [*params, query.limit]
        else:
            # Each part's first page, then theirs merged: the order by the columns' places.
            text = " UNION ".join(
                f"SELECT * FROM ({select} {found} {order}) AS part{place}"
                for place, (found, _) in enumerate(parts)
            )
            text += f" ORDER BY {width + 5}, {width + 1}, {width + 6} LIMIT ?"
            values = [value for _, params in parts for value in (*params, query.limit)]
            values.append(query.limit)
        rows = await self._driver.read(_all(text, *values))
        return [
            WaitingPause(
                pause=pending_of(row, str(row[width])),
                root_execution_id=str(row[width]),
                workflow=str(row[width + 1]),
                thread_id=str(row[width + 2]),
                owner_id=str(row[width + 3]),
                asked_at=from_micros(int(row[width + 4])),
                seq=int(row[width + 5]),
                input_json=None if row[width + 6] is None else str(row[width + 6]),
                expires_at=None if row[width + 7] is None else from_micros(int(row[width + 7])),
                ladder_step=int(row[width + 8]),
                next_step_at=None if row[width + 9] is None else from_micros(int(row[width + 9])),
                claimed_by=None if row[width + 10] is None else str(row[width + 10]),
                claimed_until=None
                if row[width + 11] is None
                else from_micros(int(row[width + 11])),
            )
            for row in rows
        ]

    async def count_waiting(self, query: WaitingQuery) -> int:
        parts = _waiting_parts(query, keyset=False)
        values = [value for _, params in parts for value in params]
        if len(parts) == 1:
            text = f"SELECT COUNT(*) {parts[0][0]}"
        else:  # a question both the owner's and naming the voter counts once
            each = " UNION ".join(f"SELECT p.tenant_id, p.pause_id {found}" for found, _ in parts)
            text = f"SELECT COUNT(*) FROM ({each}) AS counted"
        row = await self._driver.read(_one(text, *values))
        return 0 if row is None else int(row[0])

    async def waiting_total(self) -> int:
        row = await self._driver.read(_one("SELECT COUNT(*) FROM pauses WHERE status = 'pending'"))
        return 0 if row is None else int(row[0])

    async def find_due_withdrawals(self, root_execution_id: str) -> list[PauseRecord]:
        rows = await self._driver.read(
            _all(
                f"SELECT {PAUSE_COLUMNS} FROM pauses WHERE root_execution_id = ? "
                "AND withdrawal = 'due' ORDER BY seq",
                root_execution_id,
            )
        )
        return [pause_of(row) for row in rows]

    async def delete_resolved_before(self, cutoff: datetime) -> int:
        deleted: int = await self._write(DeleteResolvedPauses(cutoff))
        return deleted


class SqlExecutionRecordRepository(_Repository):
    """The audit trail (one row per pause, written once) and the decision log."""

    async def save_pause_answer(
        self, tenant_id: str, root_execution_id: str, answer: PauseAnswerRecord
    ) -> None:
        await self._write(SavePauseAnswer(tenant_id, root_execution_id, answer))

    async def find_pause_answers_by_tenant_id_and_root_execution_id(
        self, tenant_id: str, root_execution_id: str
    ) -> list[PauseAnswerRecord]:
        # A question's votes come with its entry, in the one read: a row per vote (or one
        # with no vote), in the order asked, then cast.
        rows = await self._driver.read(
            _all(
                "SELECT a.entry_json, v.entry_json FROM pause_answers a "
                "LEFT JOIN pause_votes v ON v.tenant_id = a.tenant_id "
                "AND v.root_execution_id = a.root_execution_id AND v.seq = a.seq "
                "WHERE a.tenant_id = ? AND a.root_execution_id = ? "
                "ORDER BY a.seq, v.place",
                tenant_id,
                root_execution_id,
            )
        )
        entries: dict[str, PauseAnswerRecord] = {}
        votes: dict[str, list[PauseVote]] = {}
        for entry_json, vote_json in rows:
            entries.setdefault(entry_json, PauseAnswerRecord.model_validate_json(entry_json))
            if vote_json is not None:
                votes.setdefault(entry_json, []).append(PauseVote.model_validate_json(vote_json))
        return [
            entry.model_copy(update={"votes": tuple(votes[key])}) if key in votes else entry
            for key, entry in entries.items()
        ]

    async def decision_log(
        self, tenant_id: str, *, after: int = 0, since: datetime | None = None, limit: int = 500
    ) -> list[LoggedDecision]:
        rows = await self._driver.read(
            _all(
                "SELECT tenant_id, seq, previous, digest, entry_json FROM decision_log "
                "WHERE tenant_id = ? AND seq > ? AND at >= ? ORDER BY seq LIMIT ?",
                tenant_id,
                after,
                0 if since is None else to_micros(since),
                limit,
            )
        )
        return [logged(row) for row in rows]

    async def decision_chain(self, tenant_id: str) -> DecisionChain | None:
        row = await self._driver.read(
            _one(
                "SELECT seq, head, cut_seq, cut_digest FROM decision_chains WHERE tenant_id = ?",
                tenant_id,
            )
        )
        if row is None:
            return None
        return DecisionChain(
            tenant_id=tenant_id,
            seq=int(row[0]),
            head=str(row[1]),
            cut_seq=int(row[2]),
            cut_digest=None if row[3] is None else str(row[3]),
        )

    async def decision_tenants(self) -> list[str]:
        rows = await self._driver.read(
            _all("SELECT tenant_id FROM decision_chains ORDER BY tenant_id")
        )
        return [str(row[0]) for row in rows]


class SqlBudgetLedgerRepository(_Repository):
    """The budgets' ledger: one row per counted model call."""

    async def total(self, root_execution_id: str) -> Usage:
        row = await self._driver.read(
            _one(
                "SELECT COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0), "
                "COALESCE(SUM(cost), 0.0), COALESCE(SUM(calls), 0) FROM budget_ledger "
                "WHERE root_execution_id = ?",
                root_execution_id,
            )
        )
        return _usage(row)

    async def entries(self, root_execution_id: str) -> list[LedgerEntry]:
        rows = await self._driver.read(
            _all(
                "SELECT execution_id, caller, input_tokens, output_tokens, cost, calls, at "
                "FROM budget_ledger WHERE root_execution_id = ? ORDER BY seq",
                root_execution_id,
            )
        )
        return [
            LedgerEntry(
                execution_id=str(row[0]),
                caller=str(row[1]),
                usage=_usage(row[2:6]),
                at=from_micros(int(row[6])),
            )
            for row in rows
        ]
