-- Runs (SPEC §3): the durable run scheduler's rows. Every change to a row is
-- one conditional UPDATE whose WHERE states its preconditions (the fence for
-- a runner's writes); see runs_*.go. The Postgres twin has the same columns.
-- Times are Unix microseconds on the store clock (the SQLite owner's clock).
CREATE TABLE runs (
    -- AUTOINCREMENT: an id is never reused, even after the highest row is
    -- deleted, so a (run id, fence) pair can never name two different runs
    -- (no ABA on run ids).
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    queue        TEXT    NOT NULL,
    payload      BLOB    NOT NULL, -- compact JSON
    priority     INTEGER NOT NULL, -- lower is claimed first
    state        TEXT    NOT NULL CHECK (state IN
                     ('available', 'running', 'blocked', 'completed', 'failed', 'cancelled')),
    attempt      INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL,
    fence        INTEGER NOT NULL DEFAULT 0, -- claim, reclaim and cancel increment it; never reset
    owner        TEXT    NOT NULL DEFAULT '', -- '' unless running
    scheduled_at INTEGER NOT NULL,
    expires_at   INTEGER,                     -- NULL unless running
    unique_key   TEXT    NOT NULL DEFAULT '', -- '' means none
    reason       TEXT    NOT NULL DEFAULT '', -- the last failure, block, cancel or reclaim reason
    result       BLOB,                        -- compact JSON; NULL until completed with one
    created_at   INTEGER NOT NULL,
    finished_at  INTEGER                      -- NULL until final
) STRICT;

-- A unique key is taken for the life of the run that took it, in any state.
CREATE UNIQUE INDEX runs_unique_key ON runs (unique_key) WHERE unique_key <> '';

-- The claim's scan, in claim order.
CREATE INDEX runs_claimable ON runs (queue, priority, scheduled_at, id) WHERE state = 'available';

-- The reclaimer's scan: held leases by expiry.
CREATE INDEX runs_expiry ON runs (expires_at) WHERE state = 'running';
