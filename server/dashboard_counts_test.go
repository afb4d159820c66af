package server_test

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/server"
)

type statsReply struct {
	Counts []struct {
		Queue, State string
		N            int64
	}
	AsOf string `json:"as_of"`
}

func (s statsReply) n(queue, state string) int64 {
	for _, c := range s.Counts {
		if c.Queue == queue && c.State == state {
			return c.N
		}
	}
	return 0
}

// TestRunCountsAreCachedForTheTTL: GET /v1/stats/runs answers the counts
// it read for StatsCacheTTL on the server's clock (a page view costs no
// table scan within it), says when they were read, reads again once the
// TTL has passed, filters the cached counts by each token's own scopes,
// and concurrent askers all get one consistent answer (run with -race).
func TestRunCountsAreCachedForTheTTL(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		clk := clock.NewFake(time.Unix(1_000_000, 0))
		b := setup(t, open, leasehold.Config{}, server.Config{Clock: clk, StatsCacheTTL: 2 * time.Second})
		b.enqueue(t, "mail", `{}`)
		var first statsReply
		b.get(t, "/v1/stats/runs").ok(t, &first)
		require.Equal(t, int64(1), first.n("mail", "available"))
		require.Equal(t, time.Unix(1_000_000, 0).UTC().Format(time.RFC3339Nano), first.AsOf)

		b.enqueue(t, "mail", `{}`)
		b.enqueue(t, "bills", `{}`)
		clk.Advance(time.Second)
		var cached statsReply
		b.get(t, "/v1/stats/runs").ok(t, &cached)
		require.Equal(t, first, cached, "within the TTL: the counts read before")
		var billsOnly statsReply
		b.as(t, b.mint(t, "read:queue:bills")).get(t, "/v1/stats/runs").ok(t, &billsOnly)
		require.Empty(t, billsOnly.Counts, "the cache is filtered by the asking token: bills was not counted yet, mail is not its to read")

		clk.Advance(time.Second)
		var fresh statsReply
		b.get(t, "/v1/stats/runs").ok(t, &fresh)
		require.Equal(t, int64(2), fresh.n("mail", "available"), "the TTL passed: read again")
		require.Equal(t, int64(1), fresh.n("bills", "available"))
		require.Greater(t, fresh.AsOf, first.AsOf)

		clk.Advance(3 * time.Second)
		var wg sync.WaitGroup
		got := make([]statsReply, 8)
		for i := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := b.send("GET", "/v1/stats/runs", nil)
				if err == nil && r.status == 200 {
					_ = json.Unmarshal(r.body, &got[i]) // checked below: an empty answer differs
				}
			}()
		}
		wg.Wait()
		for _, g := range got {
			require.Equal(t, got[0], g, "concurrent askers share one read")
			require.Equal(t, int64(2), g.n("mail", "available"))
		}
	})
}
