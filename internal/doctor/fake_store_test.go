package doctor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/internal/doctor"
	"github.com/leasehold/leasehold/lease"
)

// epoch is where every fake clock starts.
var epoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// fakeStore is a store whose clock is a model of the app's fake clock:
// offset + rate × elapsed + the steps due so far. Each call takes its round
// trip out of the fake clock, reading the store clock a fraction frac of the
// way through it (0: as the request arrives, 1: as the reply leaves), so a
// test can put the reading anywhere inside the probe's bound.
//
// Only the sampling goroutine calls StoreNow; calls counts them.
type fakeStore struct {
	clk    *clock.Fake
	offset time.Duration
	rate   float64 // store seconds gained per app second
	steps  []fakeStep
	rtts   []time.Duration // per call, cycling; default 1ms
	fracs  []float64       // per call, cycling; default 0.5
	err    error           // returned from call failAt on
	failAt int
	calls  int
}

type fakeStep struct {
	at   time.Duration // elapsed app time from epoch at which the store clock jumps
	size time.Duration
}

func (f *fakeStore) StoreNow(context.Context) (time.Time, error) {
	i := f.calls
	f.calls++
	if f.err != nil && i >= f.failAt {
		return time.Time{}, f.err
	}
	rtt, frac := time.Millisecond, 0.5
	if len(f.rtts) > 0 {
		rtt = f.rtts[i%len(f.rtts)]
	}
	if len(f.fracs) > 0 {
		frac = f.fracs[i%len(f.fracs)]
	}
	lead := time.Duration(float64(rtt) * frac)
	f.clk.Advance(lead)
	now := f.clk.Now()
	el := now.Sub(epoch)
	st := now.Add(f.offset).Add(time.Duration(float64(el) * f.rate))
	for _, s := range f.steps {
		if el >= s.at {
			st = st.Add(s.size)
		}
	}
	f.clk.Advance(rtt - lead)
	return st, nil
}

// sample runs doctor.Sample on a fake clock, stepping the clock over each
// wait once the sampler has armed its timer: no sleeping, no real time.
func sample(t *testing.T, f *fakeStore, n int, every time.Duration) []doctor.Probe {
	t.Helper()
	type result struct {
		ps  []doctor.Probe
		err error
	}
	done := make(chan result, 1)
	go func() {
		ps, err := doctor.Sample(context.Background(), f, f.clk, n, every)
		done <- result{ps, err}
	}()
	for range n - 1 {
		f.clk.BlockUntil(1)
		f.clk.Advance(every)
	}
	r := <-done
	require.NoError(t, r.err)
	require.Len(t, r.ps, n)
	return r.ps
}

// runs is the runs timing of SPEC §1: T_lease 90s, S 15s.
var runs = lease.RunDefaults()
