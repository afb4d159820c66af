-- leasehold_complete_runs is the batched completion (driver/postgres
-- runs_complete_many.go, completeRuns) as one UPDATE that takes no row
-- lock of its own before it writes.
--
-- The completion used to lock its runs first (a CTE, FOR UPDATE, ORDER BY
-- id), then update them: every multi-row locker that waits (the renewal
-- drain, a batch of run events) takes its locks in id order, so no two of
-- them can wait for each other in a cycle, and the completion had to as
-- well. An UPDATE locks each row as its scan reaches it, and the order
-- that is depends on the plan: a Bitmap Heap Scan or a Seq Scan reaches
-- the rows in the table's physical order, not by id. The lock cost one
-- row-lock WAL record per run, and planning a join of the batch with runs
-- twice.
--
-- Here the UPDATE reads runs by one scan and joins nothing: each row's
-- fence and result are found in the batch's arrays by binary search
-- (width_bucket over $1, which the caller sends sorted ascending and
-- without duplicates: the bucket of an id that is in the array is its
-- position). The function's SET turns the sequential and bitmap scans off
-- for its own statement (a setting the function restores on return), so
-- the scan is the plain index scan of runs_pkey for id = ANY($1): a B-tree
-- scan of an array of keys visits them in ascending order. So the rows
-- are locked in id order whatever the table's size and statistics. (The
-- planner keeps a disabled path only when no other path exists; runs_pkey
-- always serves id = ANY — as long as index scans are on, which the
-- function's SET makes sure of too: with enable_indexscan off on the
-- session, role or database every path is disabled and the planner chose
-- a Seq Scan again, a deadlock with a batch of run events reproduced by
-- review. jit is off: a disabled path's cost passes jit_above_cost.)
-- TestCompleteRunsLockInIdOrder and TestRunPathExplained pin the plan and
-- the order.
--
-- The fence is stated in the UPDATE's WHERE (id, fence, state = 'running'),
-- as in every run write; store_now is the store time ($4: the injected clock or
-- NULL for clock_timestamp()). It returns the 1-based positions in $1 of
-- the runs it completed.
CREATE FUNCTION leasehold_complete_runs(ids bigint[], fences bigint[], results bytea[], store_now timestamptz)
RETURNS SETOF integer
LANGUAGE sql
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_indexscan = on
SET jit = off
AS $$
    UPDATE runs r SET state = 'completed', result = results[width_bucket(r.id, ids)],
        finished_at = (SELECT coalesce(store_now, clock_timestamp())), owner = '', expires_at = NULL
    WHERE r.id = ANY (ids) AND r.fence = fences[width_bucket(r.id, ids)] AND r.state = 'running'
    RETURNING width_bucket(r.id, ids)
$$;
