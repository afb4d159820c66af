-- Queue-wide event order (driver.QueueEventLister; GET
-- /v1/queues/{queue}/events/stream). Run events are keyed per run; a
-- queue's events are listed by (pos, run_id, fence, seq), pos being taken
-- by each append transaction from run_event_position, bumped inside it.
-- SQLite has one writer at a time, so a later commit always has a higher
-- pos: a reader's cursor is never passed by an event committed after it
-- read. A counter, not max(pos) + 1, because the retention cleaner deletes
-- events: a position is never handed out twice. Rows stored before this
-- migration have pos 0 and sort first.
ALTER TABLE run_events ADD COLUMN pos INTEGER NOT NULL DEFAULT 0;

CREATE INDEX run_events_pos ON run_events (pos, run_id, fence, seq);

CREATE TABLE run_event_position (
    one INTEGER NOT NULL PRIMARY KEY CHECK (one = 1),
    pos INTEGER NOT NULL
) STRICT;

INSERT INTO run_event_position (one, pos) VALUES (1, 0);
