package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/server"
)

// heartbeatModeEnv sets `leasehold serve`'s starting heartbeat mode when
// --heartbeat-mode is not given.
const heartbeatModeEnv = "LEASEHOLD_HEARTBEAT_MODE"

// maxEchoSleep bounds an echo run's sleep_ms.
const maxEchoSleep = time.Minute

// serveWorkers are `leasehold serve`'s in-process workers: echo workers
// (each run completes with its payload as its result, after sleeping its
// payload's sleep_ms), for smoke tests and for rehearsing a heartbeat-mode
// rollout against a live server (docs/operations/rollout.md). Their mode
// starts as --heartbeat-mode (or $LEASEHOLD_HEARTBEAT_MODE, or
// writebehind) and is switched at runtime by `leasehold mode set` through
// the admin API.
type serveWorkers struct {
	mode, queue *string
	n           *int
	scale       *float64
	started     []*leasehold.Worker
}

func addServeWorkerFlags(fs *flag.FlagSet) *serveWorkers {
	def := os.Getenv(heartbeatModeEnv)
	if def == "" {
		def = leasehold.ModeWriteBehind.String()
	}
	return &serveWorkers{
		mode:  fs.String("heartbeat-mode", def, "starting heartbeat mode of the in-process workers and of remote runners' renewals: sync, dark or writebehind (default $"+heartbeatModeEnv+", else writebehind); switch at runtime with `leasehold mode set`"),
		queue: fs.String("echo-queue", "", "run in-process echo workers on this queue (each run completes with its payload after its sleep_ms): smoke tests, rollout rehearsal"),
		n:     fs.Int("echo-workers", 1, "how many echo workers (each holds up to 16 runs at once), named echo-1, echo-2, …"),
		scale: fs.Float64("run-timing-scale", 1, "divide the run lease timing (T_lease 90s, T_renew 15s, T_drain 5s, D_stop 45s, S 15s) by this, for remote runners and echo workers alike: rehearsals only"),
	}
}

// timing is the run timing the flags ask for.
func (sw *serveWorkers) timing() (lease.Timing, error) {
	if *sw.scale < 1 || *sw.scale > 1000 {
		return lease.Timing{}, usagef("--run-timing-scale %g: want 1..1000", *sw.scale)
	}
	t := scaled(lease.RunDefaults(), *sw.scale)
	return t, t.Validate()
}

// start validates the mode and starts the echo workers, attaching each to
// s under its name.
func (sw *serveWorkers) start(ctx context.Context, c *leasehold.Client, s *server.Server, log *slog.Logger) error {
	mode, err := leasehold.ParseHeartbeatMode(*sw.mode)
	if err != nil {
		return fmt.Errorf("--heartbeat-mode: %w", err)
	}
	if *sw.queue == "" {
		return nil
	}
	if *sw.n < 1 || *sw.n > 64 {
		return usagef("--echo-workers %d: want 1..64", *sw.n)
	}
	t, err := sw.timing()
	if err != nil {
		return err
	}
	for i := 1; i <= *sw.n; i++ {
		name := fmt.Sprintf("echo-%d", i)
		w, err := c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{*sw.queue: 16}, Timing: t, Mode: mode,
			Logger: log.With("worker", name)})
		if err != nil {
			return err
		}
		w.Handle(*sw.queue, echo)
		if err := s.AttachWorker(name, w); err != nil {
			return err
		}
		if err := w.Start(ctx); err != nil {
			return fmt.Errorf("starting worker %s: %w", name, err)
		}
		sw.started = append(sw.started, w)
	}
	log.Info("in-process echo workers started", "queue", *sw.queue, "workers", *sw.n, "mode", mode, "t_lease", t.Lease, "s", t.Skew)
	return nil
}

// stop stops the workers within grace: their handlers finish, their
// completions and last renewals are flushed.
func (sw *serveWorkers) stop(grace time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	for _, w := range sw.started {
		_ = w.Stop(ctx)
	}
}

// echo completes a run with its payload, after its sleep_ms.
func echo(ctx context.Context, r *leasehold.RunHandle) error {
	var p struct {
		SleepMS int64 `json:"sleep_ms"`
	}
	_ = json.Unmarshal(r.Payload, &p) // any payload echoes; only sleep_ms is read
	if d := min(time.Duration(max(p.SleepMS, 0))*time.Millisecond, maxEchoSleep); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	if len(r.Payload) > 0 {
		return r.SetResult(r.Payload)
	}
	return nil
}
