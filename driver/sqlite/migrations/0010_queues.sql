-- Queue control (issue 16): the queue registry. A row exists for a queue
-- that was paused, resumed or given limits; a queue with runs and no row
-- runs unlimited and unpaused. RunClaim reads the row in its own
-- transaction, so a pause or a limit holds for every worker's next claim.
-- The Postgres twin is its 0011 (SQLite 0009 / Postgres 0010 are taken by
-- another change of issue 16).
CREATE TABLE queues (
    name           TEXT    NOT NULL PRIMARY KEY,
    paused         INTEGER NOT NULL DEFAULT 0 CHECK (paused IN (0, 1)),
    max_running    INTEGER CHECK (max_running > 0),    -- NULL: no limit
    rate_limit     INTEGER CHECK (rate_limit > 0),     -- NULL: no limit
    rate_period_us INTEGER CHECK (rate_period_us > 0), -- set exactly when rate_limit is
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL,
    CHECK ((rate_limit IS NULL) = (rate_period_us IS NULL))
) STRICT;

-- The rate limit's window: one row per claim of a rate-limited queue's
-- run, at the claim's store time. The claim counts the rows inside the
-- window and deletes the older ones in the same transaction.
CREATE TABLE queue_starts (
    queue      TEXT    NOT NULL,
    started_at INTEGER NOT NULL,
    run_id     INTEGER NOT NULL,
    PRIMARY KEY (queue, started_at, run_id)
) STRICT, WITHOUT ROWID;

-- A limited queue's claim counts its running runs.
CREATE INDEX runs_running_queue ON runs (queue) WHERE state = 'running';
