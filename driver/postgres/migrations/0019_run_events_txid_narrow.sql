-- The queue-wide event order's index, narrowed (migration 0016 indexed
-- (txid, run_id, fence, seq)). Every event of a batch shares its
-- transaction's txid, so the order needs the index only to find where a
-- cursor's (transaction, run) begins: the list (events.go,
-- listQueueEvents) seeks ROW(txid, run_id) >= the cursor's, filters the
-- full cursor, and sorts each (txid, run_id) group by (fence, seq) with an
-- incremental sort — a group is one run's events of one transaction, a
-- few rows. The narrow key deduplicates (ten events of a run in a batch
-- are one posting list), so the index is a quarter of 0016's size, and
-- each append writes 306 bytes of WAL per event instead of 338
-- (TestEventAppendExplained; 224 with no order index at all). txid alone
-- would be 291, but a cursor inside one large transaction (the rows
-- stored before 0016 all carry that migration's txid) would then sort
-- the whole transaction's remaining events for every page.
DROP INDEX run_events_txid;
CREATE INDEX run_events_txid ON run_events (txid, run_id);
