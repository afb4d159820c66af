-- Runs (SPEC §3): the durable run scheduler's one table. The same columns
-- and meaning as the SQLite driver's runs table, in Postgres types. Every
-- transition is one conditional UPDATE whose WHERE states the fence (see
-- runs/doc.go for the state diagram); times are the store clock at
-- microsecond precision.
CREATE TABLE runs (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, -- never reused: a sequence never goes back
    queue        text COLLATE "C" NOT NULL,
    payload      bytea       NOT NULL, -- compact JSON, byte-exact
    priority     int         NOT NULL, -- lower is claimed first
    state        text        NOT NULL, -- runs.State
    attempt      int         NOT NULL DEFAULT 0,
    max_attempts int         NOT NULL,
    fence        bigint      NOT NULL DEFAULT 0, -- claim, reclaim and cancel increment it; it never goes back
    owner        text        NOT NULL DEFAULT '', -- '' unless running
    scheduled_at timestamptz NOT NULL, -- claimable from this store time while available
    expires_at   timestamptz,          -- NULL unless running
    unique_key   text        NOT NULL DEFAULT '', -- '' for none
    reason       text        NOT NULL DEFAULT '', -- the last failure, block, cancel or reclaim reason
    result       bytea,                -- compact JSON set by complete; NULL if none
    created_at   timestamptz NOT NULL,
    finished_at  timestamptz           -- NULL until final
);

-- A second enqueue with a taken key finds the first run (ON CONFLICT … DO
-- NOTHING, then a lookup), whatever that run's state.
CREATE UNIQUE INDEX runs_unique_key ON runs (unique_key) WHERE unique_key <> '';

-- The claim's scan, in claim order.
CREATE INDEX runs_claimable ON runs (queue, priority, scheduled_at, id) WHERE state = 'available';

-- The reclaimer's scan: running leases by expiry.
CREATE INDEX runs_expiry ON runs (expires_at) WHERE state = 'running';
