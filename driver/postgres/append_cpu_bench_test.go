package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/testdb"
	"github.com/leasehold/leasehold/journal"
)

// BenchmarkAppendBesideFloor counts, per operation, what the server's own
// backend spends on a single-entry append (the driver on one critical
// connection, with a deadline as the group committer gives) and on the
// store's own one-row autocommit INSERT: the backend's user+system CPU
// from /proc (the server is local in the tests), which the load of a
// shared machine does not inflate as it does wall time. Run with a fixed
// count, e.g. -benchtime=3000x: /proc counts in clock ticks.
func BenchmarkAppendBesideFloor(b *testing.B) {
	ctx := context.Background()
	url, schema := testdb.Schema(b)
	b.Run("floor", func(b *testing.B) {
		b.ReportAllocs()
		conn, err := pgx.Connect(ctx, url)
		require.NoError(b, err)
		defer conn.Close(ctx)
		table := pgx.Identifier{schema, "floor"}.Sanitize()
		_, err = conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+table+" (a bigserial PRIMARY KEY, b bytea)")
		require.NoError(b, err)
		_, err = conn.Exec(ctx, "SET synchronous_commit = on")
		require.NoError(b, err)
		var pid int
		require.NoError(b, conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid))
		q := "INSERT INTO " + table + " (b) VALUES ($1)"
		measureBackend(b, []int{pid}, func() {
			_, err := conn.Exec(ctx, q, []byte(`{"op":"bench"}`))
			require.NoError(b, err)
		})
	})
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		s, err := openPools(ctx, Config{URL: url, Schema: schema, CriticalConns: 1, GeneralConns: 1}, nil)
		require.NoError(b, err)
		defer s.Close()
		d := newDriver(s)
		_, err = d.Migrate(ctx)
		require.NoError(b, err)
		world := fmt.Sprintf("w%d", b.N)
		_, err = d.WorldCreate(ctx, &driver.WorldCreateParams{World: world, Home: "home", Term: time.Hour})
		require.NoError(b, err)
		var pids []int
		for _, pool := range []interface {
			QueryRow(context.Context, string, ...any) pgx.Row
		}{s.critical, s.general} { // one connection each
			var pid int
			require.NoError(b, pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid))
			pids = append(pids, pid)
		}
		one := func() {
			actx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			out, err := d.JournalAppend(actx, &driver.JournalAppendParams{World: world,
				Requests: []journal.AppendRequest{{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "bench", Payload: []byte(`{"op":"bench"}`)}}})
			require.NoError(b, err)
			require.NoError(b, out[0].Err)
		}
		one() // warm: prepares the statements
		measureBackend(b, pids, one)
	})
}

// measureBackend runs op b.N times and reports the backends' CPU per op.
func measureBackend(b *testing.B, pids []int, op func()) {
	cpu := func() (sum time.Duration) {
		for _, pid := range pids {
			sum += localBackendCPU(b, pid)
		}
		return sum
	}
	c0 := cpu()
	b.ResetTimer()
	for range b.N {
		op()
	}
	b.StopTimer()
	b.ReportMetric(float64((cpu()-c0).Microseconds())/float64(b.N), "server-µs/op")
}

// localBackendCPU is backendCPU (events_explain_test.go) for a benchmark,
// which skips when the server is not a local process.
func localBackendCPU(b *testing.B, pid int) time.Duration {
	d := backendCPU(pid)
	if d < 0 {
		b.Skipf("the server's backend %d is not a local process", pid)
	}
	return d
}
