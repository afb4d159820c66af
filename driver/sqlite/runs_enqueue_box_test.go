package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// TestChunkBoxes: a chunk's parameters are handed out boxed, one box per
// run of repeated values (no allocation while a value repeats), and a
// changed value gets a box of its own.
func TestChunkBoxes(t *testing.T) {
	var b chunkBoxes
	const now = int64(1_800_000_000_000_000)
	require.Equal(t, "a", b.queue("a"))
	require.Equal(t, []byte(`{"x":1}`), b.payload([]byte(`{"x":1}`)))
	require.Equal(t, now, b.scheduled(now, 0))
	q, p := "a", []byte(`{"x":1}`) // equal values, other memory
	allocs := testing.AllocsPerRun(100, func() {
		_, _, _ = b.queue(q), b.payload(p), b.scheduled(now, 0)
	})
	require.Zero(t, allocs, "repeated values reuse their box")
	require.Equal(t, "b", b.queue("b"))
	require.Equal(t, []byte(`{"x":2}`), b.payload([]byte(`{"x":2}`)))
	require.Nil(t, b.payload(nil))
	require.Equal(t, []byte{}, b.payload([]byte{}))
	require.Equal(t, now+1500, b.scheduled(now, 1500*time.Microsecond))
	require.Equal(t, now, b.scheduled(now, 0))
}

// TestChunkEnqueueStoresEachRun: a keyless batch (one runInsertChunkSQL)
// whose queues, payloads and delays repeat and change stores each run as
// given — a shared box never carries a value to the wrong run.
func TestChunkEnqueueStoresEachRun(t *testing.T) {
	d := openGroupTest(t)
	ctx := context.Background()
	var es []runs.Enqueue
	for i := range 12 {
		e := runs.Enqueue{Queue: []string{"a", "a", "b"}[i%3], Payload: [][]byte{nil, []byte(`[1]`), []byte(`[1]`), []byte(`[2]`)}[i%4]}
		if i%5 == 4 {
			e.Delay = time.Duration(i) * time.Second
		}
		es = append(es, e)
	}
	got, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es})
	require.NoError(t, err)
	require.Len(t, got, len(es))
	for i, g := range got {
		stored, err := d.RunGet(ctx, &driver.RunGetParams{ID: g.Run.ID})
		require.NoError(t, err)
		require.Equal(t, stored, g.Run, "run %d", i)
		require.Equal(t, es[i].Queue, stored.Queue, "run %d", i)
		want := es[i].Payload
		if want == nil {
			want = []byte("null") // the validating driver's default
		}
		require.JSONEq(t, string(want), string(stored.Payload), "run %d", i)
		require.Equal(t, stored.CreatedAt.Add(es[i].Delay), stored.ScheduledAt, "run %d", i)
	}
}
