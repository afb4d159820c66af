-- Node keys and signatures (issue 11, journal/sign.go).
--
-- node_keys: every public key a node has registered, newest version last.
-- A grant or handoff carries the grantee's newest key in its payload
-- (journal.BindKeys), so the key in force for an epoch is the one that was
-- current when the epoch began, and entries keep verifying under it after
-- the node registers another.
CREATE TABLE node_keys (
    node          TEXT    NOT NULL,
    version       INTEGER NOT NULL,
    public_key    BLOB    NOT NULL,
    registered_at INTEGER NOT NULL,
    PRIMARY KEY (node, version)
) STRICT, WITHOUT ROWID;

-- holder_key: the key the current epoch's grant carries (journal.State
-- HolderKey); empty when the holder signs nothing.
ALTER TABLE worlds ADD COLUMN holder_key BLOB NOT NULL DEFAULT x'';
