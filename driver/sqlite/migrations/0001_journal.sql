-- Worlds: the materialized head of each journal. Its lease columns agree
-- with the fold of the journal at every position (journal.Fold); every
-- change to it is the one conditional UPDATE of driver.Cond.
-- Times are Unix microseconds on the store clock (the SQLite owner's clock).
CREATE TABLE worlds (
    id               TEXT    PRIMARY KEY,
    home             TEXT    NOT NULL,
    default_term_us  INTEGER NOT NULL,
    position         INTEGER NOT NULL,
    last_hash        BLOB    NOT NULL,
    last_time        INTEGER NOT NULL,
    epoch            INTEGER NOT NULL,
    holder           TEXT    NOT NULL, -- '' while nobody holds the lease
    term_us          INTEGER NOT NULL,
    expires_at       INTEGER,          -- NULL while nobody holds the lease
    granted_position INTEGER NOT NULL,
    created_at       INTEGER NOT NULL
) STRICT;

-- The expiry sweep's scan: held leases by expiry.
CREATE INDEX worlds_expiry ON worlds (expires_at) WHERE holder <> '';

CREATE TABLE journal_entries (
    world      TEXT    NOT NULL REFERENCES worlds (id),
    position   INTEGER NOT NULL,
    epoch      INTEGER NOT NULL,
    kind       TEXT    NOT NULL,
    holder     TEXT    NOT NULL,
    key        TEXT    NOT NULL,
    payload    BLOB    NOT NULL, -- compact JSON, byte-exact: it is hashed
    store_time INTEGER NOT NULL,
    prev_hash  BLOB    NOT NULL,
    hash       BLOB    NOT NULL,
    signature  BLOB    NOT NULL,
    PRIMARY KEY (world, position)
) STRICT, WITHOUT ROWID;

-- One row per (world, epoch, holder) whose refused append was journaled as
-- append.rejected: the bound that keeps a zombie from flooding the journal.
CREATE TABLE journal_rejections (
    world  TEXT    NOT NULL,
    epoch  INTEGER NOT NULL,
    holder TEXT    NOT NULL,
    PRIMARY KEY (world, epoch, holder)
) STRICT, WITHOUT ROWID;
