package sqlite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// TestAppendWALFrames counts the pages one single-entry append commits to
// the WAL — what its fsync carries beyond the store's own one-row commit
// (one page). A keyless append writes the entry's page alone: it leaves the
// lease as it was, so it writes no head row (the tail is the last entry,
// migration 0016; 2.3 pages before, with the head's). A keyed one adds the
// key index's; both a page split now and then (the bounds allow half a
// page).
func TestAppendWALFrames(t *testing.T) {
	ctx := context.Background()
	d, path := openWALCounted(t)
	_, err := d.WorldCreate(ctx, &driver.WorldCreateParams{World: "w", Home: "home", Term: time.Hour})
	require.NoError(t, err)
	const frame = walFrame
	const n = 40 // well under the 1000-page auto-checkpoint
	appendN := func(keyed bool) float64 {
		start := walSize(t, path)
		for i := range n {
			req := journal.AppendRequest{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "bench", Payload: []byte(`{"n":1}`)}
			if keyed {
				req.Key = fmt.Sprintf("k-%d", i)
			}
			out, err := d.JournalAppend(ctx, &driver.JournalAppendParams{World: "w", Requests: []journal.AppendRequest{req}})
			require.NoError(t, err)
			require.NoError(t, out[0].Err)
		}
		return float64(walSize(t, path)-start) / frame / n
	}
	appendN(false) // warm: the first appends grow the tables
	keyless, keyed := appendN(false), appendN(true)
	t.Logf("WAL pages per append: keyless %.2f, keyed %.2f", keyless, keyed)
	require.LessOrEqual(t, keyless, 1.5, "a keyless append commits the entry's page, no head page")
	require.LessOrEqual(t, keyed, 2.5, "a keyed append adds the key index's page")
}
