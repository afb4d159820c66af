package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
)

// BenchmarkSubmit: commands acknowledged on one world, 256 submitters at
// once (b.SetParallelism), each command a bank deposit with its own key.
// `leasehold bench worlds` is the side-by-side figure with handoffs.
func BenchmarkSubmit(b *testing.B) {
	for _, st := range []struct {
		name string
		open func(testing.TB) driver.Driver
	}{{"sqlite", openSQLite}, {"postgres", openPostgres}} {
		b.Run(st.name, func(b *testing.B) {
			d := st.open(b)
			h := newHost(b, d, "home-1", programs.Bank{}, func(c *host.Config) {
				c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			})
			ctx := context.Background()
			if err := h.Create(ctx, "hot"); err != nil {
				b.Fatal(err)
			}
			var n atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(128)
			cpu0 := processCPU(b)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					cmd := host.Command{Key: fmt.Sprintf("k%d", i), Payload: json.RawMessage(`{"op":"deposit","account":"a","amount":1}`)}
					if _, err := h.Submit(ctx, "hot", cmd); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU is the CPU time (user and system) this process has used: per
// command, it is the host's cost that a loaded machine does not bend the
// way it bends ns/op (the store's own CPU, a Postgres server's, is not in
// it).
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// storeOnly hides the driver's SnapshotStore: a host on it replays every
// world from position 1, as before snapshots.
type storeOnly struct{ host.Store }

// BenchmarkPrepare: a spill node's Prepare of a world of 10,000 turns,
// replayed from position 1 and restored from a snapshot 4,000 positions
// or fewer behind the head. entries/op (journal entries read) and
// allocs/op are the load-independent figures; ns/op is the machine's.
func BenchmarkPrepare(b *testing.B) {
	for _, st := range []struct {
		name string
		open func(testing.TB) driver.Driver
	}{{"sqlite", openSQLite}, {"postgres", openPostgres}} {
		b.Run(st.name, func(b *testing.B) {
			ctx := context.Background()
			d := st.open(b)
			quiet := func(c *host.Config) { c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil)) }
			home := newHost(b, d, "home-1", programs.Bank{}, quiet, func(c *host.Config) { c.SnapshotEvery = 4000 })
			if err := home.Create(ctx, "big"); err != nil {
				b.Fatal(err)
			}
			depositMany(b, home, "big", 10_000)
			waitSnapshot(b, d, "big", 8000)
			for _, mode := range []string{"replay", "snapshot"} {
				b.Run(mode, func(b *testing.B) {
					cs := &countingStore{Driver: d}
					var store host.Store = cs
					if mode == "replay" {
						store = storeOnly{cs}
					}
					b.ReportAllocs()
					b.ResetTimer()
					for i := range b.N {
						b.StopTimer()
						spill := newHost(b, store, fmt.Sprintf("spill-%d", i), programs.Bank{}, quiet, func(c *host.Config) { c.SnapshotEvery = -1 })
						b.StartTimer()
						if err := spill.Prepare(ctx, "big"); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(cs.read.Load())/float64(b.N), "entries/op")
				})
			}
		})
	}
}
