"""The schema's versions: numbered steps, applied in order, once, in one transaction.

The version a store is at is in ``agboss_schema``. A plain start reads it and changes nothing
(no DDL); `migrate` runs under a lock that makes instances starting together wait for each
other (the driver's `migration_guard`: PostgreSQL's advisory lock, taken before the migration's
transaction begins so that the transaction sees what the instance before it made; SQLite's write
lock of ``BEGIN IMMEDIATE``), reads the version again under it, and applies the missing steps.

A step is never edited once released: step 1 is the schema agboss 0.1.0 created
(``schema/0001_<dialect>.sql``, frozen, with ``IF NOT EXISTS`` so that a 0.1.0 database, which
has no version table, takes it as a no-op).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from importlib import resources
from typing import Any, TypeAlias

from agboss.errors import ExecutionFailedError, StoreSchemaError
from agboss.records import pause_ref
from agboss.store._failures import encode_failure
from agboss.store.sql._dialect import Dialect, Returns, Sql

__all__ = ["LATEST_VERSION", "STEPS", "migration", "schema_version"]


def _frozen(dialect: Dialect) -> list[Sql]:
    text = resources.files("agboss.store.sql").joinpath(f"schema/0001_{dialect.name}.sql")
    script = text.read_text(encoding="utf-8")
    return [Sql(part.strip()) for part in script.split(";") if part.strip()]


_OLD_FAILURE = encode_failure(
    ExecutionFailedError(
        "this failure was stored by agboss 0.1.0 as a pickle, which is never read back",
        hint="see the application's logs of that time for the original error",
    )
)


def _data_not_pickles(dialect: Dialect) -> list[Sql]:
    """Failures as JSON, not pickles; pauses owe their channels a withdraw durably; a lease
    knows who held it before; the indexes the statements read by."""
    statements = []
    for table in ("executions", "branches"):
        statements += [
            Sql(f"ALTER TABLE {table} ADD COLUMN error_json TEXT"),
            Sql(f"UPDATE {table} SET error_json = ? WHERE error IS NOT NULL", (_OLD_FAILURE,)),
            Sql(f"ALTER TABLE {table} DROP COLUMN error"),
        ]
    statements += [
        Sql("ALTER TABLE pauses ADD COLUMN withdrawal TEXT"),
        Sql("ALTER TABLE leases ADD COLUMN previous_holder TEXT"),
        Sql("DROP INDEX IF EXISTS pauses_by_root"),
        Sql("CREATE INDEX pauses_by_root ON pauses (root_execution_id, status, branch_path)"),
        Sql("CREATE INDEX pauses_by_seq ON pauses (root_execution_id, seq)"),
        Sql(
            "CREATE INDEX pauses_withdrawal_due ON pauses (root_execution_id) "
            "WHERE withdrawal = 'due'"
        ),
        # What the sweep looks for, found by a search, not a scan: roots running, answers
        # nobody moved (plain indexes: a partial one is not used for `status = 'running'`).
        Sql("CREATE INDEX executions_by_status ON executions (status, parent_execution_id)"),
        Sql("CREATE INDEX pauses_by_status ON pauses (status, root_execution_id)"),
        Sql("CREATE INDEX IF NOT EXISTS steps_by_seq ON steps (execution_id, seq)"),
        # 0.1.0 took a pause apart from its step's journal row: one left between the two is
        # taken now (a step and its pause are one commit from here on).
        Sql(
            "UPDATE pauses SET status = 'taken' WHERE status = 'resolved' AND EXISTS ("
            "SELECT 1 FROM steps WHERE steps.execution_id = pauses.execution_id "
            "AND steps.step_key = pauses.step_key)"
        ),
    ]
    if dialect.name == "postgres":
        statements += [
            # Steps and pauses are numbered per execution and per tree by the statements.
            Sql("ALTER TABLE steps ALTER COLUMN seq DROP DEFAULT"),
            Sql("ALTER TABLE pauses ALTER COLUMN seq DROP DEFAULT"),
            Sql("DROP SEQUENCE IF EXISTS steps_seq_seq"),
            Sql("DROP SEQUENCE IF EXISTS pauses_seq_seq"),
            # A fenced transaction's first statement: holds the lease row (FOR SHARE, so a
            # takeover waits for the transaction) or aborts it with SQLSTATE AB001.
            Sql(
                "CREATE OR REPLACE FUNCTION agboss_fence(root TEXT, who TEXT, expected BIGINT) "
                "RETURNS void LANGUAGE plpgsql AS $$ BEGIN "
                "PERFORM 1 FROM leases WHERE root_execution_id = root AND holder = who "
                "AND epoch = expected FOR SHARE; "
                "IF NOT FOUND THEN RAISE EXCEPTION 'agboss: the lease was lost' "
                "USING ERRCODE = 'AB001'; END IF; END $$"
            ),
        ]
    return statements


def _pending_in_order(dialect: Dialect) -> list[Sql]:
    """A tree's waiting pauses read in the order results list them, from the index alone: a
    call that moves a tree lists them all, so among thousands it must not sort them."""
    return [
        Sql(
            "CREATE INDEX pauses_pending ON pauses "
            "(root_execution_id, (answered_by = 'channel'), seq, pause_id) "
            "WHERE status = 'pending'"
        )
    ]


def _pii_tokens(dialect: Dialect) -> list[Sql]:
    """The tokens PII rules issue in a tree, so that one survives a pause and a restart."""
    return [
        Sql(
            "CREATE TABLE pii_tokens (root_execution_id TEXT NOT NULL, token TEXT NOT NULL, "
            "value TEXT NOT NULL, PRIMARY KEY (root_execution_id, token))"
        )
    ]


def _inbox(dialect: Dialect) -> list[Sql]:
    """A tenant's waiting pauses listed oldest first by keyset, from the index alone."""
    return [
        Sql(
            "CREATE INDEX pauses_inbox ON pauses (tenant_id, asked_at, root_execution_id, seq) "
            "WHERE status = 'pending'"
        )
    ]


