package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/lease"
)

// Knobs are one seed's settings, drawn from the seed as FoundationDB
// draws its buggify knobs: timings anywhere in the valid region, fault
// rates from none to heavy.
type Knobs struct {
	Timing  lease.Timing
	Mode    keeper.Mode
	Workers int // worker processes
	Runs    int // runs enqueued
	Effects int // effects per run
	Events  int // events per effect

	LatencyMin, LatencyMax time.Duration // one way, per call
	SlowRate               float64       // share of calls with a latency up to SlowMax
	SlowMax                time.Duration
	ErrRate                float64 // the store answers with an error, nothing applied
	LossRate               float64 // a request or a reply is lost
	CallTimeout            time.Duration

	CrashEvery     time.Duration // mean time between crashes of some worker (0: none)
	PartitionEvery time.Duration // mean time between partitions (0: none)
	PartitionMax   time.Duration
	PauseEvery     time.Duration // mean time between process pauses, SIGSTOP-like (0: none)
	PauseMax       time.Duration
	PauseAfterCall float64       // chance that a process pauses as an answer reaches it (buggify)
	ReclaimLagMax  time.Duration // the reclaimer may take this long past expiry (+ P); within the bound's S
	Drift          float64       // each clock's rate error is within ±Drift
	StoreStep      time.Duration // one forward step of the store clock (0: none)

	// Host mode (host_mode.go): the processes run the shipped host.Host
	// with the bank program instead of the bare world holder; Commands
	// client commands in all, from Submitters threads per process.
	Host                 bool
	Commands, Submitters int
	// Band (host mode): the hosts' hot-world band moves the world — it
	// spills from its home under load and comes back when the load has
	// cleared (host_band.go) — instead of the operator's random handoffs.
	Band bool

	FaultPhase time.Duration // faults happen in [0, FaultPhase); then calm
	CalmMax    time.Duration // how long the calm phase may take to finish every run
}

// drawKnobs picks the knobs of one seed. The timing keeps the spec's
// relations (validated) and the store clock's error within one term under
// S: |drift of store - drift of worker| * T_lease + step <= S/2.
func drawKnobs(r *rand.Rand) Knobs {
	var k Knobs
	sec := func(lo, hi float64) time.Duration {
		return time.Duration((lo + r.Float64()*(hi-lo)) * float64(time.Second))
	}
	for {
		t := lease.Timing{
			Lease: sec(20, 120),
		}
		t.Skew = time.Duration(float64(t.Lease) * (0.05 + 0.2*r.Float64()))
		t.Stop = time.Duration(float64(t.Lease-t.Skew) * (0.35 + 0.6*r.Float64()))
		t.Renew = time.Duration(float64(t.Stop) * (0.1 + 0.4*r.Float64()))
		t.Drain = time.Duration(float64(t.Stop-t.Renew) * (0.05 + 0.4*r.Float64()))
		t.Poll = sec(0.2, 3)
		t.Margin = t.Drain
		if t.Validate() == nil && t.MaxEffect() > time.Second {
			k.Timing = t
			break
		}
	}
	k.Mode = []keeper.Mode{keeper.ModeWriteBehind, keeper.ModeWriteBehind, keeper.ModeDark, keeper.ModeSync}[r.IntN(4)]
	k.Workers = 2 + r.IntN(2)
	k.Runs = 3 + r.IntN(8)
	k.Effects = 1 + r.IntN(4)
	k.Events = r.IntN(3)

	k.LatencyMin = time.Duration(r.IntN(5)) * time.Millisecond
	k.LatencyMax = k.LatencyMin + time.Duration(1+r.IntN(200))*time.Millisecond
	if r.IntN(2) == 0 {
		k.SlowRate = 0.02 + 0.23*r.Float64()
		k.SlowMax = time.Duration(float64(k.Timing.Lease) * (0.05 + 1.2*r.Float64())) // a request may land long after its caller gave up
	}
	if r.IntN(2) == 0 {
		k.ErrRate = 0.05 * r.Float64()
	}
	if r.IntN(2) == 0 {
		k.LossRate = 0.05 * r.Float64()
	}
	k.CallTimeout = max(k.Timing.Drain, 2*k.LatencyMax+time.Second) + sec(0, 5)
	if r.IntN(3) > 0 {
		k.CrashEvery = time.Duration(float64(k.Timing.Lease) * (0.5 + 3*r.Float64()))
	}
	if r.IntN(3) > 0 {
		k.PartitionEvery = time.Duration(float64(k.Timing.Lease) * (0.5 + 3*r.Float64()))
		k.PartitionMax = time.Duration(float64(k.Timing.Lease) * (0.1 + 1.5*r.Float64()))
	}
	if r.IntN(2) == 0 {
		k.PauseEvery = time.Duration(float64(k.Timing.Lease) * (0.5 + 3*r.Float64()))
		k.PauseMax = time.Duration(float64(k.Timing.Lease) * (0.2 + 1.5*r.Float64()))
	}
	if r.IntN(2) == 0 {
		k.PauseAfterCall = 0.005 + 0.055*r.Float64()
		if k.PauseMax == 0 {
			k.PauseMax = time.Duration(float64(k.Timing.Lease) * (0.2 + 1.5*r.Float64()))
		}
	}
	k.ReclaimLagMax = time.Duration(float64(k.Timing.Skew) / 2 * r.Float64())
	// Clock error within one term stays within S/2: drift both ways plus a
	// step.
	budget := float64(k.Timing.Skew) / 2
	if r.IntN(2) == 0 {
		k.StoreStep = time.Duration(budget * 0.5 * r.Float64())
	}
	k.Drift = (budget - float64(k.StoreStep)) / float64(k.Timing.Lease) / 2 * r.Float64()
	k.FaultPhase = time.Duration(float64(k.Timing.Lease) * (2 + 6*r.Float64()))
	k.CalmMax = 12 * k.Timing.Lease
	return k
}

func (k Knobs) String() string {
	t := k.Timing
	world := "world holders"
	if k.Host {
		world = fmt.Sprintf("hosts: %d commands, %d submitters each", k.Commands, k.Submitters)
		if k.Band {
			world += ", moved by the hot-world band"
		}
	}
	return world + "; " + fmt.Sprintf("mode %s, %d workers, %d runs x %d effects x %d events; lease %v renew %v drain %v stop %v skew %v poll %v; latency %v-%v, slow %.2f up to %v, err %.3f, loss %.3f, timeout %v; crash every %v, partition every %v up to %v, pause every %v up to %v (after a call %.3f), reclaim lag up to %v; drift %.1e, store step %v; faults for %v",
		k.Mode, k.Workers, k.Runs, k.Effects, k.Events, r(t.Lease), r(t.Renew), r(t.Drain), r(t.Stop), r(t.Skew), r(t.Poll),
		k.LatencyMin, k.LatencyMax, k.SlowRate, r(k.SlowMax), k.ErrRate, k.LossRate, r(k.CallTimeout),
		r(k.CrashEvery), r(k.PartitionEvery), r(k.PartitionMax), r(k.PauseEvery), r(k.PauseMax), k.PauseAfterCall, r(k.ReclaimLagMax), k.Drift, r(k.StoreStep), r(k.FaultPhase))
}

func r(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// latency draws one way of one call.
func (k Knobs) latency(rng *rand.Rand) time.Duration {
	if k.SlowRate > 0 && rng.Float64() < k.SlowRate {
		return time.Duration(rng.Int64N(int64(k.SlowMax) + 1))
	}
	return k.LatencyMin + time.Duration(rng.Int64N(int64(k.LatencyMax-k.LatencyMin)+1))
}
