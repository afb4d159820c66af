package server_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/server"
)

type healthReply struct {
	Clock struct {
		Steps, Drifts, Clears int64
		Alarm                 bool
		RunwayCutMS           int64 `json:"runway_cut_ms"`
	}
	Workers []struct {
		Worker, Mode  string
		DarkGateDiffs uint64 `json:"dark_gate_diffs"`
	}
	Throughput []struct {
		At                                   string
		Enqueued, Claimed, Completed, Failed int64
	}
	BucketMS int64 `json:"bucket_ms"`
}

// TestHealthFigures: GET /v1/stats/health on both stores — the attached
// workers' heartbeat modes, a quiet store clock, and the throughput ring
// counting what this server's API did into 10 s buckets on its clock,
// oldest first, old buckets falling off after ten minutes; a token that
// may not read every queue is refused.
func TestHealthFigures(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		clk := clock.NewFake(time.Unix(1_000_000, 0)) // a bucket boundary: 1e6 s is a multiple of 10 s
		b := setup(t, open, leasehold.Config{}, server.Config{Clock: clk})
		wk, err := b.c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{"q": 1}, Mode: leasehold.ModeDark})
		require.NoError(t, err)
		require.NoError(t, b.s.AttachWorker("w1", wk))

		b.enqueue(t, "mail", `{}`)
		b.enqueue(t, "mail", `{}`)
		clk.Advance(10 * time.Second)
		r := b.claimOne(t, "mail", "o")
		b.post(t, runPath(r.ID, "/complete"), map[string]any{"fence": r.Fence}).ok(t, &runBody{})
		r2 := b.claimOne(t, "mail", "o")
		b.post(t, runPath(r2.ID, "/fail"), map[string]any{"fence": r2.Fence, "reason": "x", "retry_after_ms": 0}).ok(t, &runBody{})

		var h healthReply
		b.get(t, "/v1/stats/health").ok(t, &h)
		require.Equal(t, int64(10_000), h.BucketMS)
		require.Len(t, h.Throughput, 60, "ten minutes of 10 s buckets")
		last, prev := h.Throughput[59], h.Throughput[58]
		require.Equal(t, time.Unix(1_000_010, 0).UTC().Format(time.RFC3339Nano), last.At)
		require.Equal(t, [4]int64{0, 2, 1, 1}, [4]int64{last.Enqueued, last.Claimed, last.Completed, last.Failed})
		require.Equal(t, [4]int64{2, 0, 0, 0}, [4]int64{prev.Enqueued, prev.Claimed, prev.Completed, prev.Failed})
		require.Equal(t, "dark", h.Workers[0].Mode)
		require.Equal(t, "w1", h.Workers[0].Worker)
		require.False(t, h.Clock.Alarm)
		require.Zero(t, h.Clock.Steps+h.Clock.Drifts)

		clk.Advance(9*time.Minute + 50*time.Second) // the enqueue bucket is now 60 buckets old: gone
		b.get(t, "/v1/stats/health").ok(t, &h)
		require.Equal(t, [4]int64{0, 2, 1, 1}, [4]int64{h.Throughput[0].Enqueued, h.Throughput[0].Claimed, h.Throughput[0].Completed, h.Throughput[0].Failed})
		clk.Advance(time.Hour)
		b.get(t, "/v1/stats/health").ok(t, &h)
		for _, s := range h.Throughput {
			require.Zero(t, s.Enqueued+s.Claimed+s.Completed+s.Failed, "an hour later the ring is empty")
		}

		b.as(t, b.mint(t, "read:queue:mail")).get(t, "/v1/stats/health").problem(t, "forbidden")
	})
}
