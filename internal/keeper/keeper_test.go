package keeper_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/internal/startstop"
	"github.com/leasehold/leasehold/lease"
)

var start = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// store is the test's store of record for the keeper: it answers each
// flush from its own table of live leases, can hold a call open, can fail,
// and can let time pass on the fake clock while the call is in flight (the
// round trip). It records every call.
type store struct {
	clock *clock.Fake

	mu      sync.Mutex
	live    map[keeper.Ref]bool
	calls   [][]keeper.Ref
	fail    error
	rtt     time.Duration // advanced on the fake clock inside each call
	hold    chan struct{} // when set, each call waits for it to close
	entered chan struct{} // signalled when a call starts
}

func newStore(c *clock.Fake) *store {
	return &store{clock: c, live: map[keeper.Ref]bool{}, entered: make(chan struct{}, 16)}
}

func (s *store) Flush(ctx context.Context, refs []keeper.Ref) ([]int, error) {
	s.mu.Lock()
	s.calls = append(s.calls, append([]keeper.Ref(nil), refs...))
	hold, rtt, fail := s.hold, s.rtt, s.fail
	s.mu.Unlock()
	select {
	case s.entered <- struct{}{}:
	default:
	}
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if rtt > 0 {
		s.clock.Advance(rtt)
	}
	if fail != nil {
		return nil, fail
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var lost []int
	for i, r := range refs {
		if !s.live[r] {
			lost = append(lost, i)
		}
	}
	return lost, nil
}

func (s *store) set(f func(s *store)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *store) callCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

type bundle struct {
	clock *clock.Fake
	store *store
	k     *keeper.Keeper
	t     lease.Timing
}

func setup(t *testing.T, mode keeper.Mode) *bundle {
	t.Helper()
	c := clock.NewFake(start)
	s := newStore(c)
	tm := lease.RunDefaults()
	k, err := keeper.New(keeper.Config{Timing: tm, Flusher: s, Clock: c, Mode: mode, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	return &bundle{clock: c, store: s, k: k, t: tm}
}

// hold adds a live lease claimed now and returns its entry and context.
func (b *bundle) hold(t *testing.T, id, fence int64) (*keeper.Entry, context.Context) {
	t.Helper()
	ref := keeper.Ref{ID: id, Fence: fence}
	b.store.set(func(s *store) { s.live[ref] = true })
	ctx, cancel := context.WithCancelCause(context.Background())
	t.Cleanup(func() { cancel(nil) })
	e, err := b.k.Add(ref, b.clock.Now(), cancel)
	require.NoError(t, err)
	return e, ctx
}

func TestRenewReturnsWhileTheDrainsStoreCallIsHeldOpen(t *testing.T) {
	t.Parallel()
	b := setup(t, keeper.ModeWriteBehind)
	e, _ := b.hold(t, 1, 1)
	e.Renew()
	release := make(chan struct{})
	b.store.set(func(s *store) { s.hold = release })
	done := make(chan error)
	go func() { done <- b.k.DrainOnce(context.Background()) }()
	<-b.store.entered // the drain's store call is open and stuck
	for range 1000 {
		e.Renew() // would hang the test if it waited on the drain
	}
	require.NoError(t, e.Gate(context.Background(), time.Second), "the gate needs no store call either")
	close(release)
	require.NoError(t, <-done)
	require.Equal(t, 1, b.store.callCount())
}

func TestOneDrainIsOneStatementForAllDirtyEntries(t *testing.T) {
	t.Parallel()
	b := setup(t, keeper.ModeWriteBehind)
	const n = 500
	var es []*keeper.Entry
	for i := range n {
		e, _ := b.hold(t, int64(i+1), 1)
		es = append(es, e)
	}
	for _, e := range es[:n-100] { // 100 entries are not dirty
		e.Renew()
		e.Renew() // renewed twice: still one row
	}
	require.NoError(t, b.k.DrainOnce(context.Background()))
	require.Equal(t, 1, b.store.callCount(), "one store call for the whole drain")
	require.Len(t, b.store.calls[0], n-100, "every dirty entry, once")
	require.NoError(t, b.k.DrainOnce(context.Background()))
	require.Equal(t, 1, b.store.callCount(), "nothing dirty: no statement at all")
	st := b.k.Stats()
	require.Equal(t, uint64(1), st.Flushes)
	require.Equal(t, uint64(n-100), st.FlushedRows)
}

func TestReclaimWithNewFenceIsANewEntryEvenWithEqualExpiry(t *testing.T) {
	t.Parallel()
	b := setup(t, keeper.ModeWriteBehind)
	old, oldCtx := b.hold(t, 7, 3)
	// The store fences the old claim out and the same process claims the
	// run again at the same instant: the new lease's expiry equals the old.
	b.store.set(func(s *store) { delete(s.live, keeper.Ref{ID: 7, Fence: 3}) })
	cur, curCtx := b.hold(t, 7, 4)
	require.NotSame(t, old, cur)
	_, err := b.k.Add(keeper.Ref{ID: 7, Fence: 4}, b.clock.Now(), nil)
	require.ErrorIs(t, err, lease.ErrInvalid, "the same (run, fence) twice is refused")
	old.Renew()
	cur.Renew()
	require.NoError(t, b.k.DrainOnce(context.Background()))
	require.ElementsMatch(t, []keeper.Ref{{ID: 7, Fence: 3}, {ID: 7, Fence: 4}}, b.store.calls[0])
	require.ErrorIs(t, context.Cause(oldCtx), lease.ErrLeaseLost, "the old fence's entry is lost")
	require.NoError(t, curCtx.Err(), "the new fence's entry lives on")
	require.True(t, cur.Live())
}

func TestLostEntryIsCancelledAtOnceAndNeverFlushedAgain(t *testing.T) {
	t.Parallel()
	b := setup(t, keeper.ModeWriteBehind)
	e, ctx := b.hold(t, 1, 1)
	other, _ := b.hold(t, 2, 1)
	b.clock.Advance(b.t.Renew)
	// The store expired or fenced the lease (say a reclaim after a pause).
	b.store.set(func(s *store) { delete(s.live, e.Ref()) })
	e.Renew()
	other.Renew()
	require.NoError(t, b.k.DrainOnce(context.Background()))
	require.ErrorIs(t, context.Cause(ctx), lease.ErrLeaseLost)
	var le *keeper.LostError
	require.ErrorAs(t, context.Cause(ctx), &le)
	require.False(t, le.SelfStop)
	require.ErrorIs(t, e.Gate(context.Background(), time.Second), lease.ErrLeaseLost, "its gate is closed")

	// Even renewed and even were the store to take it back, the keeper
	// never flushes it again: a drain never revives a lost lease.
	b.store.set(func(s *store) { s.live[e.Ref()] = true })
	for range 3 {
		e.Renew()
		other.Renew()
		require.NoError(t, b.k.DrainOnce(context.Background()))
	}
	for _, call := range b.store.calls[1:] {
		require.Equal(t, []keeper.Ref{other.Ref()}, call)
	}
	require.Equal(t, uint64(1), b.k.Stats().Lost)
}

func TestFailedFlushNeverFailsTheRunAndIsRetried(t *testing.T) {
	t.Parallel()
	b := setup(t, keeper.ModeWriteBehind)
	e, ctx := b.hold(t, 1, 1)
	e.Renew()
	b.store.set(func(s *store) { s.fail = errors.New("connection reset") })
	b.clock.Advance(b.t.Drain)
	require.Error(t, b.k.DrainOnce(context.Background()))
	require.NoError(t, ctx.Err(), "one failed heartbeat never fails a run")
	require.True(t, e.Live())
	b.store.set(func(s *store) { s.fail = nil })
	require.NoError(t, b.k.DrainOnce(context.Background()), "the entry is dirty again for the retry")
	require.Len(t, b.store.calls, 2)
	require.Equal(t, []keeper.Ref{e.Ref()}, b.store.calls[1])
	require.Equal(t, uint64(1), b.k.Stats().FlushErrors)
}

func TestGatePassesSyncFlushesAndRefuses(t *testing.T) {
	t.Parallel()
	b := setup(t, keeper.ModeWriteBehind)
	e, ctx := b.hold(t, 1, 1)
	bg := context.Background()
	// Fresh claim: available = min(90-15, 45) - 0 = 45s; 40s + 5s margin fits.
	require.NoError(t, e.Gate(bg, 40*time.Second))
	require.Equal(t, 0, b.store.callCount(), "the happy path makes no store call")
	require.Equal(t, uint64(1), b.k.Stats().GatePass)

	// 10s later only 35s are available: a 40s effect needs one synchronous
	// flush, which the store confirms.
	b.clock.Advance(10 * time.Second)
	require.NoError(t, e.Gate(bg, 40*time.Second))
	require.Equal(t, 1, b.store.callCount())
	require.Equal(t, []keeper.Ref{e.Ref()}, b.store.calls[0])
	require.Equal(t, uint64(1), b.k.Stats().GateFlushPass)
	require.Zero(t, e.Lag(), "the flush's send is the new evidence")

	// Partitioned: the flush fails, so after 10s more the gate refuses a
	// 40s effect, stops the holder and says why.
	b.store.set(func(s *store) { s.fail = errors.New("no route to host") })
	b.clock.Advance(10 * time.Second)
	require.NoError(t, e.Gate(bg, 30*time.Second), "a shorter effect still fits: 35s >= 30s + 5s")
	err := e.Gate(bg, 40*time.Second)
	require.ErrorIs(t, err, lease.ErrLeaseRunway)
	var re *keeper.RunwayError
	require.ErrorAs(t, err, &re)
	require.Equal(t, 45*time.Second, re.Needed)
	require.Equal(t, 35*time.Second, re.Available)
	require.ErrorIs(t, context.Cause(ctx), lease.ErrLeaseRunway, "the holder is stopped")
	require.ErrorIs(t, e.Gate(bg, time.Second), lease.ErrLeaseRunway, "and dispatches nothing more")
	require.Equal(t, uint64(1), b.k.Stats().GateRefuse)
}

func TestGateRefusesWithoutAFlushWhenNoRunwayIsLeft(t *testing.T) {
	t.Parallel()
	b := setup(t, keeper.ModeWriteBehind)
	e, _ := b.hold(t, 1, 1)
	b.clock.Advance(b.t.Lease - b.t.Skew) // runway exactly 0
	require.ErrorIs(t, e.Gate(context.Background(), time.Second), lease.ErrLeaseRunway)
	require.Equal(t, 0, b.store.callCount(), "a flush with no runway left could not help")
}

func TestRunwayCountsFromSendTimeNotAnswerTime(t *testing.T) {
	t.Parallel()
	b := setup(t, keeper.ModeWriteBehind)
	e, _ := b.hold(t, 1, 1)
	b.clock.Advance(30 * time.Second)
	e.Renew()
	// The drain's round trip takes 4s: sent at +30s, answered at +34s.
	b.store.set(func(s *store) { s.rtt = 4 * time.Second })
	require.NoError(t, b.k.DrainOnce(context.Background()))
	require.Equal(t, 4*time.Second, e.Lag(), "lag counts from the send (+30s), not the answer (+34s)")
	// Available = 45s - 4s = 41s: a 36s effect (+5s margin) fits, 37s not.
	b.store.set(func(s *store) { s.rtt = 0; s.fail = errors.New("down") })
	require.NoError(t, e.Gate(context.Background(), 36*time.Second))
	require.ErrorIs(t, e.Gate(context.Background(), 37*time.Second), lease.ErrLeaseRunway,
		"from the answer time it would have passed")
}

func TestOutOfOrderConfirmationsNeverMoveEvidenceBack(t *testing.T) {
	t.Parallel()
	b := setup(t, keeper.ModeSync)
	e, _ := b.hold(t, 1, 1)
	t0 := b.clock.Now()
	b.clock.Advance(20 * time.Second)
	e.ConfirmSync(b.clock.Now())
	e.ConfirmSync(t0) // an older send answered late
	require.Zero(t, e.Lag())
}

func TestSelfStopFiresAtDStopFromTheLastConfirmedFlush(t *testing.T) {
	t.Parallel()
	b := setup(t, keeper.ModeWriteBehind)
	e, ctx := b.hold(t, 1, 1)
	b.clock.Advance(10 * time.Second)
	e.Renew()
	require.NoError(t, b.k.DrainOnce(context.Background())) // confirmed, sent at +10s
	b.store.set(func(s *store) { s.fail = errors.New("partitioned") })
	for range 5 { // renewals go on in memory; their flushes fail
		b.clock.Advance(b.t.Drain)
		e.Renew()
		require.Error(t, b.k.DrainOnce(context.Background()))
	}
	b.clock.Set(start.Add(10*time.Second + b.t.Stop - time.Nanosecond))
	b.k.WatchOnce()
	require.NoError(t, ctx.Err(), "one nanosecond before D_stop it still runs")
	b.clock.Advance(time.Nanosecond)
	b.k.WatchOnce()
	var le *keeper.LostError
	require.ErrorAs(t, context.Cause(ctx), &le)
	require.True(t, le.SelfStop)
	require.Equal(t, b.t.Stop, le.Lag, "measured from the last confirmed flush's send at +10s")
	require.Equal(t, uint64(1), b.k.Stats().SelfStops)
	// A stopped holder is never flushed, even once the store is back.
	b.store.set(func(s *store) { s.fail = nil })
	n := b.store.callCount()
	e.Renew()
	require.NoError(t, b.k.DrainOnce(context.Background()))
	require.Equal(t, n, b.store.callCount())
}

func TestSelfStopTimerRunsWithoutRenewals(t *testing.T) {
	t.Parallel()
	b := setup(t, keeper.ModeWriteBehind)
	_, ctx := b.hold(t, 1, 1)
	require.NoError(t, b.k.Start(context.Background()))
	defer b.k.Stop(context.Background())
	// Nothing renews; only the keeper's own timers run.
	for range 45 {
		b.clock.BlockUntil(2) // drain timer + watch ticker armed
		b.clock.Advance(time.Second)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("no self-stop at D_stop")
	}
	var le *keeper.LostError
	require.ErrorAs(t, context.Cause(ctx), &le)
	require.True(t, le.SelfStop)
	require.Equal(t, b.t.Stop, le.Lag, "stopped on the tick at D_stop (watch every min(1s, D_stop/8))")
}

func TestDrainLoopFlushesEveryTDrainAndBacksOff(t *testing.T) {
	t.Parallel()
	b := setup(t, keeper.ModeWriteBehind)
	e, ctx := b.hold(t, 1, 1)
	require.NoError(t, b.k.Start(context.Background()))
	defer b.k.Stop(context.Background())
	for range 6 { // 30s of healthy upkeep
		e.Renew()
		b.clock.BlockUntil(2)
		b.clock.Advance(b.t.Drain)
		<-b.store.entered
	}
	require.NoError(t, ctx.Err())
	require.Equal(t, 6, b.store.callCount())

	// A failing store: the retry comes after T_drain/8, then doubles,
	// capped at T_drain — not a full period later.
	b.store.set(func(s *store) { s.fail = errors.New("down") })
	e.Renew()
	b.clock.BlockUntil(2)
	b.clock.Advance(b.t.Drain)
	<-b.store.entered // fails
	for _, wait := range []time.Duration{b.t.Drain / 8, b.t.Drain / 4, b.t.Drain / 2, b.t.Drain, b.t.Drain} {
		b.clock.BlockUntil(2)
		b.clock.Advance(wait - time.Nanosecond)
		select {
		case <-b.store.entered:
			t.Fatalf("retried before %v", wait)
		case <-time.After(20 * time.Millisecond):
		}
		b.clock.Advance(time.Nanosecond)
		<-b.store.entered
	}
	// The store signals on entering a flush; the error is counted when it
	// returns. Once the drain waits on its timer again, it has been.
	b.clock.BlockUntil(2)
	require.NoError(t, ctx.Err(), "failed flushes alone never stop the holder")
	require.Equal(t, uint64(6), b.k.Stats().FlushErrors)
}

func TestSaturatingArithmeticOnPastDeadlines(t *testing.T) {
	t.Parallel()
	tm := lease.RunDefaults()
	far := time.Duration(1<<63 - 1)
	for _, c := range []struct{ sent, now time.Duration }{
		{0, far}, {-far, far}, {far, -far}, {-far - 1, far}, {0, 0},
	} {
		require.GreaterOrEqual(t, keeper.Runway(tm, c.sent, c.now), time.Duration(0))
		require.GreaterOrEqual(t, keeper.Available(tm, c.sent, c.now), time.Duration(0))
		require.GreaterOrEqual(t, keeper.Lag(c.sent, c.now), time.Duration(0))
	}
	require.Equal(t, far, keeper.Lag(-far, far), "saturates instead of wrapping")
	require.True(t, keeper.MustStop(tm, -far, far))
	require.False(t, keeper.GatePasses(tm, -far, far, time.Second))
	require.Equal(t, far, keeper.Needed(tm, far), "need saturates")
	require.False(t, keeper.GatePasses(tm, 0, 0, far))
	require.Equal(t, tm.Stop, keeper.Available(tm, far, 0), "a send in the future is lag 0, never negative")
}

func TestModeSwitchesAreReversibleAndCarryEvidence(t *testing.T) {
	t.Parallel()
	b := setup(t, keeper.ModeSync)
	e, ctx := b.hold(t, 1, 1)
	bg := context.Background()
	for _, m := range []keeper.Mode{keeper.ModeDark, keeper.ModeWriteBehind, keeper.ModeDark, keeper.ModeSync, keeper.ModeWriteBehind, keeper.ModeSync} {
		b.clock.Advance(b.t.Renew)
		// Confirm on the path the current mode decides from.
		if b.k.Mode() == keeper.ModeWriteBehind {
			e.Renew()
			require.NoError(t, b.k.DrainOnce(bg))
		} else {
			e.ConfirmSync(b.clock.Now())
		}
		require.NoError(t, b.k.SetMode(m))
		require.Zero(t, e.Lag(), "switch to %v: the newest evidence carries over", m)
		b.k.WatchOnce()
		require.NoError(t, ctx.Err())
	}
	require.ErrorIs(t, b.k.SetMode(keeper.Mode(9)), lease.ErrInvalid)
	for _, s := range []string{"sync", "dark", "writebehind"} {
		m, err := keeper.ParseMode(s)
		require.NoError(t, err)
		require.Equal(t, s, m.String())
	}
	_, err := keeper.ParseMode("async")
	require.ErrorIs(t, err, lease.ErrInvalid)
}

func TestDarkModeEnforcesSyncAndCountsDifferences(t *testing.T) {
	t.Parallel()
	b := setup(t, keeper.ModeDark)
	e, ctx := b.hold(t, 1, 1)
	bg := context.Background()
	// The sync path confirms; the drain's flushes fail. Write-behind alone
	// would refuse and self-stop; dark enforces sync and counts.
	b.store.set(func(s *store) { s.fail = errors.New("drain path down") })
	for range 10 {
		b.clock.Advance(5 * time.Second)
		e.Renew()
		_ = b.k.DrainOnce(bg)
		e.ConfirmSync(b.clock.Now())
		b.k.WatchOnce()
	}
	require.NoError(t, e.Gate(bg, 30*time.Second))
	require.NoError(t, ctx.Err(), "the sync decision is the one enforced")
	st := b.k.Stats()
	require.Equal(t, uint64(1), st.DarkGateDiffs, "the gate would have refused under write-behind")
	require.Equal(t, uint64(2), st.DarkStopDiffs, "self-stop would have fired at +45s and +50s")
	// A lease the drain finds lost is only marked in dark mode.
	b.store.set(func(s *store) { s.fail = nil; delete(s.live, e.Ref()) })
	e.Renew()
	require.NoError(t, b.k.DrainOnce(bg))
	require.NoError(t, ctx.Err())
	require.Equal(t, uint64(1), b.k.Stats().DarkLostDiffs)
	e.LoseSync(lease.ErrFenced) // the sync path's next renewal is refused
	require.ErrorIs(t, context.Cause(ctx), lease.ErrFenced)
	require.ErrorIs(t, context.Cause(ctx), lease.ErrLeaseLost)
}

func TestInvalidConfigIsRefused(t *testing.T) {
	t.Parallel()
	_, err := keeper.New(keeper.Config{Timing: lease.Timing{Lease: time.Second}, Flusher: newStore(nil)})
	require.ErrorIs(t, err, lease.ErrInvalidTiming)
	_, err = keeper.New(keeper.Config{Timing: lease.RunDefaults()})
	require.ErrorIs(t, err, lease.ErrInvalid)
	_, err = keeper.New(keeper.Config{Timing: lease.RunDefaults(), Flusher: newStore(nil), Mode: 7})
	require.ErrorIs(t, err, lease.ErrInvalid)
}

// TestStopDrainsOnceMore: a renewal made just before Stop reaches the
// store in one last drain (SPEC §2), and a Stop whose store call is stuck
// returns at its own context's end instead of waiting on the store.
func TestStopDrainsOnceMore(t *testing.T) {
	t.Parallel()
	b := setup(t, keeper.ModeWriteBehind)
	e, _ := b.hold(t, 1, 1)
	require.NoError(t, b.k.Start(context.Background()))
	<-b.k.Started()
	e.Renew()
	require.NoError(t, b.k.Stop(context.Background()))
	<-b.k.Stopped()
	require.Equal(t, 1, b.store.callCount(), "the dirty entry was flushed on the way out")
	require.ErrorIs(t, b.k.Start(context.Background()), startstop.ErrStopped)

	stuck := setup(t, keeper.ModeWriteBehind)
	se, _ := stuck.hold(t, 1, 1)
	stuck.store.set(func(s *store) { s.hold = make(chan struct{}) }) // never released
	require.NoError(t, stuck.k.Start(context.Background()))
	se.Renew()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-stuck.store.entered; cancel() }() // Stop's deadline comes while its last drain is stuck
	if err := stuck.k.Stop(ctx); err != nil {
		require.ErrorIs(t, err, context.Canceled, "Stop answers by its deadline")
	}
	<-stuck.k.Stopped() // the last drain gave up at Stop's deadline and the loops returned
}

// TestAFinishingHolderIsCountedLostByItsFinalWrite: a drain that finds a
// finishing holder's run missing counts nothing (its own completion took
// the run out of the running set, most likely); the final write decides —
// a refusal counts a lost lease, and so does a final write with no answer
// after such a drain, but not one without it.
func TestAFinishingHolderIsCountedLostByItsFinalWrite(t *testing.T) {
	t.Parallel()
	b := setup(t, keeper.ModeWriteBehind)
	completed, ctx := b.hold(t, 1, 1)
	unanswered, _ := b.hold(t, 2, 1)
	refused, _ := b.hold(t, 3, 1)
	quiet, _ := b.hold(t, 4, 1)
	for _, e := range []*keeper.Entry{completed, unanswered, refused, quiet} {
		e.Renew()
		e.Finishing()
	}
	b.store.set(func(s *store) {
		delete(s.live, completed.Ref())
		delete(s.live, unanswered.Ref())
	})
	require.NoError(t, b.k.DrainOnce(context.Background()))
	require.Zero(t, b.k.Stats().Lost, "a drain counts no finishing holder lost")
	require.NoError(t, ctx.Err(), "nor cancels it")

	unanswered.FinalFailed(false, context.DeadlineExceeded) // the drain found it missing: lost
	require.Equal(t, uint64(1), b.k.Stats().Lost)
	quiet.FinalFailed(false, context.DeadlineExceeded) // no drain found it missing: not counted
	require.Equal(t, uint64(1), b.k.Stats().Lost)
	refused.FinalFailed(true, lease.ErrFenced)
	require.Equal(t, uint64(2), b.k.Stats().Lost)
	require.ErrorIs(t, refused.Err(), lease.ErrFenced)
}
