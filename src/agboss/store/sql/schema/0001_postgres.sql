CREATE TABLE IF NOT EXISTS threads (
    tenant_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, thread_id)
);
CREATE TABLE IF NOT EXISTS executions (
    execution_id TEXT COLLATE "C" PRIMARY KEY,
    root_execution_id TEXT COLLATE "C" NOT NULL,
    parent_execution_id TEXT COLLATE "C",
    tenant_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    workflow TEXT NOT NULL,
    workflow_version TEXT NOT NULL,
    status TEXT NOT NULL,
    input_json TEXT NOT NULL,
    output_json TEXT,
    error BYTEA,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    input_tokens BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    cost DOUBLE PRECISION NOT NULL DEFAULT 0,
    model_calls BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS executions_by_root ON executions (root_execution_id);
CREATE INDEX IF NOT EXISTS executions_by_parent ON executions (parent_execution_id);
CREATE INDEX IF NOT EXISTS executions_by_thread ON executions (tenant_id, thread_id);
CREATE INDEX IF NOT EXISTS executions_running ON executions (status)
    WHERE status IN ('running', 'paused');
CREATE TABLE IF NOT EXISTS steps (
    execution_id TEXT COLLATE "C" NOT NULL,
    step_key TEXT COLLATE "C" NOT NULL,
    seq BIGSERIAL,
    kind TEXT NOT NULL,
    result_json TEXT NOT NULL,
    record_json TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (execution_id, step_key)
);
CREATE TABLE IF NOT EXISTS leases (
    root_execution_id TEXT COLLATE "C" PRIMARY KEY,
    holder TEXT,
    epoch BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS pauses (
    pause_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    step_key TEXT COLLATE "C" NOT NULL,
    root_execution_id TEXT COLLATE "C" NOT NULL,
    execution_id TEXT COLLATE "C" NOT NULL,
    seq BIGSERIAL,
    status TEXT NOT NULL,
    resolution TEXT,
    is_sent BOOLEAN NOT NULL DEFAULT FALSE,
    answered_by TEXT NOT NULL,
    channel TEXT NOT NULL,
    agent TEXT NOT NULL,
    ask_json TEXT NOT NULL,
    step_json TEXT NOT NULL,
    answer_json TEXT,
    asked_at BIGINT NOT NULL,
    resolved_at BIGINT,
    branch_path TEXT COLLATE "C" NOT NULL DEFAULT '',
    item_index INTEGER,
    PRIMARY KEY (tenant_id, pause_id)
);
CREATE UNIQUE INDEX IF NOT EXISTS pauses_by_step ON pauses (execution_id, step_key);
CREATE INDEX IF NOT EXISTS pauses_by_root ON pauses (root_execution_id, status, branch_path);
CREATE INDEX IF NOT EXISTS pauses_resolved_at ON pauses (resolved_at)
    WHERE status IN ('taken', 'cancelled');
CREATE TABLE IF NOT EXISTS branches (
    execution_id TEXT COLLATE "C" NOT NULL,
    place TEXT COLLATE "C" NOT NULL,
    status TEXT NOT NULL,
    output_json TEXT,
    error BYTEA,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (execution_id, place)
);
CREATE TABLE IF NOT EXISTS launches (
    execution_id TEXT COLLATE "C" NOT NULL,
    place TEXT COLLATE "C" NOT NULL,
    started_at BIGINT NOT NULL,
    PRIMARY KEY (execution_id, place)
);
CREATE TABLE IF NOT EXISTS budget_ledger (
    seq BIGSERIAL PRIMARY KEY,
    root_execution_id TEXT COLLATE "C" NOT NULL,
    execution_id TEXT NOT NULL,
    caller TEXT NOT NULL,
    input_tokens BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    cost DOUBLE PRECISION NOT NULL,
    calls BIGINT NOT NULL,
    at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS budget_ledger_by_root ON budget_ledger (root_execution_id);
CREATE TABLE IF NOT EXISTS pause_answers (
    tenant_id TEXT NOT NULL,
    root_execution_id TEXT COLLATE "C" NOT NULL,
    seq BIGINT NOT NULL,
    step_key TEXT NOT NULL,
    execution_id TEXT NOT NULL,
    entry_json TEXT NOT NULL,
    PRIMARY KEY (tenant_id, root_execution_id, execution_id, step_key)
);
