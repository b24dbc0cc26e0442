-- 0003: Cold Path bookkeeping — per-row retry cooldowns, the last run of every job, and LLM
-- calls refused by the daily budget.

-- A row whose Cold Path step failed (cold_error) is not claimed again before this moment:
-- 5 minutes for active rows, 1 hour for archived ones (seed A's cooldowns).
ALTER TABLE memory ADD COLUMN IF NOT EXISTS cold_next_at TIMESTAMPTZ;

-- One row per job: what its last run did, and running totals (for `doctor` / `status`).
CREATE TABLE IF NOT EXISTS coldpath_runs (
    job             TEXT PRIMARY KEY,
    ran_at          TIMESTAMPTZ NOT NULL,
    device_name     TEXT,
    processed       INTEGER NOT NULL DEFAULT 0,
    failed          INTEGER NOT NULL DEFAULT 0,
    skipped         INTEGER NOT NULL DEFAULT 0,
    llm_calls       INTEGER NOT NULL DEFAULT 0,
    heuristic       INTEGER NOT NULL DEFAULT 0,
    notes           TEXT[] NOT NULL DEFAULT '{}',
    worked_at       TIMESTAMPTZ,
    total_processed BIGINT NOT NULL DEFAULT 0,
    total_failed    BIGINT NOT NULL DEFAULT 0
);

-- Calls not made because the role's daily token budget was spent.
ALTER TABLE llm_usage ADD COLUMN IF NOT EXISTS refused INTEGER NOT NULL DEFAULT 0;
