-- 0005: capture throughput. memory_normalize only has work to do when a row carries a subagent
-- role (NULLIF(lower(btrim(NULL)), '') is NULL again), so it fires only then: most rows (every
-- main-agent turn) no longer pay a PL/pgSQL call on insert. Same results for every row.
DROP TRIGGER IF EXISTS memory_normalize ON memory;
CREATE TRIGGER memory_normalize BEFORE INSERT OR UPDATE OF subagent_role ON memory
    FOR EACH ROW WHEN (NEW.subagent_role IS NOT NULL) EXECUTE FUNCTION memory_normalize();
