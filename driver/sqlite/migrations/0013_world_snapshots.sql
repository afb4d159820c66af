-- World snapshots (issue 11, driver.SnapshotStore): one per world, the
-- newest a holder took, so a node preparing the world restores it and
-- replays only the entries after position. It is a cache: entry_hash is
-- the hash of the journal entry at position when it was taken, and a
-- reader ignores a snapshot whose entry no longer has it.
CREATE TABLE world_snapshots (
    world      TEXT    NOT NULL PRIMARY KEY REFERENCES worlds (id),
    program    TEXT    NOT NULL,
    position   INTEGER NOT NULL,
    entry_hash BLOB    NOT NULL,
    data       BLOB    NOT NULL,
    taken_at   INTEGER NOT NULL
) STRICT;
