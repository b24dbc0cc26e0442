-- 0008: records kept after their invalid UTF-8 was replaced by U+FFFD, per transcript file
-- (counted apart from the records that had to be skipped, which stay in "issues").
ALTER TABLE capture_cursors ADD COLUMN IF NOT EXISTS repaired BIGINT NOT NULL DEFAULT 0;
