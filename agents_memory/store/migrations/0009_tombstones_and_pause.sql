-- 0008: forgetting and pausing.

-- One row per turn the owner forgot (or that was written while capture was paused): its
-- stable key and a hash of its stored text, never the text. Capture's admission refuses a
-- turn whose key is here, so a rescan or a backfill cannot bring it back.
CREATE TABLE IF NOT EXISTS tombstones (
    id             BIGSERIAL PRIMARY KEY,
    external_uuid  TEXT,
    content_sha256 TEXT NOT NULL,
    agent_platform TEXT,
    reason         TEXT NOT NULL CHECK (reason IN ('forgotten', 'paused')),
    created_at     TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX IF NOT EXISTS tombstones_key ON tombstones (external_uuid)
    WHERE external_uuid IS NOT NULL;
CREATE INDEX IF NOT EXISTS tombstones_hash ON tombstones (content_sha256);

-- A summary some of whose sources were forgotten: its text was rebuilt from what is left
-- (extractively) and the Clusterer writes it again on its next pass.
ALTER TABLE tag_summaries ADD COLUMN IF NOT EXISTS stale BOOLEAN NOT NULL DEFAULT false;

-- Capture paused on one device, for one platform ('*': every platform), until a moment
-- (NULL: until resumed).
CREATE TABLE IF NOT EXISTS capture_pauses (
    device_name TEXT NOT NULL,
    platform    TEXT NOT NULL,
    until       TIMESTAMPTZ,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (device_name, platform)
);
