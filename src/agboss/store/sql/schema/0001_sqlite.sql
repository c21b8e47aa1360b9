CREATE TABLE IF NOT EXISTS threads (
    tenant_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, thread_id)
);
CREATE TABLE IF NOT EXISTS executions (
    execution_id TEXT PRIMARY KEY,
    root_execution_id TEXT NOT NULL,
    parent_execution_id TEXT,
    tenant_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    workflow TEXT NOT NULL,
    workflow_version TEXT NOT NULL,
    status TEXT NOT NULL,
    input_json TEXT NOT NULL,
    output_json TEXT,
    error BLOB,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost REAL NOT NULL DEFAULT 0,
    model_calls INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS executions_by_root ON executions (root_execution_id);
CREATE INDEX IF NOT EXISTS executions_by_parent ON executions (parent_execution_id);
CREATE INDEX IF NOT EXISTS executions_by_thread ON executions (tenant_id, thread_id);
CREATE INDEX IF NOT EXISTS executions_running ON executions (status)
    WHERE status IN ('running', 'paused');
CREATE TABLE IF NOT EXISTS steps (
    execution_id TEXT NOT NULL,
    step_key TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    result_json TEXT NOT NULL,
    record_json TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (execution_id, step_key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS steps_by_seq ON steps (execution_id, seq);
CREATE TABLE IF NOT EXISTS leases (
    root_execution_id TEXT PRIMARY KEY,
    holder TEXT,
    epoch INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS pauses (
    pause_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    step_key TEXT NOT NULL,
    root_execution_id TEXT NOT NULL,
    execution_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    status TEXT NOT NULL,
    resolution TEXT,
    is_sent INTEGER NOT NULL DEFAULT 0,
    answered_by TEXT NOT NULL,
    channel TEXT NOT NULL,
    agent TEXT NOT NULL,
    ask_json TEXT NOT NULL,
    step_json TEXT NOT NULL,
    answer_json TEXT,
    asked_at INTEGER NOT NULL,
    resolved_at INTEGER,
    branch_path TEXT NOT NULL DEFAULT '',
    item_index INTEGER,
    PRIMARY KEY (tenant_id, pause_id)
);
CREATE UNIQUE INDEX IF NOT EXISTS pauses_by_step ON pauses (execution_id, step_key);
CREATE INDEX IF NOT EXISTS pauses_by_root ON pauses (root_execution_id, status);
CREATE INDEX IF NOT EXISTS pauses_resolved_at ON pauses (resolved_at)
    WHERE status IN ('taken', 'cancelled');
CREATE TABLE IF NOT EXISTS branches (
    execution_id TEXT NOT NULL,
    place TEXT NOT NULL,
    status TEXT NOT NULL,
    output_json TEXT,
    error BLOB,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (execution_id, place)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS launches (
    execution_id TEXT NOT NULL,
    place TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    PRIMARY KEY (execution_id, place)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS budget_ledger (
    root_execution_id TEXT NOT NULL,
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    execution_id TEXT NOT NULL,
    caller TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost REAL NOT NULL,
    calls INTEGER NOT NULL,
    at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS budget_ledger_by_root ON budget_ledger (root_execution_id);
CREATE TABLE IF NOT EXISTS pause_answers (
    tenant_id TEXT NOT NULL,
    root_execution_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    step_key TEXT NOT NULL,
    execution_id TEXT NOT NULL,
    entry_json TEXT NOT NULL,
    PRIMARY KEY (tenant_id, root_execution_id, execution_id, step_key)
);
