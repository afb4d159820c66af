package leasehold_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// TestEnqueueTxInsideRunHandleTxEnqueuesTheFollowUpOnce: a handler
// enqueues its follow-up run with EnqueueTx inside RunHandle.Tx, so the
// follow-up commits with the effect, exactly once: the first attempt's
// transaction fails after the enqueue (rolled back: no follow-up), the
// second commits it and then fails the attempt, the third finds the
// effect committed and does not call fn again. One follow-up, on both
// stores.
func TestEnqueueTxInsideRunHandleTxEnqueuesTheFollowUpOnce(t *testing.T) {
	t.Parallel()
	for k, s := range hostileClients {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			var c *leasehold.Client
			var calls atomic.Int32
			ready := make(chan struct{})
			c = snoozeClient(t, k, leasehold.WorkerConfig{Backoff: runs.Backoff{Base: time.Millisecond, Max: time.Millisecond}},
				func(ctx context.Context, r *leasehold.RunHandle) error {
					<-ready
					err := r.Tx(ctx, "follow-up", func(tx any) error {
						_, err := c.EnqueueTx(ctx, tx, leasehold.Enqueue{Queue: "next", Payload: r.Payload})
						if err == nil && calls.Add(1) == 1 {
							return errors.New("the first transaction fails after the enqueue")
						}
						return err
					})
					if err != nil || r.Attempt < 3 {
						return errors.Join(err, errors.New("fail the attempt after the commit"))
					}
					return nil
				})
			close(ready)
			ctx := context.Background()
			enq, err := c.Enqueue(ctx, leasehold.Enqueue{Queue: "q", Payload: []byte(`{"order":9}`), MaxAttempts: 5})
			require.NoError(t, err)
			done := settled(t, c, enq[0].Run.ID, func(r *leasehold.Run) bool { return r.State == runs.StateCompleted })
			require.Equal(t, 3, done.Attempt)
			require.Equal(t, int32(2), calls.Load(), "fn ran in attempts 1 and 2, not 3 (the effect was committed)")
			next, err := c.Driver().RunClaim(ctx, claimAll("next"))
			require.NoError(t, err)
			require.Len(t, next, 1, "exactly one follow-up run")
			require.Equal(t, `{"order":9}`, string(next[0].Payload))
		})
	}
}

// claimAll claims every run of queue up to one batch, for a check.
func claimAll(queue string) *driver.RunClaimParams {
	return &driver.RunClaimParams{Queue: queue, Owner: "check", Limit: runs.MaxClaimBatch, Lease: time.Minute}
}
