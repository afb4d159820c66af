package sqlite_test

import (
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/drivertest"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/runs"
)

// Smoke tests of the SQLite effect ledger, transactional effects and run
// events; the behaviour every driver must have is in the shared
// conformance suite (driver/drivertest/cases_effects.go).

// claimNew enqueues one run on "q" and claims it for owner.
func (b *runsBundle) claimNew(t *testing.T, owner string) *driver.Run {
	t.Helper()
	b.enqueue(t, runs.Enqueue{Queue: "q"})
	return b.claim(t, owner, time.Minute)
}

// reclaimFor expires r's lease, reclaims it and claims it again for owner.
func (b *runsBundle) reclaimFor(t *testing.T, r *driver.Run, owner string) *driver.Run {
	t.Helper()
	b.clock.Advance(time.Minute)
	res, err := b.d.RunReclaim(b.ctx, &driver.RunReclaimParams{})
	require.NoError(t, err)
	require.Len(t, res.Reclaimed, 1)
	c := b.claim(t, owner, time.Minute)
	require.Equal(t, r.ID, c.ID)
	require.Equal(t, r.Fence+2, c.Fence, "reclaim and claim each increment the fence")
	return c
}

func TestEffectBeginCommitThenCommitted(t *testing.T) {
	t.Parallel()
	b := setupRuns(t)
	r := b.claimNew(t, "a")
	p := &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: "charge"}

	e, err := b.d.RunEffectBegin(b.ctx, p)
	require.NoError(t, err)
	require.Equal(t, &driver.Effect{RunID: r.ID, Key: "charge", Fence: r.Fence, CreatedAt: drivertest.StartTime,
		Outcome: driver.EffectStarted}, e)

	b.clock.Advance(time.Second)
	c, err := b.d.RunEffectCommit(b.ctx, &driver.RunEffectCommitParams{RunID: r.ID, Fence: r.Fence, Key: "charge",
		Result: []byte(` {"id": "ch_1"} `)})
	require.NoError(t, err)
	require.Equal(t, &driver.Effect{RunID: r.ID, Key: "charge", Fence: r.Fence, Committed: true, Result: []byte(`{"id":"ch_1"}`),
		CreatedAt: drivertest.StartTime, CommittedAt: drivertest.StartTime.Add(time.Second)}, c)

	again, err := b.d.RunEffectBegin(b.ctx, p)
	require.NoError(t, err)
	require.Equal(t, driver.EffectCommitted, again.Outcome)
	again.Outcome = ""
	require.Equal(t, c, again, "the stored result, unchanged")

	_, err = b.d.RunEffectCommit(b.ctx, &driver.RunEffectCommitParams{RunID: r.ID, Fence: r.Fence, Key: "charge"})
	require.ErrorIs(t, err, driver.ErrConflict, "committed under this fence already")
	require.NotErrorIs(t, err, driver.ErrFenced)
	_, err = b.d.RunEffectCommit(b.ctx, &driver.RunEffectCommitParams{RunID: r.ID, Fence: r.Fence, Key: "never-begun"})
	require.ErrorIs(t, err, driver.ErrFenced, "no intent under this fence")

	// A commit without a result stores NULL.
	_, err = b.d.RunEffectBegin(b.ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: "bare"})
	require.NoError(t, err)
	bare, err := b.d.RunEffectCommit(b.ctx, &driver.RunEffectCommitParams{RunID: r.ID, Fence: r.Fence, Key: "bare"})
	require.NoError(t, err)
	require.Nil(t, bare.Result)

	list, err := b.d.RunEffectList(b.ctx, &driver.RunEffectListParams{RunID: r.ID})
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, "bare", list[0].Key, "ordered by key")
	require.Equal(t, c, list[1])
}

