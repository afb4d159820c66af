package sqlite_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/runs"
)

// TestEventAppendWALFrames counts the WAL pages a group-committed batch of
// run events commits, in the shape of `leasehold bench events` (batches of
// 1,000 events over 100 held runs, after 60 batches so the key index is
// several leaves per run deep), which b-tree each page belongs to
// (dbstat), and the pages one single-event append commits. Counted, not
// timed: the figure holds on a loaded machine. Each page is a 4 KiB write
// at commit (two pwrites, a checksum) that the commit's fsync waits for,
// and a page the next checkpoint copies: on this path the page count, not
// the rows, is what the batch pays for. The key index (run_id, fence, seq)
// takes about two leaf pages per run per batch — each run's new entries
// land in the middle of the index, at the end of that run's range, and a
// full leaf there is rebalanced with its two siblings — against about 10
// table pages for the 1,000 rows themselves (docs/BENCHMARKS.md, Stop 25).
func TestEventAppendWALFrames(t *testing.T) {
	if raceEnabled {
		t.Skip("70,000 events through the engine: counted without -race (make test-norace runs it in CI; race_on_test.go)")
	}
	ctx := context.Background()
	d, path := openWALCounted(t)
	noAutoCheckpoint(t, d)
	const frame = walFrame
	const nRuns, batch, warm, rounds = 100, 1000, 60, 10
	es := make([]runs.Enqueue, nRuns)
	for i := range es {
		es[i] = runs.Enqueue{Queue: "q", Payload: []byte(`{"n":1}`)}
	}
	_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es})
	require.NoError(t, err)
	held, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "o", Limit: nRuns, Lease: time.Hour})
	require.NoError(t, err)
	require.Len(t, held, nRuns)
	seq := make([]int64, nRuns)
	appendN := func(n int) {
		p := &driver.RunEventAppendParams{Events: make([]driver.RunEventInsert, n)}
		for i := range p.Events {
			k := i % nRuns
			seq[k]++
			p.Events[i] = driver.RunEventInsert{RunID: held[k].ID, Fence: held[k].Fence, Seq: seq[k], Kind: "bench", Payload: []byte(`{"n":1}`)}
		}
		res, err := d.RunEventAppend(ctx, p)
		require.NoError(t, err)
		require.Empty(t, res.Fenced)
	}
	for range warm {
		appendN(batch)
	}
	raw := func() []byte {
		b, err := os.ReadFile(path + "-wal")
		require.NoError(t, err)
		return b
	}
	w0 := int64(len(raw()))
	for range rounds {
		appendN(batch)
	}
	wal := raw()
	frames := map[uint32]int{} // page number → frames written
	for off := w0; off+24 <= int64(len(wal)); off += frame {
		h := wal[off : off+24]
		frames[uint32(h[0])<<24|uint32(h[1])<<16|uint32(h[2])<<8|uint32(h[3])]++
	}
	byTree := map[string]int{}
	total := 0
	for page, n := range frames {
		var tree string
		require.NoError(t, sqlite.QueryForTest(ctx, d, fmt.Sprintf(
			`SELECT coalesce((SELECT name || ' ' || pagetype FROM dbstat WHERE pageno = %d), 'free')`, page), &tree))
		byTree[tree] += n
		total += n
	}
	trees := slices.Sorted(maps.Keys(byTree))
	var parts []string
	for _, tree := range trees {
		parts = append(parts, fmt.Sprintf("%s %.1f", tree, float64(byTree[tree])/rounds))
	}
	w1 := int64(len(wal))
	for range rounds {
		appendN(1)
	}
	perBatch := float64(total) / rounds
	perSingle := float64(int64(len(raw()))-w1) / frame / rounds
	t.Logf("WAL pages per batch of %d events over %d runs: %.1f (%.0f bytes per event): %s; per single-event append: %.2f",
		batch, nRuns, perBatch, perBatch*frame/batch, strings.Join(parts, ", "), perSingle)
	require.Less(t, perBatch, 300.0, "a batch appends at the table's right edge and touches each run's range in the key index")
	require.Less(t, float64(byTree["run_events leaf"])/rounds, 20.0, "the rows go to the table's right edge")
	require.Less(t, perSingle, 4.0, "one event: the position counter, the table's last leaf, the run's key leaf")
}
