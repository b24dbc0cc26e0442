-- 0007: the words ANALYZE found common in memory.fts, kept in a table the search looks up.
--
-- A search in a big scope reads the rows of its rare words through the GIN index. A word its
-- sample (the newest rows) lacks is rare unless ANALYZE counted it among the most common
-- elements. At the default statistics target those are the 1,000 most common lexemes: in a
-- million rows, words of 300-2,000 rows were missing, read as rare, and each such word cost
-- a few thousand heap rows per search. At target 1000 (ANALYZE samples 300,000 rows) the list
-- reaches down to ~90 rows in a million (~4,900 lexemes). Reading that many from pg_stats
-- costs ~6 ms, so the Cold Path's search_stats job copies them here whenever the statistics
-- change (the search reads memory_common_lexemes() instead while this table is empty).
ALTER TABLE memory ALTER COLUMN fts SET STATISTICS 1000;

CREATE TABLE search_lexemes (
    term     TEXT PRIMARY KEY,  -- quote_literal(lexeme): a query term as querytree() writes it
    est_rows FLOAT8 NOT NULL    -- rows holding it in the whole table when it was copied
);
