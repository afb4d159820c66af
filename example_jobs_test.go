package leasehold_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/sqlite"
)

// A client with the job-system features configured: retention of
// finished runs, a nightly periodic run, and a worker whose handlers are
// wrapped by a logging middleware and bounded by a per-queue timeout.
func Example_jobSystem() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "leasehold-example-*")
	defer os.RemoveAll(dir)
	d, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "jobs.db")})
	if err != nil {
		panic(err)
	}
	c, err := leasehold.NewClient(ctx, d, leasehold.Config{
		Logger: slog.New(slog.DiscardHandler),
		// Completed runs kept 24 h, failed ones 30 days, cancelled forever.
		Retention: &leasehold.Retention{Completed: 24 * time.Hour, Failed: 30 * 24 * time.Hour},
		Periodic: []leasehold.PeriodicRun{{
			Name: "nightly-report", Cron: "0 3 * * *", RunOnStart: true,
			Run: leasehold.Enqueue{Queue: "reports", Payload: []byte(`{"kind":"nightly"}`)},
		}},
	})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	_ = c.StartCleaner(ctx)  // every replica may run one
	_ = c.StartPeriodic(ctx) // every replica may run it: one run per tick

	logging := func(ctx context.Context, r *leasehold.RunHandle, next func(context.Context) error) error {
		err := next(ctx)
		fmt.Printf("run of %s, attempt %d: err=%v\n", r.Queue, r.Attempt, err)
		return err
	}
	w, err := c.NewWorker(leasehold.WorkerConfig{
		Queues:     map[string]int{"reports": 2},
		Middleware: []leasehold.Middleware{logging},
		Timeouts:   map[string]time.Duration{"reports": 10 * time.Minute},
		Manual:     true, // this example works one run by hand
		ClockCheck: -1,
	})
	if err != nil {
		panic(err)
	}
	w.Handle("reports", func(ctx context.Context, r *leasehold.RunHandle) error { return nil })
	if err := w.Start(ctx); err != nil {
		panic(err)
	}
	// RunOnStart enqueued today's 03:00 tick (once, whatever the number
	// of processes): work it.
	var run *leasehold.Run
	for i := 0; run == nil && i < 1000; i++ { // the enqueue runs beside us: poll for it, bounded
		if run, err = w.WorkOne(ctx, "reports"); err != nil {
			panic(err)
		}
		if run == nil {
			time.Sleep(10 * time.Millisecond)
		}
	}
	fmt.Println(run.State)
	// A graceful stop: handlers get 30s, then their runs are released for
	// another worker at once.
	stop, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_ = w.Stop(stop)
	// Output:
	// run of reports, attempt 1: err=<nil>
	// completed
}
