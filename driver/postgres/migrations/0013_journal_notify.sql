-- Journal notifications: every statement that inserts journal entries
-- (appends, lease changes, the expiry sweep, imports — whichever path)
-- notifies, at its commit, each world it wrote to, so a journal stream in
-- another process (GET /v1/worlds/{id}/journal/stream) reads at once
-- instead of at its next poll. A notification is only a wake-up: the
-- reader reads the table. One pg_notify per world per statement (a
-- statement-level trigger over the transition table), and Postgres folds
-- identical notifications of one transaction into one.
--
-- The channel is leasehold_journal_<schema>, or the first 16 bytes of the
-- schema's SHA-256 in hex when that is longer than 63 bytes: the same name
-- the driver's schemaChannel computes (driver/postgres/notify.go).

CREATE FUNCTION leasehold_journal_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ch text := 'leasehold_journal_' || TG_TABLE_SCHEMA;
    w  text;
BEGIN
    IF octet_length(ch) > 63 THEN
        ch := 'leasehold_journal_' || left(encode(sha256(convert_to(TG_TABLE_SCHEMA, 'UTF8')), 'hex'), 32);
    END IF;
    FOR w IN SELECT DISTINCT world FROM new_entries LOOP
        PERFORM pg_notify(ch, w);
    END LOOP;
    RETURN NULL;
END
$$;

CREATE TRIGGER journal_entries_notify
    AFTER INSERT ON journal_entries
    REFERENCING NEW TABLE AS new_entries
    FOR EACH STATEMENT EXECUTE FUNCTION leasehold_journal_notify();