func TestEffectUncertainAfterReclaimResolvedBothWays(t *testing.T) {
	t.Parallel()
	b := setupRuns(t)
	a := b.claimNew(t, "a")
	for _, key := range []string{"charge", "refund"} {
		_, err := b.d.RunEffectBegin(b.ctx, &driver.RunEffectParams{RunID: a.ID, Fence: a.Fence, Key: key})
		require.NoError(t, err)
	}
	c := b.reclaimFor(t, a, "b")

	_, err := b.d.RunEffectCommit(b.ctx, &driver.RunEffectCommitParams{RunID: a.ID, Fence: a.Fence, Key: "charge", Result: []byte(`1`)})
	var fe *driver.RunFencedError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, c.Fence, fe.CurrentFence)

	for _, key := range []string{"charge", "refund"} {
		e, err := b.d.RunEffectBegin(b.ctx, &driver.RunEffectParams{RunID: c.ID, Fence: c.Fence, Key: key})
		require.NoError(t, err)
		require.Equal(t, driver.EffectUncertain, e.Outcome)
		require.Equal(t, a.Fence, e.Fence, "never overwritten")
		require.False(t, e.Committed)
	}
	_, err = b.d.RunEffectCommit(b.ctx, &driver.RunEffectCommitParams{RunID: c.ID, Fence: c.Fence, Key: "charge"})
	require.ErrorIs(t, err, driver.ErrFenced, "the new holder cannot commit the old holder's intent")

	b.clock.Advance(time.Second)
	got, err := b.d.RunEffectResolve(b.ctx, &driver.RunEffectResolveParams{RunID: c.ID, Fence: c.Fence, Key: "charge",
		Committed: true, Result: []byte(`"ch_1"`)})
	require.NoError(t, err)
	require.True(t, got.Committed)
	require.Equal(t, c.Fence, got.Fence, "the resolver's fence")
	require.Equal(t, `"ch_1"`, string(got.Result))
	require.Equal(t, b.clock.Now().UTC(), got.CommittedAt)

	gone, err := b.d.RunEffectResolve(b.ctx, &driver.RunEffectResolveParams{RunID: c.ID, Fence: c.Fence, Key: "refund"})
	require.NoError(t, err)
	require.False(t, gone.Committed)
	require.Equal(t, a.Fence, gone.Fence, "the removed intent as it was")

	_, err = b.d.RunEffectResolve(b.ctx, &driver.RunEffectResolveParams{RunID: c.ID, Fence: c.Fence, Key: "charge"})
	require.ErrorIs(t, err, driver.ErrConflict)
	_, err = b.d.RunEffectResolve(b.ctx, &driver.RunEffectResolveParams{RunID: c.ID, Fence: c.Fence, Key: "refund"})
	require.ErrorIs(t, err, driver.ErrNotFound, "removed")

	e, err := b.d.RunEffectBegin(b.ctx, &driver.RunEffectParams{RunID: c.ID, Fence: c.Fence, Key: "refund"})
	require.NoError(t, err)
	require.Equal(t, driver.EffectStarted, e.Outcome, "a removed intent starts afresh")
	require.Equal(t, c.Fence, e.Fence)
}

