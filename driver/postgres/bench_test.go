package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// BenchmarkJournalAppend is one appender making sequential single-entry
// appends, each its own transaction and commit (two round trips, see
// change), on the store's real clock and the default pools. It logs the
// durability settings it ran with.
func BenchmarkJournalAppend(b *testing.B) {
	d := open(b, Config{})
	ctx := context.Background()
	s, err := d.Settings(ctx)
	require.NoError(b, err)
	b.Logf("postgres settings: %v", s.Values)
	_, err = d.WorldCreate(ctx, &driver.WorldCreateParams{World: "bench", Home: "home", Term: 24 * time.Hour})
	require.NoError(b, err)
	req := journal.AppendRequest{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "bench", Payload: []byte(`{"n":1}`)}
	p := &driver.JournalAppendParams{World: "bench", Requests: make([]journal.AppendRequest, 1)}
	b.ReportAllocs()
	for b.Loop() {
		p.Requests[0] = req
		out, err := d.JournalAppend(ctx, p)
		if err != nil || out[0].Err != nil {
			b.Fatal(err, out)
		}
	}
}
