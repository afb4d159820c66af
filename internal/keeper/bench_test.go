package keeper_test

import (
	"context"
	"testing"
	"time"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/lease"
)

// benchEntry is a live lease on a keeper with the real clock, as a worker
// has it; its flusher is never reached on these paths.
func benchEntry(b *testing.B, mode keeper.Mode) *keeper.Entry {
	b.Helper()
	k, err := keeper.New(keeper.Config{Timing: lease.RunDefaults(), Clock: clock.Real(), Mode: mode,
		Flusher: keeper.FlusherFunc(func(context.Context, []keeper.Ref) ([]int, error) {
			b.Fatal("the benchmarked path made a store call")
			return nil, nil
		})})
	if err != nil {
		b.Fatal(err)
	}
	e, err := k.Add(keeper.Ref{ID: 1, Fence: 1}, time.Now(), func(error) {})
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkRenew is the holder's heartbeat under write-behind: in memory.
func BenchmarkRenew(b *testing.B) {
	e := benchEntry(b, keeper.ModeWriteBehind)
	b.ReportAllocs()
	for b.Loop() {
		e.Renew()
	}
}

// BenchmarkRenewParallel is many holders renewing one entry at once (the
// worst case: one cache line).
func BenchmarkRenewParallel(b *testing.B) {
	e := benchEntry(b, keeper.ModeWriteBehind)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			e.Renew()
		}
	})
}

// BenchmarkGate is the gate's happy path: a pure-local check that reads
// the monotonic clock, no store call.
func BenchmarkGate(b *testing.B) {
	for _, mode := range []keeper.Mode{keeper.ModeWriteBehind, keeper.ModeDark} {
		b.Run(mode.String(), func(b *testing.B) {
			e := benchEntry(b, mode)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := e.Gate(ctx, time.Second); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTimeNow is the yardstick of the gate: one time.Now(), in the
// same run (the gate's target is at most 1.2× this).
func BenchmarkTimeNow(b *testing.B) {
	b.ReportAllocs()
	var t time.Time
	for b.Loop() {
		t = time.Now()
	}
	_ = t
}
