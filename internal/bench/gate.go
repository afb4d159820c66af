package bench

import (
	"context"
	"runtime"
	"sort"
	"time"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/lease"
)

// GateRound is one round of the gate benchmark: the three loops run back
// to back, so their ratio is measured under the same load.
type GateRound struct {
	Now, Gate, Renew        float64 // ns/op
	Calls                   int64   // calls of each loop in the round
	GateAllocs, RenewAllocs uint64  // heap allocations during all the calls
}

// Ratio is the gate's cost in units of one time.Now().
func (r GateRound) Ratio() float64 { return r.Gate / r.Now }

// Gate measures, rounds times, one time.Now(), the write-behind gate's
// happy path (keeper.Entry.Gate: no store call) and keeper.Entry.Renew,
// side by side. Allocations are the heap allocations of the process
// during each loop (runtime.MemStats.Mallocs), over all its calls.
func Gate(rounds int) ([]GateRound, error) {
	k, err := keeper.New(keeper.Config{Timing: lease.RunDefaults(), Clock: clock.Real(), Mode: keeper.ModeWriteBehind,
		Flusher: keeper.FlusherFunc(func(context.Context, []keeper.Ref) ([]int, error) {
			panic("the benchmarked gate path made a store call")
		})})
	if err != nil {
		return nil, err
	}
	e, err := k.Add(keeper.Ref{ID: 1, Fence: 1}, time.Now(), func(error) {})
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	var sink time.Time
	var gateErr error
	loops := []func(n int){
		func(n int) {
			for range n {
				sink = time.Now()
			}
		},
		func(n int) {
			for range n {
				if err := e.Gate(ctx, time.Second); err != nil {
					gateErr = err
				}
			}
		},
		func(n int) {
			for range n {
				e.Renew()
			}
		},
	}
	// Each round runs the three loops in turn, slice after slice (about
	// 20 ms each), so load that comes and goes falls on all three alike.
	const slices, n = 40, 200_000
	out := make([]GateRound, rounds)
	for i := range out {
		var took [3]time.Duration
		var mallocs [3]uint64
		var ms runtime.MemStats
		for range slices {
			for j, loop := range loops {
				runtime.ReadMemStats(&ms)
				before := ms.Mallocs
				start := time.Now()
				loop(n)
				took[j] += time.Since(start)
				runtime.ReadMemStats(&ms)
				mallocs[j] += ms.Mallocs - before
			}
		}
		if gateErr != nil {
			return nil, gateErr
		}
		per := func(j int) float64 { return float64(took[j].Nanoseconds()) / (slices * n) }
		out[i] = GateRound{Now: per(0), Gate: per(1), Renew: per(2),
			Calls: slices * n, GateAllocs: mallocs[1], RenewAllocs: mallocs[2]}
	}
	_ = sink
	return out, nil
}

// MedianWorst returns the median and the largest of xs.
func MedianWorst(xs []float64) (median, worst float64) {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2], s[len(s)-1]
}
