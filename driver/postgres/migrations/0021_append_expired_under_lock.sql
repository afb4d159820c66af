-- The one-statement single append (driver/postgres/journal_one.go) judges
-- the lease's expiry on a store clock read after it holds the head's row
-- lock: its UPDATE's RETURNING reads clock_timestamp() once the row is
-- updated, and the entry's INSERT calls this function, which raises, when
-- that time is not before the lease's expiry. The raise rolls the whole
-- statement back (the head's update with it), and the driver answers the
-- append with leasehold_journal_append, which reads the clock under the
-- lock again and refuses it 'expired' (journaling append.rejected) as any
-- expired append is. A WHERE on clock_timestamp() alone would not do: it
-- is evaluated before the UPDATE waits for a row lock, and Postgres
-- re-evaluates it (EvalPlanQual) only when the lock's holder changed the
-- row, not when it only locked it (SELECT … FOR UPDATE) — so an append
-- that waited past the expiry behind a mere lock would be judged on the
-- time before its wait (SPEC §5: no write accepted while the lease is
-- expired on the store clock).
CREATE FUNCTION leasehold_append_expired_under_lock(p_world text) RETURNS boolean
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    RAISE EXCEPTION 'world %: the lease expired while the append waited for the head''s lock', p_world
        USING ERRCODE = 'LH002';
END
$$;
