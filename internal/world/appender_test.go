package world_test

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/world"
	"github.com/leasehold/leasehold/journal"
)

// goid is the calling goroutine's id, from its stack header.
func goid() uint64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	buf = bytes.TrimPrefix(buf, []byte("goroutine "))
	id, _ := strconv.ParseUint(string(buf[:bytes.IndexByte(buf, ' ')]), 10, 64)
	return id
}

// storeCalls is a store whose JournalAppend records which goroutine made
// each call and with how many requests, and can hold a call (hold) until
// released or until its context ends.
type storeCalls struct {
	driver.Driver
	mu    sync.Mutex
	gids  []uint64
	sizes []int
	hold  chan struct{} // non-nil: the next call waits on it
	held  chan struct{} // closed once a call is held
}

func (s *storeCalls) JournalAppend(ctx context.Context, p *driver.JournalAppendParams) ([]journal.AppendOutcome, error) {
	s.mu.Lock()
	s.gids = append(s.gids, goid())
	s.sizes = append(s.sizes, len(p.Requests))
	hold, held := s.hold, s.held
	s.hold = nil
	s.mu.Unlock()
	if hold != nil {
		close(held)
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.Driver.JournalAppend(ctx, p)
}

func newStoreCalls(t *testing.T) (*storeCalls, journal.AppendRequest) {
	d := openSQLite(t)
	w, err := d.WorldCreate(context.Background(), &driver.WorldCreateParams{World: "w", Home: "h", Term: time.Hour})
	require.NoError(t, err)
	return &storeCalls{Driver: d}, journal.AppendRequest{Holder: "h", Epoch: w.Epoch, SeenPosition: w.GrantedAt,
		Kind: "x", Payload: []byte(`{}`)}
}

// A lone appender's appends go to the store from its own goroutine, one
// batch each: no committer goroutine is started for them.
func TestLoneAppendCommitsOnTheCallersGoroutine(t *testing.T) {
	s, req := newStoreCalls(t)
	app := world.NewAppender(s, world.AppenderConfig{})
	defer app.Stop(context.Background())
	ctx := context.Background()
	for i := range 5 {
		pos, err := app.Append(ctx, "w", req)
		require.NoError(t, err)
		require.Equal(t, int64(2+i), pos) // the grant is position 1
	}
	me := goid()
	require.Equal(t, []uint64{me, me, me, me, me}, s.gids)
	batches, appends := app.Stats()
	require.Equal(t, [2]int64{5, 5}, [2]int64{batches, appends})
}

// Appends that arrive while a lone append is in the store queue behind
// it, and a committer sends them together once it is done.
func TestAppendsQueuedBehindALoneAppendAreCommittedTogether(t *testing.T) {
	s, req := newStoreCalls(t)
	s.hold, s.held = make(chan struct{}), make(chan struct{})
	hold, held := s.hold, s.held
	app := world.NewAppender(s, world.AppenderConfig{})
	defer app.Stop(context.Background())
	ctx := context.Background()
	first := make(chan int64, 1)
	go func() {
		pos, err := app.Append(ctx, "w", req)
		assert.NoError(t, err)
		first <- pos
	}()
	<-held
	var wg sync.WaitGroup
	positions := make(chan int64, 3)
	for range 3 {
		wg.Go(func() {
			pos, err := app.Append(ctx, "w", req)
			assert.NoError(t, err)
			positions <- pos
		})
	}
	// The three are queued (not sent: the store has one call so far).
	require.Eventually(t, func() bool {
		_, appends := app.Stats()
		s.mu.Lock()
		defer s.mu.Unlock()
		return appends == 0 && len(s.gids) == 1 && world.Queued(app) == 3
	}, 10*time.Second, time.Millisecond)
	close(hold)
	wg.Wait()
	close(positions)
	require.Equal(t, int64(2), <-first)
	got := map[int64]bool{}
	for p := range positions {
		got[p] = true
	}
	require.Equal(t, map[int64]bool{3: true, 4: true, 5: true}, got)
	require.Equal(t, []int{1, 3}, s.sizes)
	require.NotEqual(t, s.gids[0], s.gids[1], "the queued batch is sent by a committer")
	app.Wait()
}

// A lone append's store call ends with its caller's context: Append
// returns the context's error, and the world takes appends again.
func TestLoneAppendEndsWithItsContext(t *testing.T) {
	s, req := newStoreCalls(t)
	s.hold, s.held = make(chan struct{}), make(chan struct{})
	held := s.held
	app := world.NewAppender(s, world.AppenderConfig{})
	defer app.Stop(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := app.Append(ctx, "w", req)
		done <- err
	}()
	<-held
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	pos, err := app.Append(context.Background(), "w", req)
	require.NoError(t, err)
	require.Equal(t, int64(2), pos, "the cancelled append wrote nothing")
}

// Stop's deadline ends a lone append's store call as it ends a
// committer's.
func TestStopDeadlineEndsALoneAppend(t *testing.T) {
	s, req := newStoreCalls(t)
	s.hold, s.held = make(chan struct{}), make(chan struct{})
	held := s.held
	app := world.NewAppender(s, world.AppenderConfig{})
	done := make(chan error, 1)
	go func() {
		_, err := app.Append(context.Background(), "w", req)
		done <- err
	}()
	<-held
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, app.Stop(ctx), context.DeadlineExceeded)
	require.ErrorIs(t, <-done, context.Canceled)
	app.Wait()
}
