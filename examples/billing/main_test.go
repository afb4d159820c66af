package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/leaseholdtest"
	"github.com/leasehold/leasehold/runs"
)

func TestRun(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), filepath.Join(t.TempDir(), "b.db"), &out))
	require.Contains(t, out.String(), `order 1: invoice run 1 completed, receipt "rcpt-1-4200"`)
}

// TestPlaceOrderEnqueuesTheInvoiceInItsTransaction: the invoice run is
// seen inside the order's transaction before it commits, by nobody else,
// and goes with it on a rollback.
func TestPlaceOrderEnqueuesTheInvoiceInItsTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, d, err := open(ctx, filepath.Join(t.TempDir(), "b.db"))
	require.NoError(t, err)
	defer c.Close()
	tx, err := d.BeginTx(ctx)
	require.NoError(t, err)
	require.NoError(t, PlaceOrder(ctx, c, tx, 7, 999))
	leaseholdtest.RequireEnqueuedTx(ctx, t, tx, "invoice", &leaseholdtest.EnqueuedOpts{
		Payload: map[string]any{"order": 7, "cents": 999}, UniqueKey: "invoice:7"})
	require.NoError(t, tx.Rollback())
	leaseholdtest.RequireNotEnqueued(ctx, t, c, "invoice", nil)
}

// TestInvoiceChargesOnce works the invoice run synchronously under a fake
// clock: one charge, its receipt the run's result.
func TestInvoiceChargesOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, d, err := open(ctx, filepath.Join(t.TempDir(), "b.db"))
	require.NoError(t, err)
	defer c.Close()
	tx, err := d.BeginTx(ctx)
	require.NoError(t, err)
	require.NoError(t, PlaceOrder(ctx, c, tx, 1, 500))
	require.NoError(t, tx.Commit())
	g := newMemGateway()
	res := leaseholdtest.Work(ctx, t, c, "invoice", InvoiceHandler(g), &leaseholdtest.WorkOpts{Clock: clock.NewFake(time.Now())})
	require.NoError(t, res.Err)
	require.Equal(t, runs.StateCompleted, res.Run.State)
	require.JSONEq(t, `"rcpt-1-500"`, string(res.Run.Result))
	require.Len(t, g.charges, 1)
}

// TestInvoiceReconcilesAnUncertainCharge: an earlier attempt recorded the
// charge's intent and stopped. If the gateway has the charge, it is
// recorded as done and not charged again; if not, it is charged once.
func TestInvoiceReconcilesAnUncertainCharge(t *testing.T) {
	t.Parallel()
	for _, charged := range []bool{true, false} {
		ctx := context.Background()
		c, _, err := open(ctx, filepath.Join(t.TempDir(), "b.db"))
		require.NoError(t, err)
		defer c.Close()
		r := leaseholdtest.EnqueueUncertain(ctx, t, c, leasehold.Enqueue{Queue: "invoice", Payload: []byte(`{"order":3,"cents":100}`)}, "charge")
		g := newMemGateway()
		if charged {
			g.charges[leaseholdtestKey(r.ID)] = "rcpt-earlier"
		}
		res := leaseholdtest.Work(ctx, t, c, "invoice", InvoiceHandler(g), &leaseholdtest.WorkOpts{Clock: clock.NewFake(time.Now())})
		require.NoError(t, res.Err)
		require.Equal(t, runs.StateCompleted, res.Run.State)
		require.Len(t, g.charges, 1, "charged exactly once either way")
		if charged {
			require.JSONEq(t, `"rcpt-earlier"`, string(res.Run.Result))
		} else {
			require.JSONEq(t, `"rcpt-1-100"`, string(res.Run.Result))
		}
	}
}

// leaseholdtestKey is the charge's idempotency key: "<run id>:<key>".
func leaseholdtestKey(id int64) string { return fmt.Sprintf("%d:charge", id) }
