package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// TestAppendExpiredWhileWaitingForTheLock: an append that starts while
// the lease is live, then waits for the head's row lock — held by a
// transaction that only locks it and modifies nothing — until the lease
// has expired on the store clock, is refused 'expired' and writes no
// entry (SPEC §5: no write accepted while the lease is expired on the
// store clock). It holds the one-statement append to a clock read under
// the lock: a clock read when the statement started (or in the UPDATE's
// WHERE, which Postgres does not re-evaluate after waiting on a mere
// lock) accepts this append.
func TestAppendExpiredWhileWaitingForTheLock(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mode  string
		batch int // 1: appendOneSQL; more: appendManySQL
	}{{"FOR UPDATE", 1}, {"FOR NO KEY UPDATE", 1}, {"FOR UPDATE", 3}, {"FOR NO KEY UPDATE", 2}} {
		mode := c.mode
		t.Run(fmt.Sprintf("%s/batch%d", mode, c.batch), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			d, url, schema := openIn(t, Config{}) // the store clock: the server's
			w, err := d.WorldCreate(ctx, &driver.WorldCreateParams{World: "w1", Home: "home", Term: 8 * time.Second})
			require.NoError(t, err)

			tx, lockerPID := holdLock(t, url, schema, "SELECT 1 FROM worlds WHERE id = 'w1' "+mode)

			type result struct {
				out []journal.AppendOutcome
				err error
			}
			done := make(chan result, 1)
			go func() {
				ctx, cancel := context.WithTimeout(ctx, time.Minute) // as the group committer: the timeouts' set_config too
				defer cancel()
				reqs := make([]journal.AppendRequest, c.batch)
				for i := range reqs {
					reqs[i] = journal.AppendRequest{Holder: "home", Epoch: w.Epoch, SeenPosition: w.GrantedAt,
						Kind: "x", Payload: []byte(`{}`)}
				}
				out, err := d.JournalAppend(ctx, &driver.JournalAppendParams{World: "w1", Requests: reqs})
				done <- result{out, err}
			}()

			// The append waits on the locker, and it was seen waiting — so
			// its statement's clock read was earlier still — while the
			// lease was live.
			seenAt := waitBlockedBy(t, url, lockerPID, "the append")
			var expires time.Time
			require.NoError(t, tx.QueryRow(ctx, "SELECT expires_at FROM worlds WHERE id = 'w1'").Scan(&expires))
			require.True(t, seenAt.Before(expires), "the append was first seen waiting at %v, after the lease's expiry %v", seenAt, expires)
			sleepPastExpiry(t, tx, "SELECT expires_at FROM worlds WHERE id = $1", "w1")
			require.NoError(t, tx.Commit(ctx)) // the lock is released, nothing modified

			r := <-done
			require.NoError(t, r.err)
			require.Len(t, r.out, c.batch)
			for _, o := range r.out {
				var refused *journal.RefusedError
				require.ErrorAs(t, o.Err, &refused, "an append that waited past the expiry was accepted at %d", o.Position)
				require.Equal(t, journal.Reason("expired"), refused.Reason)
			}
			es, err := d.JournalRead(ctx, &driver.JournalReadParams{World: "w1", From: 1, Limit: 100})
			require.NoError(t, err)
			for _, e := range es {
				require.NotEqual(t, journal.Kind("x"), e.Kind, "the refused append's entry was written at %d", e.Position)
			}
			auditHead(t, d, "w1")
		})
	}
}

// TestAppendKeyedWhileAnotherAppendsTheKey: a keyed single append that
// waits for the head's lock while another transaction appends the same
// key answers that transaction's position and writes nothing — its key
// probe read a snapshot from before the other append, so the one
// statement must not take it for current once the head moved (it hands
// the append to the function, which reads the journal afresh).
func TestAppendKeyedWhileAnotherAppendsTheKey(t *testing.T) {
	t.Parallel()
	for _, batch := range []int{1, 2} { // 1: appendOneSQL; 2: appendManySQL
		t.Run(fmt.Sprintf("batch%d", batch), func(t *testing.T) {
			t.Parallel()
			appendKeyedWhileAnotherAppendsTheKey(t, batch)
		})
	}
}

// appendKeyedWhileAnotherAppendsTheKey is the test with a batch of n
// requests: the first keyed "k" (the other transaction's key), the rest
// keyed afresh, which the driver's append then writes after the other's.
func appendKeyedWhileAnotherAppendsTheKey(t *testing.T, n int) {
	ctx := context.Background()
	d, url, schema := openIn(t, Config{})
	w, err := d.WorldCreate(ctx, &driver.WorldCreateParams{World: "w1", Home: "home", Term: time.Hour})
	require.NoError(t, err)

	other, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { other.Close(context.Background()) })
	_, err = other.Exec(ctx, "SET search_path = "+pgx.Identifier{schema}.Sanitize())
	require.NoError(t, err)
	tx, err := other.Begin(ctx)
	require.NoError(t, err)
	var otherPos int64
	require.NoError(t, tx.QueryRow(ctx, `SELECT o_position FROM leasehold_journal_append('w1', NULL, ARRAY['home'],
		ARRAY[$1::bigint], ARRAY[$2::bigint], ARRAY['x'], ARRAY['k'], ARRAY['{"by":"other"}'::bytea], ARRAY[0::bigint], ''::bytea, NULL, false)`,
		w.Epoch, w.GrantedAt).Scan(&otherPos))
	var otherPID uint32
	require.NoError(t, tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&otherPID))

	type result struct {
		out []journal.AppendOutcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		reqs := []journal.AppendRequest{{Holder: "home", Epoch: w.Epoch, SeenPosition: w.GrantedAt,
			Kind: "x", Key: "k", Payload: []byte(`{"by":"driver"}`)}}
		for i := 1; i < n; i++ {
			reqs = append(reqs, journal.AppendRequest{Holder: "home", Epoch: w.Epoch, SeenPosition: w.GrantedAt,
				Kind: "x", Key: fmt.Sprintf("k%d", i), Payload: []byte(`{"by":"driver"}`)})
		}
		out, err := d.JournalAppend(ctx, &driver.JournalAppendParams{World: "w1", Requests: reqs})
		done <- result{out, err}
	}()
	watch, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { watch.Close(context.Background()) })
	waiting := false
	for range 100000 {
		var n int
		require.NoError(t, watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE $1::int = ANY (pg_blocking_pids(pid))`, int32(otherPID)).Scan(&n))
		if n > 0 {
			waiting = true
			break
		}
	}
	require.True(t, waiting, "the append never waited for the head's lock")
	require.NoError(t, tx.Commit(ctx))

	r := <-done
	require.NoError(t, r.err)
	require.Len(t, r.out, n)
	require.NoError(t, r.out[0].Err)
	require.Equal(t, otherPos, r.out[0].Position, "the key's first position")
	for i := 1; i < n; i++ {
		require.NoError(t, r.out[i].Err)
		require.Equal(t, otherPos+int64(i), r.out[i].Position, "a fresh key after the other's")
	}
	es, err := d.JournalRead(ctx, &driver.JournalReadParams{World: "w1", From: 1, Limit: 100})
	require.NoError(t, err)
	keyed := 0
	for _, e := range es {
		if e.Key == "k" {
			keyed++
			require.Equal(t, `{"by":"other"}`, string(e.Payload))
		}
	}
	require.Equal(t, 1, keyed)
	auditHead(t, d, "w1")
}
