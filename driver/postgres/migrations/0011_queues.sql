-- Queue control (issue 16): the queue registry. A row exists for a queue
-- that was paused, resumed or given limits; a queue with runs and no row
-- runs unlimited and unpaused. RunClaim reads the row (and, for a limited
-- queue, locks it) in its own transaction, so a pause or a limit holds for
-- every worker's next claim. The SQLite twin is its 0010 (SQLite 0009 /
-- Postgres 0010 are taken by another change of issue 16).
CREATE TABLE queues (
    name           text COLLATE "C" PRIMARY KEY,
    paused         boolean     NOT NULL DEFAULT false,
    max_running    int    CHECK (max_running > 0),    -- NULL: no limit
    rate_limit     int    CHECK (rate_limit > 0),     -- NULL: no limit
    rate_period_us bigint CHECK (rate_period_us > 0), -- set exactly when rate_limit is
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    CHECK ((rate_limit IS NULL) = (rate_period_us IS NULL))
);

-- The rate limit's window: one row per claim of a rate-limited queue's
-- run, at the claim's store time. The claim counts the rows inside the
-- window and deletes the older ones in the same statement.
CREATE TABLE queue_starts (
    queue      text COLLATE "C" NOT NULL,
    started_at timestamptz NOT NULL,
    run_id     bigint      NOT NULL,
    PRIMARY KEY (queue, started_at, run_id)
);

-- A limited queue's claim counts its running runs.
CREATE INDEX runs_running_queue ON runs (queue) WHERE state = 'running';
