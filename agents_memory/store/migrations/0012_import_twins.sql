-- 0012: a captured turn that an import already brought in is not stored twice.
--
-- Seed A captured the same transcripts we do, under its own keys, so importing seed A and then
-- backfilling those transcripts would double every turn. Capture skips a turn whose platform,
-- session, role and text (runs of whitespace and the ends aside) an imported row already holds.
-- The index is partial: without imports it is empty and the check costs one empty probe.
CREATE INDEX IF NOT EXISTS memory_import_twin ON memory
    (user_id, agent_platform, session_id, role,
     md5(btrim(regexp_replace(message, '\s+', ' ', 'g'))))
    WHERE source = 'import';
