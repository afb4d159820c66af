-- The key rule of journal.PlanAppendKeyed (SPEC §4: a retried command is
-- applied once): a non-empty append key appears at most once per world, in
-- any epoch. The append transaction looks the key up (under the single
-- writer) before planning; this index makes that lookup one probe and makes
-- the store itself refuse a second entry with the key. Keys are kept as
-- long as the journal.
CREATE UNIQUE INDEX journal_entries_key ON journal_entries (world, key) WHERE key <> '';
