-- The journal's notify trigger (0013, 0020) steps aside for a statement
-- that notified its world itself. The one-statement appends
-- (driver/postgres/journal_one.go, journal_many.go) call pg_notify for
-- their world in the head UPDATE's RETURNING — on the same channel, with
-- the same payload, and only when the UPDATE matched, so only when the
-- statement writes entries — and set leasehold.journal_notified to 'on'
-- for their transaction (set_config(…, true)). The trigger's WHEN then
-- skips the PL/pgSQL call, its query over the transition table and its
-- pg_notify: about an eighth of the append backend's CPU (backend CPU per
-- single append, alternated 5×200: 659 µs with the trigger, 578 with the
-- notification in the statement, 576 with none; docs/BENCHMARKS.md).
-- Every other writer (the function when the statement hands it the
-- append, lease changes, the sweep, world creation, imports) never sets
-- the setting, so the trigger notifies for it as before; a transaction
-- that set it ends with the append statement (the driver's implicit
-- pipeline transaction), and the setting ends with it. Listeners hear
-- exactly what they heard: each written world once per transaction.
DROP TRIGGER journal_entries_notify ON journal_entries;
CREATE TRIGGER journal_entries_notify
    AFTER INSERT ON journal_entries
    REFERENCING NEW TABLE AS new_entries
    FOR EACH STATEMENT
    WHEN (current_setting('leasehold.journal_notified', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION leasehold_journal_notify();