def _lease_grants(dialect: Dialect) -> list[Sql]:
    """Each grant of a lease is told apart (``grant_id``), so that a write in the transaction
    that takes it can be made only if it did — a tool's intent with the answer that runs it."""
    return [Sql("ALTER TABLE leases ADD COLUMN grant_id TEXT")]


def _failed(dialect: Dialect) -> list[Sql]:
    """A tenant's failed trees listed newest first by keyset (`App.failed`), from an index."""
    return [
        Sql(
            "CREATE INDEX executions_failed ON executions (tenant_id, updated_at, execution_id) "
            "WHERE status = 'failed' AND parent_execution_id IS NULL"
        )
    ]


def _retries(dialect: Dialect) -> list[Sql]:
    """`App.retry`: a tree's generations — a failed tree reopened in place, its rows and its
    questions told apart by the retry they were written in — and the retries' history.

    A question a failure withdrew is asked again under a new id in the next generation: a
    step's pause is unique per generation, and so is its audit entry (the table is rebuilt
    to key it so)."""
    keyed = ' COLLATE "C"' if dialect.name == "postgres" else ""
    columns = "tenant_id, root_execution_id, seq, step_key, execution_id, entry_json"
    return [
        *(
            Sql(f"ALTER TABLE {table} ADD COLUMN generation INTEGER NOT NULL DEFAULT 0")
            for table in ("executions", "branches", "pauses")
        ),
        Sql("DROP INDEX pauses_by_step"),
        Sql("CREATE UNIQUE INDEX pauses_by_step ON pauses (execution_id, step_key, generation)"),
        Sql(
            "CREATE TABLE pause_answers_by_generation (tenant_id TEXT NOT NULL, "
            f"root_execution_id TEXT{keyed} NOT NULL, seq BIGINT NOT NULL, "
            "step_key TEXT NOT NULL, execution_id TEXT NOT NULL, entry_json TEXT NOT NULL, "
            "generation INTEGER NOT NULL DEFAULT 0, PRIMARY KEY "
            "(tenant_id, root_execution_id, execution_id, step_key, generation))"
        ),
        Sql(
            f"INSERT INTO pause_answers_by_generation ({columns}) "
            f"SELECT {columns} FROM pause_answers"
        ),
        Sql("DROP TABLE pause_answers"),
        Sql("ALTER TABLE pause_answers_by_generation RENAME TO pause_answers"),
        Sql(
            f"CREATE TABLE retries (root_execution_id TEXT{keyed} NOT NULL, "
            "generation INTEGER NOT NULL, retried_at BIGINT NOT NULL, retried_by TEXT, "
            "error_json TEXT, PRIMARY KEY (root_execution_id, generation))"
        ),
    ]


