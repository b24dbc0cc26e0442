-- 0020: the Cold Path's measured progress per job, for the backlog's ETA in `status`: rows per
-- second over the worker's recent ticks (a moving average), and when it was last measured.
ALTER TABLE coldpath_runs ADD COLUMN IF NOT EXISTS rate_per_sec DOUBLE PRECISION;
ALTER TABLE coldpath_runs ADD COLUMN IF NOT EXISTS rate_at TIMESTAMPTZ;
