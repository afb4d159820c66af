-- A limited queue's claim counts its running runs. 0011 gave that count an
-- index of its own (runs_running_queue), which every claim of every queue
-- paid for with one more index insert, limits on or off. The count now
-- reads runs_expiry, which every claim already writes: queue rides in it
-- as an INCLUDE column, so the count is an index-only scan of the running
-- set (bounded by the runs held at once), and only limited queues pay it.
-- The SQLite twin is its 0012.
DROP INDEX runs_running_queue;
DROP INDEX runs_expiry;
CREATE INDEX runs_expiry ON runs (expires_at) INCLUDE (queue) WHERE state = 'running';
