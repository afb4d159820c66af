package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

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
		})
	}
}
