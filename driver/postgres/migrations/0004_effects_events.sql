-- Effects and events of runs (SPEC §3): the effect ledger and the per-run
-- event log. The same tables, columns and meaning as the SQLite driver's,
-- in Postgres types. Every write to either is fenced by its run (runs.fence
-- = $fence AND runs.state = 'running', checked under a FOR SHARE lock of the
-- run row in the same statement or transaction); times are the store clock
-- at microsecond precision.

-- One row per idempotent effect (run, key): inserted as an intent under the
-- fence that started it, then committed with its result. An intent that was
-- never committed is uncertain to every later caller: it is never
-- overwritten, only resolved explicitly (committed, or deleted).
CREATE TABLE run_effects (
    run_id       bigint      NOT NULL REFERENCES runs (id),
    key          text COLLATE "C" NOT NULL, -- byte order, as in SQLite
    fence        bigint      NOT NULL,      -- the fence the intent was inserted (or resolved) under
    committed    boolean     NOT NULL DEFAULT false,
    result       bytea,                     -- compact JSON; NULL if none
    created_at   timestamptz NOT NULL,
    committed_at timestamptz,               -- NULL until committed
    PRIMARY KEY (run_id, key)
);

-- The per-run event log, keyed (run, fence, seq) so that a retried batch
-- (INSERT … ON CONFLICT DO NOTHING) never duplicates. No foreign key: this
-- is the hot path, and the fence check every insert makes against the run
-- row (which must exist, be running and carry the event's fence) already
-- covers existence. Runs are never deleted.
CREATE TABLE run_events (
    run_id     bigint      NOT NULL,
    fence      bigint      NOT NULL,
    seq        bigint      NOT NULL, -- 1, 2, 3 … within (run, fence), assigned by the runner
    kind       text        NOT NULL,
    payload    bytea       NOT NULL, -- compact JSON, byte-exact
    created_at timestamptz NOT NULL,
    PRIMARY KEY (run_id, fence, seq)
);