def _wakes(dialect: Dialect) -> list[Sql]:
    """A tree that rests until a time (a retry's wait): when it wakes, and an index that finds
    the roots that are due without a scan."""
    return [
        Sql("ALTER TABLE executions ADD COLUMN wake_at BIGINT"),
        Sql(
            "CREATE INDEX executions_wake ON executions (wake_at) "
            "WHERE wake_at IS NOT NULL AND parent_execution_id IS NULL"
        ),
    ]


def _sent_references(dialect: Dialect) -> list[Sql]:
    """What a channel keeps of a question it posted (a Slack message's id), so that its
    ``withdraw`` can take that question back."""
    return [Sql("ALTER TABLE pauses ADD COLUMN sent_reference TEXT")]


def _deadlines(dialect: Dialect) -> list[Sql]:
    """A question's deadline (``expires_after``), stored with it so that any instance's sweep
    applies it after a restart."""
    return [Sql("ALTER TABLE pauses ADD COLUMN expires_at BIGINT")]


def _ladders(dialect: Dialect) -> list[Sql]:
    """Where a question is on its role's ladder: how many steps happened, and when the next
    is due, stored with it so that each step happens once, on any instance."""
    return [
        Sql("ALTER TABLE pauses ADD COLUMN ladder_step INTEGER NOT NULL DEFAULT 0"),
        Sql("ALTER TABLE pauses ADD COLUMN next_step_at BIGINT"),
    ]


def _escalations(dialect: Dialect) -> list[Sql]:
    """A question escalated by its role's ladder is asked anew, under a new id, for the same
    step: pauses and their audit entries are keyed by the escalation too."""
    keyed = ' COLLATE "C"' if dialect.name == "postgres" else ""
    columns = "tenant_id, root_execution_id, seq, step_key, execution_id, entry_json, generation"
    return [
        Sql("ALTER TABLE pauses ADD COLUMN escalation INTEGER NOT NULL DEFAULT 0"),
        Sql("DROP INDEX pauses_by_step"),
        Sql(
            "CREATE UNIQUE INDEX pauses_by_step "
            "ON pauses (execution_id, step_key, generation, escalation)"
        ),
        Sql(
            "CREATE TABLE pause_answers_by_escalation (tenant_id TEXT NOT NULL, "
            f"root_execution_id TEXT{keyed} NOT NULL, seq BIGINT NOT NULL, "
            "step_key TEXT NOT NULL, execution_id TEXT NOT NULL, entry_json TEXT NOT NULL, "
            "generation INTEGER NOT NULL DEFAULT 0, escalation INTEGER NOT NULL DEFAULT 0, "
            "PRIMARY KEY (tenant_id, root_execution_id, execution_id, step_key, generation, "
            "escalation))"
        ),
        Sql(
            f"INSERT INTO pause_answers_by_escalation ({columns}) "
            f"SELECT {columns} FROM pause_answers"
        ),
        Sql("DROP TABLE pause_answers"),
        Sql("ALTER TABLE pause_answers_by_escalation RENAME TO pause_answers"),
    ]


def _owners_waiting(dialect: Dialect) -> list[Sql]:
    """An owner's waiting questions found from the owner's trees that are not over (a tree
    that ends closes its questions), not by walking every question of the tenant: the inbox's
    first page and its count stay flat in other people's questions."""
    return [
        Sql(
            "CREATE INDEX executions_open_by_owner ON executions (tenant_id, owner_id) "
            "WHERE status IN ('running', 'paused', 'waiting')"
        )
    ]


def _standing_decisions(dialect: Dialect) -> list[Sql]:
    """Tools' calls approved ahead of time (`App.allow`), within a thread, an owner's threads
    or a tenant, until revoked; an ask reads the ones that stand, by tenant."""
    return [
        Sql(
            "CREATE TABLE standing_decisions (tenant_id TEXT NOT NULL, decision_id TEXT NOT NULL, "
            "tool TEXT, role TEXT, scope TEXT NOT NULL, thread_id TEXT, owner_id TEXT, "
            "granted_by TEXT NOT NULL, reason TEXT, granted_at BIGINT NOT NULL, "
            "until_at BIGINT, revoked_at BIGINT, revoked_by TEXT, "
            "PRIMARY KEY (tenant_id, decision_id))"
        ),
        Sql(
            "CREATE INDEX standing_decisions_standing ON standing_decisions "
            "(tenant_id, granted_at) WHERE revoked_at IS NULL"
        ),
    ]


