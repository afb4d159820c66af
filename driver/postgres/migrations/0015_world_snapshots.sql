-- World snapshots (issue 11, driver.SnapshotStore): one per world, the
-- newest a holder took, so a node preparing the world restores it and
-- replays only the entries after position. It is a cache: entry_hash is
-- the hash of the journal entry at position when it was taken, and a
-- reader ignores a snapshot whose entry no longer has it.
CREATE TABLE world_snapshots (
    world      text COLLATE "C" NOT NULL PRIMARY KEY REFERENCES worlds (id),
    program    text        NOT NULL,
    position   bigint      NOT NULL,
    entry_hash bytea       NOT NULL,
    data       bytea       NOT NULL,
    taken_at   timestamptz NOT NULL
);
