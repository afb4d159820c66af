package drivertest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// backlog is how many runs queue behind a crashed holder's run in
// caseReclaimedRunKeepsItsPlace: issue 16 saw no successor reach a
// reclaimed run within a term with 5,000 queued, when the reclaim sent it
// to the back.
const backlog = 5000

// caseReclaimedRunKeepsItsPlace: a run claimed before 5,000 others were
// queued, whose holder then died, is reclaimed with its scheduled time,
// priority and id untouched — its place in (priority, scheduled_at, id) —
// and so is the very next run a claim takes, ahead of the whole backlog.
// The reclaim's own store time is in ReclaimedAt.
func caseReclaimedRunKeepsItsPlace(t *testing.T, f Factory) {
	e := newEnv(t, f)
	first := e.enqueue(runs.Enqueue{Queue: "q", Priority: 1})[0].Run
	held := e.claim("q", "crashed", 1)
	require.Len(t, held, 1)
	e.h.Clock.Advance(time.Second)
	batch := make([]runs.Enqueue, backlog)
	for i := range batch {
		batch[i] = runs.Enqueue{Queue: "q", Priority: 1, Payload: []byte(`{"backlog":true}`)}
	}
	e.enqueue(batch...)
	e.h.Clock.Advance(runLease) // the holder's lease is long expired
	res, err := e.runStore().RunReclaim(e.ctx, &driver.RunReclaimParams{})
	require.NoError(t, err)
	require.Len(t, res.Reclaimed, 1)
	r := res.Reclaimed[0]
	require.Equal(t, first.ID, r.ID)
	require.Equal(t, runs.StateAvailable, r.State)
	require.Equal(t, first.ScheduledAt, r.ScheduledAt, "the reclaim keeps the run's scheduled time")
	require.Equal(t, StartTime.Add(time.Second+runLease), r.ReclaimedAt, "and records its own, on the store clock")
	require.Equal(t, r, e.run(r.ID))

	next := e.claim("q", "successor", 1)
	require.Len(t, next, 1)
	require.Equal(t, first.ID, next[0].ID, "the reclaimed run is claimed next, ahead of %d queued", backlog)
	require.Equal(t, held[0].Fence+2, next[0].Fence, "reclaim and claim each moved the fence")
	require.Equal(t, r.ReclaimedAt, next[0].ReclaimedAt, "a claim leaves the reclaim time")
	e.requireFencedOut(first.ID, held[0].Fence, "crashed")
	require.True(t, e.run(e.claim("q", "successor", 1)[0].ID).ReclaimedAt.IsZero(), "a run never reclaimed has no reclaim time")
}
