-- Snooze (issue 16): a handler may put its run back to available for a
-- while without consuming an attempt. snoozes counts how often it did, so
-- the snooze's WHERE can bound it (a handler cannot snooze forever
-- silently).
ALTER TABLE runs ADD COLUMN snoozes INTEGER NOT NULL DEFAULT 0;

-- A reclaimed run keeps its place in the queue (docs/design/run-order.md):
-- the reclaim no longer rewrites scheduled_at, and records its own store
-- time here instead (NULL until the run is first reclaimed), which the
-- recovery-bound measurements read.
ALTER TABLE runs ADD COLUMN reclaimed_at INTEGER;
