-- The home pool (SPEC §4 "Holders and home"): the replicas serving as a
-- world's home, each a member until expires_at (on the store clock) unless
-- it renews. A world's home names a pool; the expiry sweep grants an
-- expired world to one of the pool's live replicas. The same table as the
-- SQLite driver's 0005; identifiers in the "C" collation, so nodes list in
-- byte order as they do in SQLite.
CREATE TABLE home_replicas (
    pool       text COLLATE "C" NOT NULL,
    node       text COLLATE "C" NOT NULL,
    expires_at timestamptz      NOT NULL,
    PRIMARY KEY (pool, node)
);
