package drivertest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// Append cases moved here from the Postgres driver's own tests.
var appendMoreCases = []Case{
	{"AppendStoresPayloadsByteExactAndTimesTruncatedInUTC", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		w := e.create("w1", "home")
		require.Equal(t, StartTime, w.CreatedAt)
		e.h.Clock.Advance(time.Second + 1500*time.Nanosecond) // the sub-µs part is truncated
		out, err := e.d.JournalAppend(e.ctx, &driver.JournalAppendParams{World: "w1", Requests: []journal.AppendRequest{
			{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "note", Payload: []byte(`{"a":"<&>é"}`)},
			{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "note", Payload: []byte(`[1,2]`)},
		}})
		require.NoError(t, err)
		require.Equal(t, []journal.AppendOutcome{{Position: 2}, {Position: 3}}, out)
		es := e.read("w1")
		require.Len(t, es, 3)
		require.Equal(t, `{"a":"<&>é"}`, string(es[1].Payload), "payload is stored byte-exact")
		require.Equal(t, StartTime.Add(time.Second+time.Microsecond), es[2].StoreTime)
		require.Equal(t, time.UTC, es[2].StoreTime.Location())
		require.Nil(t, es[0].PrevHash, "empty prev_hash reads back as nil")
		require.Nil(t, es[0].Signature, "empty signature reads back as nil")
		require.Equal(t, int64(3), e.audit("w1").Final.Position)
	}},
	{"ConcurrentAppendersSerializeOnTheHeadRow", func(t *testing.T, f Factory) {
		// Many appenders to one world at once: every accepted entry gets
		// its own position and the journal verifies. As many appenders as
		// the Postgres general pool has connections by default (8): they
		// queue on the head row's lock, not on the pool.
		e := newEnv(t, f)
		e.create("w1", "home")
		const n, each = 8, 10
		positions := make(chan int64, n*each)
		var wg sync.WaitGroup
		for g := range n {
			wg.Go(func() {
				for i := range each {
					out, err := e.d.JournalAppend(e.ctx, &driver.JournalAppendParams{World: "w1", Requests: []journal.AppendRequest{
						{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "note", Payload: fmt.Appendf(nil, `{"g":%d,"i":%d}`, g, i)}}})
					if !assert.NoError(t, err) || !assert.NoError(t, out[0].Err) {
						return
					}
					positions <- out[0].Position
				}
			})
		}
		wg.Wait()
		close(positions)
		seen := map[int64]bool{}
		for p := range positions {
			require.False(t, seen[p], "position %d given twice", p)
			seen[p] = true
		}
		require.Len(t, seen, n*each)
		require.Equal(t, int64(1+n*each), e.audit("w1").Final.Position)
	}},
}