def _votes(dialect: Dialect) -> list[Sql]:
    """Several approvers on one question: its quorum and the votes so far, kept on the pause
    (read with it, changed under its row's lock), and each vote as its own audit entry, kept
    like the pause's (keyed by the question's place in its tree, and by the voter: a voter votes
    once)."""
    keyed = ' COLLATE "C"' if dialect.name == "postgres" else ""
    return [
        Sql("ALTER TABLE pauses ADD COLUMN votes_json TEXT"),
        Sql(
            "CREATE TABLE pause_votes (tenant_id TEXT NOT NULL, "
            f"root_execution_id TEXT{keyed} NOT NULL, seq BIGINT NOT NULL, "
            "voter TEXT NOT NULL, place INTEGER NOT NULL, voted_at BIGINT NOT NULL, "
            "entry_json TEXT NOT NULL, PRIMARY KEY (tenant_id, root_execution_id, seq, voter))"
        ),
    ]


def _voters(dialect: Dialect) -> list[Sql]:
    """Who may vote on a thread-owner role's question, a row each (`Quorum(of=...)`): a voter's
    inbox finds the questions that name them, on anyone's thread, by an index rather than by
    reading every question's votes; a question that waits from before gets its rows from them."""
    if dialect.name == "postgres":
        named = (
            "FROM pauses p CROSS JOIN LATERAL jsonb_array_elements_text(CASE WHEN "
            "jsonb_typeof(p.votes_json::jsonb -> 'eligible') = 'array' "
            "THEN p.votes_json::jsonb -> 'eligible' ELSE '[]'::jsonb END) AS v(voter)"
        )
        voter = "v.voter"
    else:
        named = "FROM pauses p, json_each(p.votes_json, '$.eligible') v"
        voter = "v.value"
        named += " WHERE v.type = 'text'"
    where = " AND " if dialect.name == "sqlite" else " WHERE "
    return [
        Sql(
            "CREATE TABLE pause_voters (tenant_id TEXT NOT NULL, voter TEXT NOT NULL, "
            "pause_id TEXT NOT NULL, PRIMARY KEY (tenant_id, voter, pause_id))"
        ),
        Sql(
            f"INSERT INTO pause_voters (tenant_id, voter, pause_id) "
            f"SELECT DISTINCT p.tenant_id, {voter}, p.pause_id {named}{where}"
            "p.status = 'pending' AND p.answered_by = 'thread-owner' "
            "AND p.votes_json IS NOT NULL"
        ),
    ]


def _pause_refs(dialect: Dialect) -> Generator[Sql, Any, None]:
    """A pause's reference (`pause_ref`: a one-way digest of its id), kept and indexed, so that
    a door maps what a screen, a Slack button or a link carried back to the pause: each pause
    kept from before gets its own, computed here (SQLite has no SHA-256 of its own)."""
    yield Sql("ALTER TABLE pauses ADD COLUMN pause_ref TEXT")
    rows = yield Sql("SELECT tenant_id, pause_id FROM pauses", (), Returns.ALL)
    for tenant_id, pause_id in rows or ():
        yield Sql(
            "UPDATE pauses SET pause_ref = ? WHERE tenant_id = ? AND pause_id = ?",
            (pause_ref(str(pause_id)), tenant_id, pause_id),
        )
    yield Sql("CREATE INDEX pauses_by_ref ON pauses (tenant_id, pause_ref)")


def _granting_order(dialect: Dialect) -> list[Sql]:
    """Standing decisions in the order they were granted, even at one instant (a test clock,
    a batch): each is numbered in its tenant as it is granted; those granted before keep
    their order by time alone (numbered 0)."""
    return [
        Sql("ALTER TABLE standing_decisions ADD COLUMN granted_seq BIGINT NOT NULL DEFAULT 0"),
        Sql("DROP INDEX standing_decisions_standing"),
        Sql(
            "CREATE INDEX standing_decisions_standing ON standing_decisions "
            "(tenant_id, granted_at, granted_seq) WHERE revoked_at IS NULL"
        ),
    ]


def _resting_steps(dialect: Dialect) -> list[Sql]:
    """A tree's wake-up apart from its questions' timers: when its earliest resting step (a
    retry's wait) is due — so that a pass woken by a question's deadline or ladder enters only
    that question's branch. A wake-up stored before is taken for a resting step's (its pass
    re-enters every branch, as it did then)."""
    return [
        Sql("ALTER TABLE executions ADD COLUMN resting_until BIGINT"),
        Sql("UPDATE executions SET resting_until = wake_at WHERE wake_at IS NOT NULL"),
    ]


