package scheduler

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/rt"
)

// TestMemoryPerQueuedEvent measures the Go heap one event takes while it
// waits in the group committer's buffer (the committer not started, so
// nothing is flushed), as Emit queues it: a 48-byte JSON payload of its
// own (allocated by the caller, counted apart), a shared kind, one of 100
// runs' streams. The figure is the queue's share; it prints it for
// docs/BENCHMARKS.md and bounds it.
func TestMemoryPerQueuedEvent(t *testing.T) {
	const n = 100_000
	ctx := context.Background()
	c := NewEventCommitter(nil, EventCommitterConfig{Buffer: n})
	streams := make([]*eventStream, 100)
	for i := range streams {
		streams[i] = newEventStream(rt.Real(clock.Real()))
	}
	payloads := make([][]byte, n) // built before the first reading: Emit's caller owns them until queued
	for i := range payloads {
		payloads[i] = fmt.Appendf(nil, `{"step":"charge","amount":%06d,"currency":"EUR"}`, i)
	}
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	for i := range n {
		s := streams[i%len(streams)]
		require.NoError(t, c.add(ctx, eventItem{ev: driver.RunEventInsert{RunID: int64(i % 100), Fence: 1, Seq: int64(i/100 + 1),
			Kind: "step", Payload: payloads[i]}, s: s}))
	}
	per := (float64(heap()) - float64(before)) / n
	runtime.KeepAlive(c)
	runtime.KeepAlive(payloads) // alive throughout, so the figure is the queue's alone
	t.Logf("heap per queued event: %.0f bytes of queue (an eventItem is %d bytes; the rest is the slice's growth slack) + its 48-byte payload",
		per, unsafe.Sizeof(eventItem{}))
	require.Less(t, per, 256.0, "a queued event is its slot in the queue, nothing more")
}
