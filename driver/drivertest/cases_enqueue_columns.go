package drivertest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// enqueueOrderBatch is a batch mixing runs with and without a unique key:
// stretches without a key that fill a chunk, cross one, fall short of one
// and are too short for one, keys new, repeated within the batch and taken
// before it (by the run "taken"), then a last stretch of long runs without
// a key. Every run without a key differs from its neighbours in every
// column it sets, so one placed under another's id shows.
func enqueueOrderBatch(long int) []runs.Enqueue {
	var batch []runs.Enqueue
	keyless := func(n int) {
		for range n {
			i := len(batch)
			batch = append(batch, runs.Enqueue{Queue: fmt.Sprintf("q%d", i%5), Payload: fmt.Appendf(nil, `{"i": %d}`, i),
				Priority: i % 7, Delay: time.Duration(i%4)*time.Second + time.Duration(i)*1500*time.Nanosecond, MaxAttempts: 1 + i%9})
		}
	}
	keyed := func(key string) {
		batch = append(batch, runs.Enqueue{Queue: "q0", Payload: fmt.Appendf(nil, `{"key": %q}`, key), UniqueKey: key})
	}
	keyless(250)
	keyed("k1")
	keyless(3)
	keyed("taken")
	keyless(1)
	keyed("k1")
	keyless(100)
	keyed("k2")
	keyless(99)
	keyed("k2")
	keyed("k3")
	keyless(7)
	keyless(long)
	return batch
}

// checkEnqueueOrder checks a batch's results against its input: each run
// is its input's, fresh ids ascend in input order, a repeated or taken key
// returns its first run as Existing, and every run reads back as returned.
func checkEnqueueOrder(t *testing.T, get func(id int64) *driver.Run, batch []runs.Enqueue, out []driver.RunEnqueued,
	taken *driver.Run) {
	t.Helper()
	require.Len(t, out, len(batch))
	first := map[string]*driver.Run{"taken": taken}
	var last int64
	for i, e := range batch {
		o := out[i]
		if f, ok := first[e.UniqueKey]; ok && e.UniqueKey != "" {
			require.True(t, o.Existing, "run %d", i)
			require.Equal(t, f, o.Run, "run %d: the first run of key %s", i, e.UniqueKey)
			continue
		}
		require.False(t, o.Existing, "run %d", i)
		r := o.Run
		require.Greater(t, r.ID, last, "run %d: ids ascend in input order", i)
		last = r.ID
		if e.UniqueKey != "" {
			first[e.UniqueKey] = r
		}
		require.Equal(t, e.Queue, r.Queue, "run %d", i)
		require.JSONEq(t, string(e.Payload), string(r.Payload), "run %d", i)
		require.Equal(t, e.Priority, r.Priority, "run %d", i)
		attempts := e.MaxAttempts
		if attempts == 0 {
			attempts = runs.DefaultAttempts
		}
		require.Equal(t, attempts, r.MaxAttempts, "run %d", i)
		require.Equal(t, e.UniqueKey, r.UniqueKey, "run %d", i)
		require.Equal(t, runs.StateAvailable, r.State, "run %d", i)
		require.Equal(t, e.Delay.Truncate(time.Microsecond), r.ScheduledAt.Sub(r.CreatedAt), "run %d", i)
		require.Equal(t, r, get(r.ID), "run %d reads back as returned", i)
	}
}

// caseRunEnqueueBatchKeepsEveryColumn: one batch of enqueueOrderBatch,
// whose last stretch of 2100 runs without a key crosses every driver's
// chunk size, on the store's (fake) clock.
func caseRunEnqueueBatchKeepsEveryColumn(t *testing.T, f Factory) {
	e := newEnv(t, f)
	EnqueueInInputOrder(t, e.d)
}

// EnqueueInInputOrder enqueues enqueueOrderBatch(2100) on d after taking the
// key "taken", and checks checkEnqueueOrder. A driver's own tests call it
// on a store clock the Factory does not give (Postgres's real one).
func EnqueueInInputOrder(t *testing.T, d driver.Driver) {
	ctx := t.Context()
	pre, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q0", UniqueKey: "taken"}}})
	require.NoError(t, err)
	batch := enqueueOrderBatch(2100)
	out, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: batch})
	require.NoError(t, err)
	checkEnqueueOrder(t, func(id int64) *driver.Run {
		r, err := d.RunGet(ctx, &driver.RunGetParams{ID: id})
		require.NoError(t, err)
		return r
	}, batch, out, pre[0].Run)
	require.Equal(t, `{"i": 0}`, string(batch[0].Payload), "the caller's batch is not changed")
}