def _resting_paths(dialect: Dialect) -> list[Sql]:
    """The branch paths of a resting tree's resting steps, kept with their wake-up — so that
    a pass woken by a resting step enters only their branches. ``NULL`` (a tree that rested
    before): not known, its pass re-enters every branch, as it did then."""
    return [Sql("ALTER TABLE executions ADD COLUMN resting_paths TEXT")]


def _fingerprints(dialect: Dialect) -> list[Sql]:
    """What each execution's journal depends on, as its build defined it when it began (its
    workflow definition's fingerprint; ``NULL`` for one begun before: not known), and each
    definition's parts by its fingerprint, so that a later build can say what it changed."""
    return [
        Sql("ALTER TABLE executions ADD COLUMN fingerprint TEXT"),
        Sql(
            "CREATE TABLE definitions (fingerprint TEXT PRIMARY KEY, workflow TEXT NOT NULL, "
            "version TEXT NOT NULL, parts TEXT NOT NULL, recorded_at BIGINT NOT NULL)"
        ),
    ]


def _instances(dialect: Dialect) -> list[Sql]:
    """The running instances and what each serves, said again with each of its sweeps (its
    time passed: taken for gone), so that a tree no running instance serves is known."""
    return [
        Sql(
            "CREATE TABLE instances (instance_id TEXT PRIMARY KEY, application TEXT NOT NULL, "
            "served TEXT NOT NULL, started_at BIGINT NOT NULL, seen_until BIGINT NOT NULL)"
        ),
    ]


def _continuations(dialect: Dialect) -> list[Sql]:
    """The moves of waiting trees to a new build by their workflow's continuation, each with
    the calls it mapped: the audit trail of a tree that runs under another build than the one
    it began on."""
    keyed = ' COLLATE "C"' if dialect.name == "postgres" else ""
    return [
        Sql(
            f"CREATE TABLE continuations (root_execution_id TEXT{keyed} NOT NULL, "
            "seq INTEGER NOT NULL, continued_at BIGINT NOT NULL, entry_json TEXT NOT NULL, "
            "PRIMARY KEY (root_execution_id, seq))"
        ),
    ]


def _decision_log(dialect: Dialect) -> list[Sql]:
    """Each tenant's decision log, chained by hash (`agboss.store.sql._decision_log`), and
    its head: the last entry's place and digest, and where retention cut the chain."""
    if dialect.name == "postgres":
        entry_id = "entry_id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"
        functions = [
            Sql(
                "CREATE OR REPLACE FUNCTION agboss_sha256(value TEXT) RETURNS TEXT "
                "LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE "
                "AS $$ SELECT encode(sha256(convert_to(value, 'UTF8')), 'hex') $$"
            )
        ]
    else:
        entry_id = "entry_id INTEGER PRIMARY KEY"  # SQLite's: each connection registers it
        functions = []
    return [
        *functions,
        Sql(
            f"CREATE TABLE decision_log ({entry_id}, tenant_id TEXT NOT NULL, "
            "source TEXT NOT NULL, seq BIGINT, previous TEXT, digest TEXT, at BIGINT NOT NULL, "
            "root_execution_id TEXT NOT NULL, entry_json TEXT NOT NULL)"
        ),
        Sql("CREATE UNIQUE INDEX decision_log_source ON decision_log (tenant_id, source)"),
        Sql("CREATE UNIQUE INDEX decision_log_chain ON decision_log (tenant_id, seq)"),
        Sql("CREATE INDEX decision_log_unsealed ON decision_log (tenant_id) WHERE seq IS NULL"),
        Sql(
            "CREATE TABLE decision_chains (tenant_id TEXT PRIMARY KEY, seq BIGINT NOT NULL, "
            "head TEXT NOT NULL, sealing BOOLEAN NOT NULL DEFAULT FALSE, "
            "cut_seq BIGINT NOT NULL DEFAULT 0, cut_digest TEXT)"
        ),
        Sql("CREATE INDEX decision_chains_sealing ON decision_chains (tenant_id) WHERE sealing"),
    ]


