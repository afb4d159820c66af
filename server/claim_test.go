package server_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/server"
)

// TestALongPollingClaimIsWokenByAnEnqueue: a claim waiting on an empty
// queue answers the run an enqueue through the server added — woken by
// the enqueue, not by its poll (which is set far beyond the test).
func TestALongPollingClaimIsWokenByAnEnqueue(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{ClaimPoll: time.Hour, MaxClaimWait: time.Hour})
		got := b.postAsync(t, "/v1/runs/claim", map[string]any{"queue": "q", "owner": "o", "limit": 5, "wait_ms": 3_600_000})
		e := b.enqueue(t, "q", `{"n":1}`)
		r := <-got
		require.NoError(t, r.err)
		var c runsBody
		r.ok(t, &c)
		require.Len(t, c.Runs, 1)
		require.Equal(t, e.ID, c.Runs[0].ID)
		require.Positive(t, c.Runs[0].RunwayMS)
	})
}

// TestALongPollAnswersEmptyWhenItsWaitRunsOut: the wait is bounded by
// wait_ms, on the server's clock (a fake one here, advanced once the poll
// waits on it).
func TestALongPollAnswersEmptyWhenItsWaitRunsOut(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	b := setup(t, stores[0].open, leasehold.Config{}, server.Config{Clock: clk, ClaimPoll: time.Hour})
	got := b.postAsync(t, "/v1/runs/claim", map[string]any{"queue": "q", "owner": "o", "wait_ms": 5000})
	clk.BlockUntil(1) // the poll's timer
	clk.Advance(5 * time.Second)
	r := <-got
	require.NoError(t, r.err)
	var c runsBody
	r.ok(t, &c)
	require.Empty(t, c.Runs)

	// wait_ms 0 answers at once.
	b.post(t, "/v1/runs/claim", map[string]any{"queue": "q", "owner": "o"}).ok(t, &c)
	require.Empty(t, c.Runs)
}
