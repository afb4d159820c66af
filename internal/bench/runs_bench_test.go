package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/testdb"
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

// BenchmarkDrainPostgres is BenchmarkDrainSQLite on Postgres (a fresh
// schema per op, the bench's pool of 16 general connections). Besides
// commits per run it reports the runs table's row writes per run from
// pg_stat_user_tables, read once the driver's connections have closed
// (a backend flushes its counters when it exits): updates, of which HOT,
// and the heap and index blocks the path touched (pg_statio). Postgres's
// WAL is shared with every session of the server, so it is read per
// statement in TestRunPathExplained (driver/postgres) instead.
func BenchmarkDrainPostgres(b *testing.B) {
	const n = 5000
	ctx := context.Background()
	var counts RunPathCounts
	var upd, hot, heapBlks, idxBlks int64
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		url, schema := testdb.Schema(b)
		d, err := postgres.Open(ctx, postgres.Config{URL: url, Schema: schema, GeneralConns: 16})
		require.NoError(b, err)
		_, err = d.Migrate(ctx)
		require.NoError(b, err)
		cfg := RunsConfig{Runs: n, Workers: 1, Concurrency: 200, Queue: "drain"}
		require.NoError(b, enqueueN(ctx, d, cfg.Queue, n))
		require.NoError(b, d.Close())
		stats := func() (u, h, heap, idx int64) {
			conn, err := pgx.Connect(ctx, url)
			require.NoError(b, err)
			defer conn.Close(ctx)
			q := `SELECT t.n_tup_upd, t.n_tup_hot_upd, coalesce(s.heap_blks_hit + s.heap_blks_read, 0), coalesce(s.idx_blks_hit + s.idx_blks_read, 0)
			FROM pg_stat_user_tables t JOIN pg_statio_user_tables s USING (relid) WHERE t.schemaname = $1 AND t.relname = 'runs'`
			// The counters of exited backends reach the view shortly
			// after: wait (bounded) until two reads agree.
			var prev [4]int64
			for range 50 {
				var cur [4]int64
				require.NoError(b, conn.QueryRow(ctx, q, schema).Scan(&cur[0], &cur[1], &cur[2], &cur[3]))
				if cur == prev {
					break
				}
				prev = cur
				_, err := conn.Exec(ctx, "SELECT pg_sleep(0.1)") // the server's flush interval, not a handshake
				require.NoError(b, err)
			}
			return prev[0], prev[1], prev[2], prev[3]
		}
		u0, h0, heap0, idx0 := stats()
		d, err = postgres.Open(ctx, postgres.Config{URL: url, Schema: schema, GeneralConns: 16})
		require.NoError(b, err)
		pc := &PathCounter{Store: d}
		b.StartTimer()
		require.NoError(b, work(ctx, pc, cfg, nil))
		b.StopTimer()
		require.NoError(b, d.Close())
		u1, h1, heap1, idx1 := stats()
		upd, hot, heapBlks, idxBlks = upd+u1-u0, hot+h1-h0, heapBlks+heap1-heap0, idxBlks+idx1-idx0
		c := pc.Counts()
		require.EqualValues(b, n, c.Completed+c.Complete, "every run completed once")
		counts = addCounts(counts, c)
		b.StartTimer()
	}
	runs := float64(b.N * n)
	b.ReportMetric(runs/b.Elapsed().Seconds(), "runs/s")
	b.ReportMetric(float64(counts.Commits())/runs, "commits/run")
	b.ReportMetric(float64(counts.Claimed)/float64(counts.Claims), "runs/claim")
	b.ReportMetric(float64(counts.Completed)/float64(max(counts.CompleteMany, 1)), "runs/complete-batch")
	b.ReportMetric(float64(upd)/runs, "row-updates/run")
	b.ReportMetric(float64(hot)/runs, "hot-updates/run")
	b.ReportMetric(float64(heapBlks)/runs, "heap-blocks/run")
	b.ReportMetric(float64(idxBlks)/runs, "index-blocks/run")
}
