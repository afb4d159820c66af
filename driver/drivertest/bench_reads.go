package drivertest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
)

// BenchReads measures the reads a caller repeats by key: a run (RunGet:
// the API's run page, a reconcile, the simulator's oracle), a world head
// (WorldGet) and the sweeper's scan for expired world leases, each on a
// store holding 100 running runs and one held world.
func BenchReads(b *testing.B, open BenchOpener) {
	d, ctx := open(b), context.Background()
	held := enqueueAndClaim(b, ctx, d, 100)
	_, err := d.WorldCreate(ctx, &driver.WorldCreateParams{World: "bench", Home: "home", Term: 24 * time.Hour})
	require.NoError(b, err)
	for _, read := range []struct {
		name string
		call func(i int) error
	}{
		{"run", func(i int) error {
			_, err := d.RunGet(ctx, &driver.RunGetParams{ID: held[i%len(held)].ID})
			return err
		}},
		{"world", func(int) error {
			_, err := d.WorldGet(ctx, &driver.WorldGetParams{World: "bench"})
			return err
		}},
		{"expired-scan", func(int) error {
			_, err := d.LeaseScanExpired(ctx, &driver.LeaseScanParams{Limit: 100})
			return err
		}},
	} {
		b.Run(read.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := read.call(i); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
