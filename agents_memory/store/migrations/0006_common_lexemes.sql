-- 0006: the lexemes ANALYZE found common in memory.fts (its most-common-elements statistics),
-- with their estimated row counts. Search asks for them only in a scope bigger than its
-- sample: a word the newest rows lack may still be common in the table (topics cluster in
-- time), and must not be read through the GIN index as if it were rare. PL/pgSQL, so the
-- pg_stats view is planned once per session, not inside every search statement.
CREATE OR REPLACE FUNCTION memory_common_lexemes(min_rows float8)
RETURNS TABLE (lexeme text, est_rows float8)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN QUERY
    SELECT e.lexeme, e.freq * c.reltuples
    FROM pg_stats s
    CROSS JOIN LATERAL unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs)
        AS e(lexeme, freq)
    CROSS JOIN (SELECT greatest(reltuples, 0)::float8 AS reltuples FROM pg_class
                WHERE oid = 'memory'::regclass) c
    WHERE s.schemaname = current_schema() AND s.tablename = 'memory' AND s.attname = 'fts'
      AND e.lexeme IS NOT NULL AND e.freq * c.reltuples > min_rows;
END
$$;
