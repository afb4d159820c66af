package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// TestRenewExpiredWhileWaitingForTheLock: a renewal — the write-behind
// drain or a sync renew — that starts while the run's lease is live, then
// waits for the run's row lock until the lease has expired on the store
// clock, renews nothing (SPEC §2: a renewal never revives an expired
// lease). The lock is held FOR SHARE, as an effect's or a transaction's
// held-run check holds it, modifying nothing: Postgres then does not
// re-evaluate the UPDATE's WHERE after the wait, so an expiry compared
// before the lock (on a scan the planner put ahead of the locking CTE)
// revived the lease. The expiry must be compared on a clock read with the
// row locked.
func TestRenewExpiredWhileWaitingForTheLock(t *testing.T) {
	t.Parallel()
	for _, many := range []bool{true, false} {
		name := "RunRenew"
		if many {
			name = "RunRenewMany"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			d, url, schema := openIn(t, Config{}) // the store clock: the server's
			_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q"}, {Queue: "q"}}})
			require.NoError(t, err)
			got, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "o", Limit: 2, Lease: 8 * time.Second})
			require.NoError(t, err)
			require.Len(t, got, 2)
			run := got[0]

			tx, lockerPID := holdLock(t, url, schema, "SELECT 1 FROM runs WHERE id = $1 FOR SHARE", run.ID)

			type result struct {
				renewed bool
				err     error
			}
			done := make(chan result, 1)
			go func() {
				ctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
				if many {
					// The whole held set, as a drain carries it: the run
					// expiring soonest is first in the expiry index.
					res, err := d.RunRenewMany(ctx, &driver.RunRenewManyParams{Owner: "o", Lease: 30 * time.Second,
						Runs: []driver.RunLeaseRef{{ID: got[0].ID, Fence: got[0].Fence}, {ID: got[1].ID, Fence: got[1].Fence}}})
					renewed := false
					if err == nil {
						for _, id := range res.Renewed {
							renewed = renewed || id == run.ID
						}
					}
					done <- result{renewed, err}
					return
				}
				_, err := d.RunRenew(ctx, &driver.RunRenewParams{ID: run.ID, Fence: run.Fence, Owner: "o", Lease: 30 * time.Second})
				done <- result{err == nil, err}
			}()

			// The renewal waits on the locker, and it was seen waiting while
			// the lease was still live on the store clock.
			var expires time.Time
			require.NoError(t, tx.QueryRow(ctx, "SELECT expires_at FROM runs WHERE id = $1", run.ID).Scan(&expires))
			seenAt := waitBlockedBy(t, url, lockerPID, "the renewal")
			require.True(t, seenAt.Before(expires), "the renewal was first seen waiting at %v, after the lease's expiry %v", seenAt, expires)
			sleepPastExpiry(t, tx, "SELECT expires_at FROM runs WHERE id = $1", run.ID)
			require.NoError(t, tx.Commit(ctx)) // the lock is released, nothing modified

			r := <-done
			if !many {
				require.Error(t, r.err, "a sync renewal that waited past the expiry revived the lease")
			} else {
				require.NoError(t, r.err)
			}
			require.False(t, r.renewed, "a renewal that waited past the expiry revived the lease")
			cur, err := d.RunGet(ctx, &driver.RunGetParams{ID: run.ID})
			require.NoError(t, err)
			require.True(t, expires.Equal(cur.ExpiresAt), "the expired lease's expiry was moved: %v, was %v", cur.ExpiresAt, expires)
		})
	}
}
