-- Worlds: the materialized head of each journal. Its lease columns agree
-- with the fold of the journal at every position (journal.Fold); every
-- change to it is the one conditional UPDATE of journal.Cond.
--
-- The same tables, columns and meaning as the SQLite driver's 0001, in
-- Postgres types: times are timestamptz on the store clock (microsecond
-- precision, exactly journal.StoreTimeResolution, so they round-trip
-- byte-for-byte into the hash chain); hashes and payloads are bytea.
-- Identifiers use the "C" collation so worlds list in byte order, as they
-- do in SQLite, whatever the database's default collation.
CREATE TABLE worlds (
    id               text COLLATE "C" PRIMARY KEY,
    home             text        NOT NULL,
    default_term_us  bigint      NOT NULL,
    position         bigint      NOT NULL,
    last_hash        bytea       NOT NULL,
    last_time        timestamptz NOT NULL,
    epoch            bigint      NOT NULL,
    holder           text        NOT NULL, -- '' while nobody holds the lease
    term_us          bigint      NOT NULL,
    expires_at       timestamptz,          -- NULL while nobody holds the lease
    granted_position bigint      NOT NULL,
    created_at       timestamptz NOT NULL
);

-- The expiry sweep's scan: held leases by expiry.
CREATE INDEX worlds_expiry ON worlds (expires_at) WHERE holder <> '';

CREATE TABLE journal_entries (
    world      text COLLATE "C" NOT NULL REFERENCES worlds (id),
    position   bigint      NOT NULL,
    epoch      bigint      NOT NULL,
    kind       text        NOT NULL,
    holder     text        NOT NULL,
    key        text        NOT NULL,
    payload    bytea       NOT NULL, -- compact JSON, byte-exact: it is hashed (so never jsonb)
    store_time timestamptz NOT NULL,
    prev_hash  bytea       NOT NULL, -- '' at position 1
    hash       bytea       NOT NULL,
    signature  bytea       NOT NULL, -- '' until signing lands
    PRIMARY KEY (world, position)
);

-- One row per (world, epoch, holder) whose refused append was journaled as
-- append.rejected: the bound that keeps a zombie from flooding the journal.
CREATE TABLE journal_rejections (
    world  text COLLATE "C" NOT NULL,
    epoch  bigint NOT NULL,
    holder text   NOT NULL,
    PRIMARY KEY (world, epoch, holder)
);
