-- 0010: task pins (multi-agent hand-off) and fact slots.

-- Task pins: an append-only log of events. A pin is the history of one `pin_id` (the id of
-- its `create` event); its state is its newest event. Never part of `memory`: search, the
-- brief's turns and the Cold Path never see them.
CREATE TABLE IF NOT EXISTS task_pin_events (
    id          BIGSERIAL PRIMARY KEY,
    user_id     BIGINT NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    pin_id      BIGINT NOT NULL,
    event       TEXT NOT NULL CHECK (event IN ('create', 'update')),
    status      TEXT NOT NULL CHECK (status IN ('pending', 'in_progress', 'done', 'failed')),
    title       TEXT NOT NULL,
    note        TEXT,
    from_agent  TEXT,
    to_agent    TEXT NOT NULL,
    project     TEXT,
    payload     JSONB,
    device_name TEXT,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS task_pin_events_pin ON task_pin_events (pin_id, id DESC);
CREATE INDEX IF NOT EXISTS task_pin_events_to ON task_pin_events (user_id, to_agent, id DESC);

-- Fact slots: a pinned memory may fill a named slot (`db.staging.port`). A new value
-- supersedes the live one (which stays, archived, as history); a value may expire.
ALTER TABLE memory ADD COLUMN IF NOT EXISTS slot TEXT;
ALTER TABLE memory ADD COLUMN IF NOT EXISTS expires_at TIMESTAMPTZ;
ALTER TABLE memory ADD COLUMN IF NOT EXISTS superseded_by BIGINT
    REFERENCES memory (id) ON DELETE SET NULL;
ALTER TABLE memory ADD COLUMN IF NOT EXISTS superseded_at TIMESTAMPTZ;
CREATE UNIQUE INDEX IF NOT EXISTS memory_live_slot ON memory (user_id, slot)
    WHERE slot IS NOT NULL AND superseded_by IS NULL AND is_active;