func TestRunTxWritesTheCallerTableAndTheEffectAtomically(t *testing.T) {
	t.Parallel()
	b := setupRuns(t)
	require.NoError(t, sqlite.ExecForTest(b.ctx, b.d, `CREATE TABLE ledger (k TEXT PRIMARY KEY, v INTEGER NOT NULL) STRICT`))
	count := func() int {
		t.Helper()
		var n int
		require.NoError(t, sqlite.QueryForTest(b.ctx, b.d, `SELECT count(*) FROM ledger`, &n))
		return n
	}
	r := b.claimNew(t, "a")
	calls := 0
	write := func(k string, err error) func(tx any) error {
		return func(tx any) error {
			calls++
			if _, e := tx.(*sql.Tx).ExecContext(b.ctx, `INSERT INTO ledger (k, v) VALUES (?, ?)`, k, calls); e != nil {
				return e
			}
			return err
		}
	}
	tp := func(key string) *driver.RunTxParams {
		return &driver.RunTxParams{RunID: r.ID, Fence: r.Fence, Key: key, Result: []byte(`{"booked": true}`)}
	}

	res, err := b.d.RunTx(b.ctx, tp("book"), write("book", nil))
	require.NoError(t, err)
	require.False(t, res.Done)
	require.Equal(t, &driver.Effect{RunID: r.ID, Key: "book", Fence: r.Fence, Committed: true, Result: []byte(`{"booked":true}`),
		CreatedAt: drivertest.StartTime, CommittedAt: drivertest.StartTime}, res.Effect)
	require.Equal(t, 1, count())

	again, err := b.d.RunTx(b.ctx, tp("book"), write("book-again", nil))
	require.NoError(t, err)
	require.True(t, again.Done)
	require.Equal(t, res.Effect, again.Effect)
	require.Equal(t, 1, calls, "fn not called for a committed key")

	boom := errors.New("boom")
	_, err = b.d.RunTx(b.ctx, tp("failing"), write("failing", boom))
	require.ErrorIs(t, err, boom)
	require.Equal(t, 1, count(), "fn's write rolled back")

	// fn that releases the run itself: the effect insert re-checks the
	// fence, so nothing of the transaction is kept.
	_, err = b.d.RunTx(b.ctx, tp("releasing"), func(tx any) error {
		_, err := tx.(*sql.Tx).ExecContext(b.ctx, `UPDATE runs SET state = 'blocked' WHERE id = ?`, r.ID)
		return err
	})
	require.ErrorIs(t, err, driver.ErrFenced)
	got, err := b.d.RunGet(b.ctx, &driver.RunGetParams{ID: r.ID})
	require.NoError(t, err)
	require.Equal(t, runs.StateRunning, got.State, "fn's write rolled back")

	// A key begun as an effect is not taken over by a transaction.
	_, err = b.d.RunEffectBegin(b.ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: "mixed"})
	require.NoError(t, err)
	calls = 0
	_, err = b.d.RunTx(b.ctx, tp("mixed"), write("mixed", nil))
	require.ErrorIs(t, err, driver.ErrConflict)
	require.Zero(t, calls)

	list, err := b.d.RunEffectList(b.ctx, &driver.RunEffectListParams{RunID: r.ID})
	require.NoError(t, err)
	require.Len(t, list, 2, "book and the mixed intent; none for the failed transactions")
}

func TestRunEventAppendDeduplicatesAndReportsFenced(t *testing.T) {
	t.Parallel()
	b := setupRuns(t)
	a := b.claimNew(t, "a")
	ev := func(r *driver.Run, seq int64) driver.RunEventInsert {
		return driver.RunEventInsert{RunID: r.ID, Fence: r.Fence, Seq: seq, Kind: "step", Payload: fmt.Appendf(nil, `{ "seq": %d }`, seq)}
	}
	batch := []driver.RunEventInsert{ev(a, 1), ev(a, 2), ev(a, 2), ev(a, 3)} // a duplicate within the batch too
	res, err := b.d.RunEventAppend(b.ctx, &driver.RunEventAppendParams{Events: batch})
	require.NoError(t, err)
	require.Empty(t, res.Fenced)
	res, err = b.d.RunEventAppend(b.ctx, &driver.RunEventAppendParams{Events: batch})
	require.NoError(t, err)
	require.Empty(t, res.Fenced, "a retried batch is accepted")

	list := func(p driver.RunEventListParams) []*driver.RunEvent {
		t.Helper()
		p.RunID = a.ID
		evs, err := b.d.RunEventList(b.ctx, &p)
		require.NoError(t, err)
		return evs
	}
	evs := list(driver.RunEventListParams{})
	require.Len(t, evs, 3)
	require.Equal(t, &driver.RunEvent{RunID: a.ID, Fence: a.Fence, Seq: 1, Kind: "step", Payload: []byte(`{"seq":1}`),
		CreatedAt: drivertest.StartTime}, evs[0])

	c := b.reclaimFor(t, a, "b")
	res, err = b.d.RunEventAppend(b.ctx, &driver.RunEventAppendParams{Events: []driver.RunEventInsert{
		ev(a, 4), ev(c, 1), ev(a, 3), ev(a, 5)}})
	require.NoError(t, err)
	require.Equal(t, []int{0, 3}, res.Fenced, "the old holder's new events; its present event counts as accepted")

	evs = list(driver.RunEventListParams{})
	require.Len(t, evs, 4)
	require.Equal(t, c.Fence, evs[3].Fence)
	evs = list(driver.RunEventListParams{AfterFence: a.Fence, AfterSeq: 3, Limit: 10})
	require.Len(t, evs, 1, "resume after (fence, seq) crosses into the next fence")
	require.Equal(t, [2]int64{c.Fence, 1}, [2]int64{evs[0].Fence, evs[0].Seq})
	require.Len(t, list(driver.RunEventListParams{Limit: 2}), 2)
	_, err = b.d.RunEventList(b.ctx, &driver.RunEventListParams{RunID: a.ID, Limit: 10001})
	require.ErrorIs(t, err, driver.ErrInvalid)
}

