-- Retention and scoped unique keys (issue 16). The SQLite twin is its
-- 0009.

-- The cleaner's scan (RunDeleteFinished): finished runs of one final
-- state, oldest first.
CREATE INDEX runs_finished ON runs (state, finished_at, id) WHERE finished_at IS NOT NULL;

-- The cleaner deletes a run's effects by run; the primary key (run_id,
-- key) already leads with it, as run_events' (run_id, fence, seq) does.

-- A unique key is held by its run only while the run is in one of the
-- states of unique_states, a bit set (available 1, running 2, blocked 4,
-- completed 8, failed 16, cancelled 32; the non-final three are always
-- set, so no transition of a run can ever collide with another run's key),
-- and only within its period bucket: unique_bucket is the start, in Unix
-- microseconds of the store clock, of the period the run was enqueued in
-- (0 without a period). Runs enqueued before this migration keep the rule
-- they were enqueued under: taken in every state (63), no period.
ALTER TABLE runs ADD COLUMN unique_states int NOT NULL DEFAULT 63;
ALTER TABLE runs ADD COLUMN unique_bucket bigint NOT NULL DEFAULT 0;

DROP INDEX runs_unique_key;
CREATE UNIQUE INDEX runs_unique_key ON runs (unique_key, unique_bucket)
WHERE unique_key <> '' AND (unique_states & (CASE state
    WHEN 'available' THEN 1 WHEN 'running' THEN 2 WHEN 'blocked' THEN 4
    WHEN 'completed' THEN 8 WHEN 'failed' THEN 16 WHEN 'cancelled' THEN 32 ELSE 0 END)) <> 0;
