package main

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// BenchmarkLeaseholdSQLite is Leasehold's side of the SQLite comparison
// alone — the same Measure the command runs (1,000 handlers, a fresh file
// per op), 10,000 runs per op — so that the figures a noisy machine does
// not bend can be counted and profiled without River in the process:
// allocations per run (-benchmem, B/op and allocs/op over 10,000 runs:
// opening and migrating the file included) and the process CPU per run
// over the timed interval (cpu-µs/run, the command's "CPU µs/run").
//
//	go test -run '^$' -bench 'BenchmarkLeaseholdSQLite/mixed' -benchtime 3x -benchmem -cpuprofile cpu.prof
//
// docs/BENCHMARKS.md (stop 27) quotes it.
func BenchmarkLeaseholdSQLite(b *testing.B) {
	benchLeasehold(b, func(b *testing.B) (target, func()) {
		return target{Store: storeSQLite, SQLitePath: filepath.Join(b.TempDir(), "bench.db")}, func() {}
	})
}

// BenchmarkLeaseholdPostgres is BenchmarkLeaseholdSQLite on Postgres (a
// fresh schema per op at $LEASEHOLD_TEST_DATABASE_URL, else the local
// default; it skips with a loud message when none answers): the client's
// side of the Postgres comparison alone, to profile, with the server
// backends' CPU per run beside it (server-µs/run).
//
//	go test -run '^$' -bench 'BenchmarkLeaseholdPostgres/mixed' -benchtime 5x -benchmem -cpuprofile cpu.prof
func BenchmarkLeaseholdPostgres(b *testing.B) {
	url := defaultPostgres()
	benchLeasehold(b, func(b *testing.B) (target, func()) {
		t, cleanup, err := newTarget(context.Background(), config{PostgresURL: url}, storePostgres, "leasehold")
		if err != nil {
			b.Skip("*** Postgres not reachable, BenchmarkLeaseholdPostgres did NOT run: ", err)
		}
		return t, cleanup
	})
}

// benchLeasehold measures Leasehold's drain and mixed shapes, 10,000 runs
// an op at 1,000 handlers, each op on the fresh store fresh returns (and
// cleans up after the op): the process CPU per run, the rate, and the
// server backends' CPU per run where the store has a server.
func benchLeasehold(b *testing.B, fresh func(b *testing.B) (target, func())) {
	const n = 10000
	for _, shape := range []string{shapeDrain, shapeMixed} {
		b.Run(shape, func(b *testing.B) {
			ctx := context.Background()
			var cpu, server, elapsed time.Duration
			serverOK := true
			b.ReportAllocs()
			for b.Loop() {
				t, cleanup := fresh(b)
				m, err := leaseholdSystem{}.Measure(ctx, config{}, setting{Workers: 1000}, t, shape, n)
				cleanup()
				if err != nil {
					b.Fatal(err)
				}
				cpu += m.timing.CPU
				server += m.timing.ServerCPU
				serverOK = serverOK && m.timing.ServerCPUOK
				elapsed += m.timing.Elapsed
			}
			runs := float64(b.N * n)
			b.ReportMetric(float64(cpu.Microseconds())/runs, "cpu-µs/run")
			if serverOK {
				b.ReportMetric(float64(server.Microseconds())/runs, "server-µs/run")
			}
			b.ReportMetric(runs/elapsed.Seconds(), "runs/s")
		})
	}
}

// TestLeaseholdSQLiteMixedAllocsPerRun bounds the allocations of
// BenchmarkLeaseholdSQLite/mixed's op, counted over the whole process
// (opening and migrating the store included, the producer's enqueues
// included), per run: 31.1 before the worker's per-run timers, handler
// context registration and completion answer were shared or folded
// (docs/BENCHMARKS.md, stop 28, helper sqmix3), 25.2 after. The bound is
// the count, with room for the opening's share and the claim sizes, which
// vary with scheduling.
func TestLeaseholdSQLiteMixedAllocsPerRun(t *testing.T) {
	const n = 10000
	ctx := context.Background()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	tg := target{Store: storeSQLite, SQLitePath: filepath.Join(t.TempDir(), "bench.db")}
	if _, err := (leaseholdSystem{}).Measure(ctx, config{}, setting{Workers: 1000}, tg, shapeMixed, n); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	perRun := float64(after.Mallocs-before.Mallocs) / n
	t.Logf("%.1f allocations a run", perRun)
	if perRun > 28 {
		t.Fatalf("%.1f allocations a run, want at most 28", perRun)
	}
}
