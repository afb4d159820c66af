-- Effects and events of runs (SPEC §3). Every write to these tables is
-- fenced by its run (runs.id AND runs.fence AND runs.state = 'running') in
-- the same BEGIN IMMEDIATE transaction; see effects*.go, runtx.go and
-- events.go. The Postgres twin has the same columns. Times are Unix
-- microseconds on the store clock.

-- The effect ledger: one row per idempotent side effect (run, key). A row
-- with committed = 0 is an intent; found by a later holder it is uncertain
-- and is never overwritten, only resolved.
CREATE TABLE run_effects (
    run_id       INTEGER NOT NULL REFERENCES runs (id),
    key          TEXT    NOT NULL,
    fence        INTEGER NOT NULL,           -- the fence the intent was inserted under (resolve: the resolver's)
    committed    INTEGER NOT NULL DEFAULT 0, -- 0: intent, 1: committed
    result       BLOB,                       -- compact JSON; NULL if none
    created_at   INTEGER NOT NULL,
    committed_at INTEGER,                    -- NULL until committed
    PRIMARY KEY (run_id, key)
) STRICT, WITHOUT ROWID;

-- The per-run event log, keyed (run, fence, seq) so a retried batch inserts
-- nothing twice (ON CONFLICT DO NOTHING). No foreign key: every insert
-- already checks its run's fence in its WHERE, and this is the
-- group-committed hot path.
CREATE TABLE run_events (
    run_id     INTEGER NOT NULL,
    fence      INTEGER NOT NULL,
    seq        INTEGER NOT NULL,
    kind       TEXT    NOT NULL,
    payload    BLOB    NOT NULL, -- compact JSON
    created_at INTEGER NOT NULL,
    PRIMARY KEY (run_id, fence, seq)
) STRICT, WITHOUT ROWID;
