package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// worldW1 is a harness with world w1 created.
func worldW1(t *testing.T) *Driver {
	t.Helper()
	d := harness(t).Driver.(*Driver)
	_, err := d.WorldCreate(context.Background(), &driver.WorldCreateParams{World: "w1", Home: "home", Term: term})
	require.NoError(t, err)
	return d
}

// lockW1 holds w1's head row lock in a transaction of d's critical pool,
// as another writer of the world would, until the test rolls it back.
func lockW1(t *testing.T, d *Driver) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	blocker, err := d.s.critical.Begin(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { blocker.Rollback(context.Background()) }) //nolint:errcheck // a no-op after the test's rollback
	_, err = blocker.Exec(ctx, `SELECT 1 FROM worlds WHERE id = 'w1' FOR UPDATE`)
	require.NoError(t, err)
	return blocker
}

// appendW1 appends one data entry to w1 as its home holder.
func appendW1(ctx context.Context, d *Driver) ([]journal.AppendOutcome, error) {
	return d.JournalAppend(ctx, &driver.JournalAppendParams{World: "w1", Requests: []journal.AppendRequest{appendReq("home", 1, 1, `{}`)}})
}

// An append the server committed is answered as written even when the
// caller's deadline passed before the client read the answer (here the
// client reads only once the deadline has passed). Under the caller's own
// context that answer was lost: the caller heard its context's error for
// an append that was in the journal — an unknown outcome on the happy
// path (answerCtx).
func TestAppendAnsweredAfterTheCallersDeadline(t *testing.T) {
	t.Parallel()
	d, ctx := worldW1(t), context.Background()

	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	d.s.afterSend = func() { <-short.Done() } // the answer is read after the deadline
	out, err := appendW1(short, d)
	d.s.afterSend = nil
	require.Error(t, short.Err(), "the deadline passed before the answer was read")
	require.NoError(t, err, "the server committed: the caller hears so")
	require.Equal(t, int64(2), out[0].Position)
	entries, err := d.JournalRead(ctx, &driver.JournalReadParams{World: "w1", From: 2})
	require.NoError(t, err)
	require.Len(t, entries, 1)
	auditHead(t, d, "w1")
}

// A client that sends its append late (descheduled between setting the
// server's timeouts and sending) leaves the server deciding after the
// caller's deadline: here the world's lock, held by another transaction,
// is freed at that deadline, so the server either takes it and commits or
// times out first. Whichever it did, the caller hears it: written with
// its position, or "nothing written" — never its context's error for an
// append that committed (what this test saw before answerCtx, in most
// runs: the caller gave up at the deadline, the lock was freed, the
// server committed).
func TestAppendSentLateIsAnsweredByTheServer(t *testing.T) {
	t.Parallel()
	d, ctx := worldW1(t), context.Background()

	blocker := lockW1(t, d)

	// A deadline of a second: the server's timeouts are set to 750 ms
	// from when the batch is built; the client then waits 300 ms before
	// sending, so the server gives up at about 1.05 s — after the
	// deadline, and 200 ms before the client stops listening (1.25 s).
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	d.s.beforeSend = func() { time.Sleep(300 * time.Millisecond) } // the client's delay, not a wait for an event
	released := make(chan error, 1)
	go func() {
		<-short.Done()
		released <- blocker.Rollback(ctx)
	}()
	out, err := appendW1(short, d)
	d.s.beforeSend = nil
	require.NoError(t, <-released)

	entries, rerr := d.JournalRead(ctx, &driver.JournalReadParams{World: "w1", From: 2})
	require.NoError(t, rerr)
	if err != nil {
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.ErrorContains(t, err, "nothing written")
		require.Empty(t, entries, "the caller heard nothing written")
	} else {
		require.Equal(t, int64(2), out[0].Position)
		require.Len(t, entries, 1, "the caller heard written")
	}
	t.Logf("answer: %v (entries after: %d)", err, len(entries))
	auditHead(t, d, "w1")
}

// A caller that cancels (rather than reaching its deadline) still cuts
// its append short: here the append waits for the world's lock, the
// caller cancels once it was sent, and the call returns the cancellation
// while the lock is still held — it did not wait for the server's
// timeout, seconds away.
func TestAppendCancelledIsCutShort(t *testing.T) {
	t.Parallel()
	d, ctx := worldW1(t), context.Background()

	blocker := lockW1(t, d)

	call, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	d.s.afterSend = cancel
	_, err := appendW1(call, d)
	d.s.afterSend = nil
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, blocker.Rollback(ctx), "the lock was held until the call returned")
}
