package bench

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/runs"
)

// RetentionConfig shapes the retention benchmark (issue 16, must-show 2):
// Runs finished runs with EventsPerRun events each and a committed effect
// on every EffectEvery-th, then a claimer working a live queue, measured
// for Baseline alone and then while the cleaner deletes the finished runs
// in batches of Batch.
type RetentionConfig struct {
	Runs         int
	EventsPerRun int
	EffectEvery  int
	Batch        int
	Live         int           // runs queued for the claimer
	Baseline     time.Duration // the claimer alone, before the cleanup
}

// Tables counts the run tables' rows, and their size on disk when the
// store can say (Postgres: pg_total_relation_size; 0 otherwise).
type Tables struct {
	Runs, Effects, Events int64
	Bytes                 int64
}

// Latencies summarizes one phase's claim latencies.
type Latencies struct {
	N             int
	P50, P99, Max time.Duration
}

func summarize(ls []time.Duration) Latencies {
	if len(ls) == 0 {
		return Latencies{}
	}
	slices.Sort(ls)
	at := func(q float64) time.Duration { return ls[min(len(ls)-1, int(q*float64(len(ls))))] }
	return Latencies{N: len(ls), P50: at(0.50), P99: at(0.99), Max: ls[len(ls)-1]}
}

// RetentionResult is one store's measurement.
type RetentionResult struct {
	Fill             time.Duration
	Before, After    Tables
	Cleanup          time.Duration
	Deleted          scheduler.CleanReport
	Baseline, During Latencies
	UncertainKept    bool
	UncertainRun     int64
}

// Retention runs the benchmark on store d; count reads the tables.
func Retention(ctx context.Context, d driver.Driver, cfg RetentionConfig, count func(context.Context) (Tables, error)) (RetentionResult, error) {
	var res RetentionResult
	start := time.Now()
	uncertain, err := fillFinished(ctx, d, cfg)
	if err != nil {
		return res, fmt.Errorf("filling: %w", err)
	}
	res.UncertainRun = uncertain
	if err := enqueueN(ctx, d, "live", cfg.Live); err != nil {
		return res, err
	}
	res.Fill = time.Since(start)
	if res.Before, err = count(ctx); err != nil {
		return res, err
	}

	// The claimer: one claim of one run at a time, completed at once, as a
	// busy worker's fetch loop; its claim latencies go to the phase in
	// force.
	type sample struct {
		during bool
		lat    time.Duration
	}
	samples := make(chan sample, 1<<16)
	phase := make(chan bool, 1) // true once the cleanup runs
	stop := make(chan struct{})
	claimerDone := make(chan error, 1)
	go func() {
		during := false
		for {
			select {
			case <-stop:
				claimerDone <- nil
				return
			case during = <-phase:
			default:
			}
			t0 := time.Now()
			got, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "live", Owner: "bench", Limit: 1, Lease: time.Minute})
			lat := time.Since(t0)
			if err != nil {
				claimerDone <- err
				return
			}
			select {
			case samples <- sample{during, lat}:
			default:
			}
			for _, r := range got {
				if _, err := d.RunComplete(ctx, &driver.RunCompleteParams{ID: r.ID, Fence: r.Fence}); err != nil {
					claimerDone <- err
					return
				}
			}
		}
	}()
	var base, during []time.Duration
	collect := func() {
		for {
			select {
			case s := <-samples:
				if s.during {
					during = append(during, s.lat)
				} else {
					base = append(base, s.lat)
				}
			default:
				return
			}
		}
	}
	baseline := time.NewTimer(cfg.Baseline)
	for waiting := true; waiting; {
		select {
		case <-baseline.C:
			waiting = false
		case s := <-samples:
			base = append(base, s.lat)
		}
	}
	collect()
	phase <- true
	cl := scheduler.NewCleaner(d, scheduler.CleanerConfig{
		Retention: runs.Retention{Completed: time.Millisecond, Failed: time.Millisecond, Cancelled: time.Millisecond},
		Batch:     cfg.Batch, Logger: slog.New(slog.DiscardHandler)})
	cleanDone := make(chan error, 1)
	t0 := time.Now()
	go func() {
		rep, err := cl.CleanOnce(ctx)
		res.Deleted = rep
		cleanDone <- err
	}()
	for waiting := true; waiting; {
		select {
		case err := <-cleanDone:
			if err != nil {
				close(stop)
				<-claimerDone
				return res, fmt.Errorf("cleanup: %w", err)
			}
			waiting = false
		case s := <-samples:
			if s.during {
				during = append(during, s.lat)
			} else {
				base = append(base, s.lat)
			}
		}
	}
	res.Cleanup = time.Since(t0)
	close(stop)
	if err := <-claimerDone; err != nil {
		return res, fmt.Errorf("claimer: %w", err)
	}
	collect()
	res.Baseline, res.During = summarize(base), summarize(during)
	if res.After, err = count(ctx); err != nil {
		return res, err
	}
	r, err := d.RunGet(ctx, &driver.RunGetParams{ID: uncertain})
	res.UncertainKept = err == nil && r.State == runs.StateCompleted
	return res, nil
}

