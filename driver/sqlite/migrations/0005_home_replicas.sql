-- The home pool (SPEC §4 "Holders and home"): the replicas serving as a
-- world's home, each a member until expires_at (Unix microseconds on the
-- store clock) unless it renews. A world's home names a pool; the expiry
-- sweep grants an expired world to one of the pool's live replicas.
CREATE TABLE home_replicas (
    pool       TEXT    NOT NULL,
    node       TEXT    NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (pool, node)
) STRICT, WITHOUT ROWID;
