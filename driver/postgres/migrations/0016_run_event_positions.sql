-- Queue-wide event order (driver.QueueEventLister; GET
-- /v1/queues/{queue}/events/stream). Run events are keyed per run; a
-- queue's events are listed by (txid, run_id, fence, seq), txid being the
-- inserting transaction's id, and only while txid is older than every
-- transaction still running (pg_snapshot_xmin): a transaction that began
-- earlier may commit later, and its events must not land behind a cursor a
-- reader already holds. The column defaults to the inserting transaction's
-- id, so no insert names it; rows stored before this migration take the
-- migration's own id and sort first.
ALTER TABLE run_events ADD COLUMN txid xid8 NOT NULL DEFAULT pg_current_xact_id();

CREATE INDEX run_events_txid ON run_events (txid, run_id, fence, seq);
