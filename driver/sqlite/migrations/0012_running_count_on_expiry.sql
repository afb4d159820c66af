-- A limited queue's claim counts its running runs. 0010 gave that count an
-- index of its own (runs_running_queue), which every claim of every queue
-- paid for with one more index insert, limits on or off. The count now
-- reads runs_expiry, which every claim already writes: queue rides in it as
-- a second column, so the count is a covering scan of the running set
-- (bounded by the runs held at once), and only limited queues pay it. The
-- reclaimer's expires_at order is unchanged. Postgres keeps runs_running_queue:
-- there the index is deduplicated (one key per queue), and a count over
-- runs_expiry, whose entries are all distinct, made a limited queue's drain
-- 2.5x slower (bench runs --max-running 1000: 12.0k -> 4.8k runs/s).
DROP INDEX runs_running_queue;
DROP INDEX runs_expiry;
CREATE INDEX runs_expiry ON runs (expires_at, queue) WHERE state = 'running';
