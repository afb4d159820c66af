-- Snooze (issue 16): a handler may put its run back to available for a
-- while without consuming an attempt. snoozes counts how often it did, so
-- the snooze's WHERE can bound it (a handler cannot snooze forever
-- silently).
ALTER TABLE runs ADD COLUMN snoozes INTEGER NOT NULL DEFAULT 0;
