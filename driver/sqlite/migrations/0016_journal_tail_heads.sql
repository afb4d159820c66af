-- The journal's tail is its last entry (issue 13, Must-show 4): an append
-- that leaves the lease as it was no longer rewrites the worlds row, so its
-- commit carries the entry's page alone, not the head's page beside it.
-- The worlds row keeps the lease columns (written by every lease change, as
-- before); its position, last_hash and last_time are the tail as of the
-- last lease change or the create, and nothing reads them. The head a
-- reader sees is world_heads: the lease from worlds, the tail from the
-- world's last entry (one probe of the journal_entries primary key, whose
-- max on (world, position) SQLite seeks directly). Every world has an
-- entry (its create, position 1), so the join keeps every world.
--
-- A binary older than this migration refuses the schema (version too new).
-- Stop every older process before migrating: one still running on the file
-- reads the worlds row's stale tail (its WorldGet shows it), and its
-- appends either fail (its entry INSERT meets the primary key at a position
-- already taken: ErrConflict) or, with no append since the last lease
-- change, land consistently — the journal cannot fork either way.
CREATE VIEW world_heads AS
SELECT w.id, w.home, w.default_term_us, e.position, e.hash AS last_hash, e.store_time AS last_time,
       w.epoch, w.holder, w.term_us, w.expires_at, w.granted_position, w.created_at, w.holder_key
FROM worlds w
JOIN journal_entries e
  ON e.world = w.id
 AND e.position = (SELECT max(m.position) FROM journal_entries m WHERE m.world = w.id);
