package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
)

// riverSystem measures River with its defaults except MaxWorkers and the
// fetch settings of the setting it runs at, migrated by rivermigrate into the
// fresh schema (as search_path) or file.
type riverSystem struct{}

func (riverSystem) Name() string { return "river" }

func (riverSystem) CompletedQuery() string {
	return "SELECT count(*) FROM river_job WHERE state = 'completed'"
}

// riverSQLitePragmas match the Leasehold SQLite driver's durability (WAL,
// fsync at every commit, a 10s busy timeout), so the two differ in what they
// write, not in how durably.
const riverSQLitePragmas = "_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(10000)"

func (riverSystem) Measure(ctx context.Context, cfg config, set setting, t target, shape string, n int) (measurement, error) {
	switch t.Store {
	case storePostgres:
		pc, err := pgxpool.ParseConfig(t.url())
		if err != nil {
			return measurement{}, err
		}
		pc.ConnConfig.RuntimeParams["search_path"] = t.Schema
		pc.MaxConns = cfg.RiverPGConns
		pool, err := pgxpool.NewWithConfig(ctx, pc)
		if err != nil {
			return measurement{}, fmt.Errorf("opening pool: %w", err)
		}
		defer pool.Close()
		settings := map[string]string{}
		for _, k := range []string{"synchronous_commit", "fsync"} {
			var v string
			if err := pool.QueryRow(ctx, "SELECT current_setting($1)", k).Scan(&v); err != nil {
				return measurement{}, fmt.Errorf("reading %s: %w", k, err)
			}
			settings[k] = v
		}
		return riverMeasure(ctx, set, t.meter(), riverpgxv5.New(pool), settings, shape, n)
	default:
		db, err := sql.Open("sqlite", "file:"+t.SQLitePath+"?"+riverSQLitePragmas)
		if err != nil {
			return measurement{}, err
		}
		defer db.Close()
		// One connection, as River's riversqlite documentation and its own
		// test setup advise: River's concurrent internal operations otherwise
		// hit SQLITE_BUSY.
		db.SetMaxOpenConns(1)
		settings := map[string]string{}
		var mode string
		var sync, busy int
		if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
			return measurement{}, err
		}
		if err := db.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
			return measurement{}, err
		}
		if err := db.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
			return measurement{}, err
		}
		names := map[int]string{0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}
		settings["journal_mode"] = mode
		settings["synchronous"] = fmt.Sprintf("%d (%s)", sync, names[sync])
		settings["busy_timeout"] = fmt.Sprintf("%dms", busy)
		settings["max_open_conns"] = "1"
		return riverMeasure(ctx, set, t.meter(), riversqlite.New(db), settings, shape, n)
	}
}

// noopArgs is the job of both shapes; N numbers the drain's jobs as the
// Leasehold drain numbers its payloads.
type noopArgs struct {
	N int `json:"n,omitempty"`
}

func (noopArgs) Kind() string { return "noop" }

// noopWorker counts the jobs it works and closes done at the n-th.
type noopWorker struct {
	river.WorkerDefaults[noopArgs]
	n       int64
	handled atomic.Int64
	done    chan struct{}
}

func (w *noopWorker) Work(context.Context, *river.Job[noopArgs]) error {
	if w.handled.Add(1) == w.n {
		close(w.done)
	}
	return nil
}

func riverMeasure[TTx any](ctx context.Context, set setting, meter *cpuMeter, drv riverdriver.Driver[TTx], settings map[string]string, shape string, n int) (measurement, error) {
	quiet := slog.New(slog.DiscardHandler)
	migrator, err := rivermigrate.New(drv, &rivermigrate.Config{Logger: quiet})
	if err != nil {
		return measurement{}, err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return measurement{}, fmt.Errorf("migrating: %w", err)
	}
	w := &noopWorker{n: int64(n), done: make(chan struct{})}
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	client, err := river.NewClient(drv, &river.Config{
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: set.Workers}},
		Workers:           workers,
		Logger:            quiet,
		FetchCooldown:     set.FetchCooldown,     // zero: River's default
		FetchPollInterval: set.FetchPollInterval, // zero: River's default
	})
	if err != nil {
		return measurement{}, fmt.Errorf("creating client: %w", err)
	}
	m := measurement{Runs: n, Settings: settings}
	switch shape {
	case shapeDrain:
		m.timing, err = riverDrain(ctx, client, meter, w, n)
	case shapeMixed:
		m.timing, err = riverMixed(ctx, client, meter, w, n)
	default:
		err = fmt.Errorf("unknown shape %q", shape)
	}
	return m, err
}

// riverDrain inserts n jobs in batches of 1000 before the client starts,
// then times the client working them, up to its Stop (which waits for the
// completer to flush), as leaseholdDrain times its worker.
func riverDrain[TTx any](ctx context.Context, client *river.Client[TTx], meter *cpuMeter, w *noopWorker, n int) (timing, error) {
	for i := 0; i < n; i += 1000 {
		batch := make([]river.InsertManyParams, min(1000, n-i))
		for j := range batch {
			batch[j] = river.InsertManyParams{Args: noopArgs{N: i + j}}
		}
		if _, err := client.InsertMany(ctx, batch); err != nil {
			return timing{}, fmt.Errorf("inserting: %w", err)
		}
	}
	return riverWork(ctx, client, meter, w, n, nil)
}

// riverMixed inserts n jobs in batches of 100 while the client works them,
// and times the whole from the client's start, as leaseholdMixed does.
func riverMixed[TTx any](ctx context.Context, client *river.Client[TTx], meter *cpuMeter, w *noopWorker, n int) (timing, error) {
	started := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		select {
		case <-started:
		case <-ctx.Done():
			errc <- ctx.Err()
			return
		}
		for i := 0; i < n; i += 100 {
			batch := make([]river.InsertManyParams, min(100, n-i))
			for j := range batch {
				batch[j] = river.InsertManyParams{Args: noopArgs{}}
			}
			if _, err := client.InsertMany(ctx, batch); err != nil {
				errc <- fmt.Errorf("inserting: %w", err)
				return
			}
		}
		errc <- nil
	}()
	t, err := riverWork(ctx, client, meter, w, n, started)
	if err != nil {
		return timing{}, err
	}
	if err := <-errc; err != nil { // the inserter finished before the n-th job was worked
		return timing{}, err
	}
	return t, nil
}

// riverWork starts the client and returns once n jobs were worked and the
// client has stopped, with its timing (see timing). River's Stop waits for
// in-flight jobs and for its batch completer's final flush, so every
// completion is committed when it returns (the caller checks by counting
// completed rows).
func riverWork[TTx any](ctx context.Context, client *river.Client[TTx], meter *cpuMeter, w *noopWorker, n int, started chan<- struct{}) (timing, error) {
	called := time.Now()
	if err := client.Start(ctx); err != nil {
		return timing{}, fmt.Errorf("starting client: %w", err)
	}
	begun := time.Now()
	meter.begin(ctx)
	if started != nil {
		close(started)
	}
	select {
	case <-w.done:
	case <-ctx.Done():
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = client.Stop(stopCtx)
		return timing{}, fmt.Errorf("%d of %d jobs worked: %w", w.handled.Load(), n, ctx.Err())
	}
	stopping := time.Now()
	err := client.Stop(ctx)
	end := time.Now()
	cpuClient, cpuServer, cpuServerOK := meter.end(ctx)
	return measured(called, begun, stopping, end, cpuClient, cpuServer, cpuServerOK), err
}
