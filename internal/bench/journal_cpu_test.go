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
// its floor as Go benchmarks: the store's own one-row commit (a prepared
// INSERT in autocommit, WAL, synchronous=FULL), then one appender
// appending through the group committer (world.Appender →
// driver.Validating → the SQLite driver). The figures to compare are
// cpu-µs/op, this process's CPU per commit (the store runs in process),
// goroutines/op and allocs/op: the load on a shared machine bends the wall
// time far more than these.
//
// Both are measured with their WAL file in its steady state: first
// committed to until the automatic checkpoint has reset the WAL once, so
// that the measured commits overwrite WAL blocks the file already has, as
// every commit does after a store's first minutes. A WAL still growing
// costs each commit a block allocation that its fsync must journal: on
// this machine ~100 µs of CPU more and twice the wall time, for the floor
// as for the append. The floor's WAL (SQLite's default mark, 1,000 pages,
// one page a commit) resets every 1,000 commits; the driver's
// (walAutocheckpoint, 10,000 pages, ~1.3 a single append) only after
// ~7,700 appends, so a short run such as `bench journal`'s compares a
// floor mostly in its steady state to an append whose WAL is still
// growing. wal-growth-B/op reports the WAL file's growth over the
// measured commits: 0 in the steady state.
func BenchmarkSQLiteAppendBesideFloor(b *testing.B) {
	ctx := context.Background()
	b.Run("floor", func(b *testing.B) {
		dir := b.TempDir()
		f, err := OpenSQLiteFloor(ctx, dir)
		require.NoError(b, err)
		defer f.Close()
		for range 1100 { // past the default mark: the WAL has reset once
			require.NoError(b, f.one())
		}
		cpuPerOp(b, filepath.Join(dir, "floor.db-wal"), f.one)
	})
	b.Run("append", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "j.db")
		d, err := sqlite.Open(ctx, sqlite.Config{Path: path})
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
		one := func() error { _, err := app.Append(ctx, "bench", req); return err }
		for range 9000 { // past the driver's mark (10,000 pages) at ~1.3 pages an append (2.3 before migration 0016)
			require.NoError(b, one())
		}
		cpuPerOp(b, path+"-wal", one)
	})
}

// cpuPerOp runs one b.N times and reports this process's CPU, the
// goroutines it created and the growth of the WAL file at wal per op.
func cpuPerOp(b *testing.B, wal string, one func() error) {
	b.ReportAllocs()
	var cpu0 time.Duration
	var g0 uint64
	var size0 int64
	for b.Loop() {
		if cpu0 == 0 {
			cpu0, g0, size0 = ProcessCPU(), GoroutinesCreated(), fileSize(b, wal)
		}
		if err := one(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((ProcessCPU()-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(GoroutinesCreated()-g0)/float64(b.N), "goroutines/op")
	b.ReportMetric(float64(fileSize(b, wal)-size0)/float64(b.N), "wal-growth-B/op") // fileSize: runs_bench_test.go
}