// fillFinished makes cfg.Runs completed runs of queue "old", each with its
// events and every EffectEvery-th with a committed effect, plus one with
// an uncertain effect (an intent never committed), whose id it returns.
func fillFinished(ctx context.Context, d driver.Driver, cfg RetentionConfig) (int64, error) {
	if err := enqueueN(ctx, d, "old", cfg.Runs); err != nil {
		return 0, err
	}
	for done := 0; done < cfg.Runs; {
		got, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "old", Owner: "fill", Limit: runs.MaxClaimBatch, Lease: time.Hour})
		if err != nil {
			return 0, err
		}
		if len(got) == 0 {
			return 0, fmt.Errorf("claimed %d of %d", done, cfg.Runs)
		}
		evs := make([]driver.RunEventInsert, 0, len(got)*cfg.EventsPerRun)
		cs := make([]driver.RunCompletion, 0, len(got))
		for k, r := range got {
			for s := 1; s <= cfg.EventsPerRun; s++ {
				evs = append(evs, driver.RunEventInsert{RunID: r.ID, Fence: r.Fence, Seq: int64(s), Kind: "step", Payload: []byte(`{"n":1}`)})
			}
			if cfg.EffectEvery > 0 && (done+k)%cfg.EffectEvery == 0 {
				if _, err := d.RunEffectBegin(ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: "e"}); err != nil {
					return 0, err
				}
				if _, err := d.RunEffectCommit(ctx, &driver.RunEffectCommitParams{RunID: r.ID, Fence: r.Fence, Key: "e", Result: []byte(`1`)}); err != nil {
					return 0, err
				}
			}
			cs = append(cs, driver.RunCompletion{ID: r.ID, Fence: r.Fence})
		}
		if len(evs) > 0 {
			if _, err := d.RunEventAppend(ctx, &driver.RunEventAppendParams{Events: evs}); err != nil {
				return 0, err
			}
		}
		if _, err := d.RunCompleteMany(ctx, &driver.RunCompleteManyParams{Runs: cs}); err != nil {
			return 0, err
		}
		done += len(got)
	}
	out, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "uncertain"}}})
	if err != nil {
		return 0, err
	}
	got, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "uncertain", Owner: "fill", Limit: 1, Lease: time.Hour})
	if err != nil || len(got) != 1 {
		return 0, fmt.Errorf("claiming the uncertain run: %v", err)
	}
	r := got[0]
	if _, err := d.RunEffectBegin(ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: "charge"}); err != nil {
		return 0, err
	}
	if _, err := d.RunComplete(ctx, &driver.RunCompleteParams{ID: r.ID, Fence: r.Fence}); err != nil {
		return 0, err
	}
	return out[0].Run.ID, nil
}