def _claims(dialect: Dialect) -> list[Sql]:
    """A waiting question's claim (`App.claim`): who handles it, and until when."""
    return [
        Sql("ALTER TABLE pauses ADD COLUMN claimed_by TEXT"),
        Sql("ALTER TABLE pauses ADD COLUMN claimed_until BIGINT"),
    ]


def _executions_by_status(dialect: Dialect) -> list[Sql]:
    """A tenant's execution trees listed by status, newest change first (`App.executions`),
    by keyset from an index: one by status, one across them."""
    return [
        Sql(
            "CREATE INDEX executions_roots_by_status ON executions "
            "(tenant_id, status, updated_at, execution_id) WHERE parent_execution_id IS NULL"
        ),
        Sql(
            "CREATE INDEX executions_roots ON executions (tenant_id, updated_at, execution_id) "
            "WHERE parent_execution_id IS NULL"
        ),
    ]


def _delegations(dialect: Dialect) -> list[Sql]:
    """One person's questions answered by another (`App.delegate`), within a role or a tool,
    until a date or revoked; an answer reads the ones its answerer holds, by tenant and
    delegate."""
    return [
        Sql(
            "CREATE TABLE delegations (tenant_id TEXT NOT NULL, delegation_id TEXT NOT NULL, "
            "principal TEXT NOT NULL, delegate TEXT NOT NULL, role TEXT, tool TEXT, "
            "granted_by TEXT NOT NULL, reason TEXT, granted_at BIGINT NOT NULL, "
            "until_at BIGINT, revoked_at BIGINT, revoked_by TEXT, "
            "granted_seq BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (tenant_id, delegation_id))"
        ),
        Sql(
            "CREATE INDEX delegations_held ON delegations (tenant_id, delegate, granted_at) "
            "WHERE revoked_at IS NULL"
        ),
    ]


Step: TypeAlias = Callable[[Dialect], "list[Sql] | Generator[Sql, Any, None]"]
"""A schema step: its statements, or a generator of them that reads what a statement returned
(a row's value computed in Python)."""

STEPS: tuple[Step, ...] = (
    _frozen,
    _data_not_pickles,
    _pending_in_order,
    _pii_tokens,
    _inbox,
    _lease_grants,
    _failed,
    _retries,
    _wakes,
    _sent_references,
    _deadlines,
    _ladders,
    _escalations,
    _owners_waiting,
    _standing_decisions,
    _votes,
    _voters,
    _pause_refs,
    _granting_order,
    _resting_steps,
    _resting_paths,
    _fingerprints,
    _instances,
    _continuations,
    _decision_log,
    _claims,
    _executions_by_status,
    _delegations,
)
"""Step ``n`` brings a schema from version ``n - 1`` to ``n``."""

LATEST_VERSION = len(STEPS)


def schema_version(dialect: Dialect) -> Generator[Sql, Any, int]:
    """The version a store's schema is at (0: none yet)."""
    exists = yield Sql(dialect.table_exists, ("agboss_schema",), Returns.ONE)
    if exists is None:
        return 0
    row = yield Sql("SELECT version FROM agboss_schema", (), Returns.ONE)
    return 0 if row is None else int(row[0])


def migration(dialect: Dialect) -> Generator[Sql, Any, int]:
    """Brings a schema to `LATEST_VERSION`; the version it is at.

    Raises:
        StoreSchemaError: The schema was made by a newer agboss.
    """
    version = yield from schema_version(dialect)
    if version > LATEST_VERSION:
        raise newer_schema(version)
    if version == LATEST_VERSION:
        return version
    if version == 0:
        yield Sql("CREATE TABLE IF NOT EXISTS agboss_schema (version INTEGER NOT NULL)")
        yield Sql("INSERT INTO agboss_schema (version) VALUES (0)")
    for step in STEPS[version:]:
        statements = step(dialect)
        if isinstance(statements, list):
            for statement in statements:
                _ = yield statement  # DDL: no rows (a list is not a generator: no yield from)
        else:
            yield from statements
    yield Sql("UPDATE agboss_schema SET version = ?", (LATEST_VERSION,))
    return LATEST_VERSION


def newer_schema(version: int) -> StoreSchemaError:
    """The error for a schema this agboss is too old for."""
    return StoreSchemaError(
        f"the store's schema is at version {version}, made by a newer agboss than this one "
        f"(which knows versions up to {LATEST_VERSION})",
        hint="upgrade agboss on this instance; a schema is never migrated down",
    )
