-- A queue's concurrency limit counts its running runs over an index that
-- holds only the runs claimed while the queue was limited, so a queue
-- without a limit pays no index entry per claim (issue 16, Must-show 7:
-- the limits cost nothing when they are off).
--
-- runs_running_queue (migration 0011) held every running run: every claim
-- wrote one more index entry (claims are not HOT updates: state is in the
-- partial indexes' predicates) — 1.01 WAL records and 65 bytes per claim
-- of 6.06 and 525 (TestRunPathExplained), whether or not any queue was
-- limited.
--
-- counted is set by the claim: the controlled claim sets it to whether the
-- queue has a concurrency limit, the plain claim (which claims only from a
-- queue with no controls) to false. QueueSetLimits marks the running runs
-- of the queue it limits, under a table lock that waits out every claim in
-- flight (queues.go), so no run claimed before the limit escapes the count.
ALTER TABLE runs ADD COLUMN counted boolean NOT NULL DEFAULT false;

UPDATE runs SET counted = true
WHERE state = 'running' AND queue IN (SELECT name FROM queues WHERE max_running IS NOT NULL);

DROP INDEX runs_running_queue;

CREATE INDEX runs_running_counted ON runs (queue) WHERE state = 'running' AND counted;

-- runs_expiry's predicate gains expires_at IS NOT NULL (every running run
-- has an expiry, so it holds the same entries): the reclaim's
-- expires_at <= now implies it, and the count above does not, so the
-- planner cannot read a limited queue's count off runs_expiry. It chose
-- to (expires_at follows the heap's order, so a full scan of the index
-- looked cheap), and that read every running run of every queue with
-- every dead entry not yet vacuumed: the limited drain 2.5x slower.
DROP INDEX runs_expiry;

CREATE INDEX runs_expiry ON runs (expires_at) WHERE state = 'running' AND expires_at IS NOT NULL;
