package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver/sqlite"
)

// walPageBytes is one WAL frame: its 24-byte header and a page of the
// default size.
const walPageBytes = 24 + 4096

// BenchmarkDrainSQLite is `leasehold bench runs`' drain shape on a fresh
// SQLite file per op (5,000 runs, one worker of 200 handlers, no-op
// handler), so that `go test -cpuprofile` profiles the whole claim →
// handler → complete path (opening and the enqueue are outside the
// timer). Besides runs/s, which the load on the machine bends, it reports
// what the load does not: commits per run, runs per claim and per
// completion batch, and WAL pages written per run (the automatic
// checkpoint is off for the measurement, so the WAL only grows).
func BenchmarkDrainSQLite(b *testing.B) {
	const n = 5000
	ctx := context.Background()
	var counts RunPathCounts
	var walBytes int64
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "b.db")
		d, err := sqlite.Open(ctx, sqlite.Config{Path: path})
		require.NoError(b, err)
		_, err = d.Migrate(ctx)
		require.NoError(b, err)
		cfg := RunsConfig{Runs: n, Workers: 1, Concurrency: 200, Queue: "drain"}
		require.NoError(b, enqueueN(ctx, d, cfg.Queue, n))
		tx, err := d.BeginTx(ctx)
		require.NoError(b, err)
		_, err = tx.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 0")
		require.NoError(b, err)
		require.NoError(b, tx.Commit())
		wal0 := fileSize(b, path+"-wal")
		pc := &PathCounter{Store: d}
		b.StartTimer()
		require.NoError(b, work(ctx, pc, cfg, nil))
		b.StopTimer()
		walBytes += fileSize(b, path+"-wal") - wal0
		c := pc.Counts()
		require.EqualValues(b, n, c.Completed+c.Complete, "every run completed once")
		counts = addCounts(counts, c)
		require.NoError(b, d.Close())
		b.StartTimer()
	}
	runs := float64(b.N * n)
	b.ReportMetric(runs/b.Elapsed().Seconds(), "runs/s")
	b.ReportMetric(float64(counts.Commits())/runs, "commits/run")
	b.ReportMetric(float64(counts.Claimed)/float64(counts.Claims), "runs/claim")
	b.ReportMetric(float64(counts.Completed)/float64(max(counts.CompleteMany, 1)), "runs/complete-batch")
	b.ReportMetric(float64(walBytes)/walPageBytes/runs, "wal-pages/run")
}

func fileSize(b *testing.B, path string) int64 {
	fi, err := os.Stat(path)
	require.NoError(b, err)
	return fi.Size()
}

func addCounts(a, b RunPathCounts) RunPathCounts {
	return RunPathCounts{
		Claims: a.Claims + b.Claims, Claimed: a.Claimed + b.Claimed,
		CompleteMany: a.CompleteMany + b.CompleteMany, Completed: a.Completed + b.Completed,
		Complete: a.Complete + b.Complete, Renew: a.Renew + b.Renew, RenewMany: a.RenewMany + b.RenewMany,
		EventAppend: a.EventAppend + b.EventAppend,
	}
}