// TestRunEventAppendAcrossChunks crosses the chunked insert's boundaries
// (full chunks, a short tail inserted event by event) with fenced events,
// duplicates and a retried batch, and checks the refusals' indexes.
func TestRunEventAppendAcrossChunks(t *testing.T) {
	t.Parallel()
	b := setupRuns(t)
	a := b.claimNew(t, "a")
	c := b.claimNew(t, "c")
	var batch []driver.RunEventInsert
	var fenced []int
	for i := range 202 { // two full chunks and a tail of two
		r, fence := a, a.Fence
		switch {
		case i%7 == 3:
			r, fence = c, c.Fence+1 // not c's fence
			fenced = append(fenced, i)
		case i%2 == 1:
			r = c
			fence = c.Fence
		}
		batch = append(batch, driver.RunEventInsert{RunID: r.ID, Fence: fence, Seq: int64(i + 1), Kind: "step", Payload: []byte(`{}`)})
	}
	batch[152] = batch[148] // a duplicate within the batch
	for range 2 {
		res, err := b.d.RunEventAppend(b.ctx, &driver.RunEventAppendParams{Events: batch})
		require.NoError(t, err)
		require.Equal(t, fenced, res.Fenced)
	}
	var n int
	for _, r := range []*driver.Run{a, c} {
		evs, err := b.d.RunEventList(b.ctx, &driver.RunEventListParams{RunID: r.ID})
		require.NoError(t, err)
		n += len(evs)
	}
	require.Equal(t, len(batch)-len(fenced)-1, n)
}

// BenchmarkRunEventAppend measures the group-committed path: batches of
// 1000 events over 10 held runs, one transaction (one fsync) each.
func BenchmarkRunEventAppend(b *testing.B) {
	tb := setupRuns(b)
	for range 10 {
		tb.enqueue(b, runs.Enqueue{Queue: "q"})
	}
	held, err := tb.d.RunClaim(tb.ctx, &driver.RunClaimParams{Queue: "q", Owner: "bench", Limit: 10, Lease: time.Hour})
	require.NoError(b, err)
	const batch = 1000
	evs := make([]driver.RunEventInsert, batch)
	seq := int64(0)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for i := range evs {
			r := held[i%len(held)]
			if i%len(held) == 0 {
				seq++
			}
			evs[i] = driver.RunEventInsert{RunID: r.ID, Fence: r.Fence, Seq: seq, Kind: "step", Payload: []byte(`{"n":1}`)}
		}
		res, err := tb.d.RunEventAppend(tb.ctx, &driver.RunEventAppendParams{Events: evs})
		if err != nil || len(res.Fenced) > 0 {
			b.Fatal(err, res)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "rows/s")
}
