package bench

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/world"
	"github.com/leasehold/leasehold/journal"
)

// BenchmarkSQLiteAppendBesideFloor is `bench journal`'s single append and
// its floor as Go benchmarks, one after the other in each -count round: the
// store's own one-row commit (a prepared INSERT in autocommit, WAL,
// synchronous=FULL), then one appender appending through the group
// committer (world.Appender → driver.Validating → the SQLite driver). The
// figure to compare is cpu-µs/op, this process's CPU per commit (the store
// runs in process), with allocs/op: the load on a shared machine bends the
// wall time far more than either.
func BenchmarkSQLiteAppendBesideFloor(b *testing.B) {
	ctx := context.Background()
	b.Run("floor", func(b *testing.B) {
		f, err := OpenSQLiteFloor(ctx, b.TempDir())
		require.NoError(b, err)
		defer f.Close()
		cpuPerOp(b, f.one)
	})
	b.Run("append", func(b *testing.B) {
		d, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(b.TempDir(), "j.db")})
		require.NoError(b, err)
		defer d.Close()
		_, err = d.Migrate(ctx)
		require.NoError(b, err)
		w, err := d.WorldCreate(ctx, &driver.WorldCreateParams{World: "bench", Home: "bench", Term: time.Hour})
		require.NoError(b, err)
		app := world.NewAppender(d, world.AppenderConfig{})
		defer app.Stop(ctx)
		req := journal.AppendRequest{Holder: "bench", Epoch: w.Epoch, SeenPosition: w.GrantedAt, Kind: "bench",
			Payload: []byte(`{"appender":0,"op":"bench"}`)}
		cpuPerOp(b, func() error { _, err := app.Append(ctx, "bench", req); return err })
	})
}

// cpuPerOp runs one b.N times and reports this process's CPU and the
// goroutines it created per op.
func cpuPerOp(b *testing.B, one func() error) {
	b.ReportAllocs()
	var cpu0 time.Duration
	var g0 uint64
	for b.Loop() {
		if cpu0 == 0 {
			cpu0, g0 = ProcessCPU(), GoroutinesCreated()
		}
		if err := one(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((ProcessCPU()-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(GoroutinesCreated()-g0)/float64(b.N), "goroutines/op")
}
