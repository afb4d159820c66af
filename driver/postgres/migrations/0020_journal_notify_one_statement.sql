-- The journal's notify trigger (0013) as one statement. 0013 looped over
-- SELECT DISTINCT world FROM new_entries and called pg_notify per world:
-- a cursor, a hash aggregate and one more SPI expression per world, for
-- every statement that writes entries — a single append's included. Now
-- one statement notifies each inserted row's world; Postgres folds
-- identical notifications of one transaction into one (the duplicates of
-- a batch are found in the transaction's pending list, hashed past 16),
-- so listeners hear exactly what they heard: each written world once per
-- transaction, on the same channel. In the append's backend the trigger's
-- share of the CPU fell from 6.3% to 3.2% (perf, docs/BENCHMARKS.md).
CREATE OR REPLACE FUNCTION leasehold_journal_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify(CASE WHEN octet_length('leasehold_journal_' || TG_TABLE_SCHEMA) > 63
            THEN 'leasehold_journal_' || left(encode(sha256(convert_to(TG_TABLE_SCHEMA, 'UTF8')), 'hex'), 32)
            ELSE 'leasehold_journal_' || TG_TABLE_SCHEMA END, n.world)
        FROM new_entries n;
    RETURN NULL;
END
$$;
