-- Run events keyed by their place in the queue-wide order (replaces 0014's
-- second index). 0014 kept the rows in a WITHOUT ROWID b-tree keyed
-- (run_id, fence, seq) — full rows inserted in the middle of the tree, a
-- leaf per run touched — and added run_events_pos, a second b-tree on
-- (pos, run_id, fence, seq) every append paid for. Here the row's own key
-- is the order: id = (pos << 20) + the event's rank in its transaction's
-- batch sorted by (run_id, fence, seq), so every append lands at the
-- right edge of the table (one leaf, no splits in the middle), the queue's
-- list is a range scan of the table itself, and the per-run key is a
-- narrow unique index (run_id, fence, seq → id) that the run's list, the
-- duplicate check and the retention cleaner use. The position is id >> 20
-- (sqlite/events.go: eventPosShift); a transaction of 2^20 events or more
-- takes several positions.
--
-- Rows stored before 0014 (pos 0) get negative ids in (run_id, fence,
-- seq) order: they sort first and their position reads as 0, as before.
-- A 0014 position holding 2^20 events or more would collide with the next
-- one's ids and fail this migration on the primary key rather than
-- reorder anything silently.
CREATE TABLE run_events_by_position (
    id         INTEGER PRIMARY KEY,
    run_id     INTEGER NOT NULL,
    fence      INTEGER NOT NULL,
    seq        INTEGER NOT NULL,
    kind       TEXT    NOT NULL,
    payload    BLOB    NOT NULL, -- compact JSON
    created_at INTEGER NOT NULL
) STRICT;

INSERT INTO run_events_by_position (id, run_id, fence, seq, kind, payload, created_at)
SELECT CASE WHEN pos > 0
        THEN (pos << 20) + row_number() OVER (PARTITION BY pos ORDER BY run_id, fence, seq) - 1
        ELSE row_number() OVER (PARTITION BY pos ORDER BY run_id, fence, seq) - 1 - (SELECT count(*) FROM run_events WHERE pos <= 0)
    END,
    run_id, fence, seq, kind, payload, created_at
FROM run_events;

DROP TABLE run_events;

ALTER TABLE run_events_by_position RENAME TO run_events;

CREATE UNIQUE INDEX run_events_key ON run_events (run_id, fence, seq);
