package drivertest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// renewMany runs one drain of owner's refs.
func (e *env) renewMany(owner string, refs ...driver.RunLeaseRef) *driver.RunRenewManyResult {
	e.t.Helper()
	res, err := e.runStore().RunRenewMany(e.ctx, &driver.RunRenewManyParams{Owner: owner, Lease: runLease, Runs: refs})
	require.NoError(e.t, err)
	return res
}

func ref(r *driver.Run) driver.RunLeaseRef { return driver.RunLeaseRef{ID: r.ID, Fence: r.Fence} }

// renewManyCases are the write-behind drain's store rules (SPEC §2).
var renewManyCases = []Case{
	{"RunRenewManyRenewsLiveLeasesAndReportsEveryOtherLost", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		rs := e.runStore()
		for range 5 {
			e.enqueue(runs.Enqueue{Queue: "q"})
		}
		e.enqueue(runs.Enqueue{Queue: "other"})
		mine := e.claim("q", "w", 5)
		require.Len(t, mine, 5)
		theirs := e.claim("other", "x", 1)[0]
		live, cancelled, completed := mine[0], mine[1], mine[2]
		_, err := rs.RunCancel(e.ctx, &driver.RunCancelParams{ID: cancelled.ID, Reason: "operator"})
		require.NoError(t, err)
		_, err = rs.RunComplete(e.ctx, &driver.RunCompleteParams{ID: completed.ID, Fence: completed.Fence})
		require.NoError(t, err)
		before := map[int64]*driver.Run{}
		for _, r := range append(mine, theirs) {
			before[r.ID] = e.run(r.ID)
		}
		e.h.Clock.Advance(10 * time.Second)
		batch := []driver.RunLeaseRef{
			ref(live),
			ref(cancelled), // fenced out by the cancel
			ref(completed), // no longer running
			{ID: mine[3].ID, Fence: mine[3].Fence + 1}, // a fence from the future
			ref(theirs),                      // another owner's lease
			{ID: theirs.ID + 1000, Fence: 1}, // missing
			ref(mine[4]),
		}
		res := e.renewMany("w", batch...)
		require.Equal(t, []int64{live.ID, mine[4].ID}, res.Renewed)
		require.Equal(t, []int{1, 2, 3, 4, 5}, res.Lost)
		require.Equal(t, StartTime.Add(10*time.Second), res.StoreNow, "the drain reports the store time it renewed against")
		for _, r := range []*driver.Run{live, mine[4]} {
			got := e.run(r.ID)
			require.Equal(t, StartTime.Add(10*time.Second+runLease), got.ExpiresAt, "expiry = store now + lease")
			want := *before[r.ID]
			want.ExpiresAt = got.ExpiresAt
			require.Equal(t, &want, got, "the drain writes the expiry and nothing else: no fence, owner, state or attempt")
		}
		for _, r := range []*driver.Run{cancelled, completed, mine[3], theirs} {
			require.Equal(t, before[r.ID], e.run(r.ID), "a lost lease is left unchanged")
		}
	}},
	{"RunRenewManyNeverRevivesAnExpiredLease", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		rs := e.runStore()
		e.enqueue(runs.Enqueue{Queue: "q"}, runs.Enqueue{Queue: "q"})
		c := e.claim("q", "w", 2)
		require.Len(t, c, 2)
		e.h.Clock.Advance(runLease - time.Microsecond)
		res := e.renewMany("w", ref(c[1]))
		require.Equal(t, []int64{c[1].ID}, res.Renewed, "one microsecond before expiry it still renews")
		e.h.Clock.Advance(time.Microsecond) // c[0] expires now: expires_at = now is expired
		before := e.run(c[0].ID)
		res = e.renewMany("w", ref(c[0]), ref(c[1]))
		require.Equal(t, []int64{c[1].ID}, res.Renewed)
		require.Equal(t, []int{0}, res.Lost, "an expired lease is lost, not revived")
		require.Equal(t, before, e.run(c[0].ID))
		rc, err := rs.RunReclaim(e.ctx, &driver.RunReclaimParams{})
		require.NoError(t, err)
		require.Len(t, rc.Reclaimed, 1, "the reclaimer still finds it expired")
		require.Equal(t, c[0].ID, rc.Reclaimed[0].ID)

		// The same owner claims it again: a new lease under a new fence. The
		// old ref stays lost; the new one renews.
		again := e.claim("q", "w", 1)[0]
		require.Equal(t, c[0].ID, again.ID)
		require.Equal(t, c[0].Fence+2, again.Fence, "reclaim and claim each increment the fence")
		res = e.renewMany("w", ref(c[0]))
		require.Equal(t, []int{0}, res.Lost, "a lease of an older fence never renews the new claim (ABA)")
		res = e.renewMany("w", ref(again))
		require.Equal(t, []int64{again.ID}, res.Renewed)
	}},
	{"RunRenewManyCrossesChunksInBatchOrder", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		const n = 250 // more than one SQLite chunk
		es := make([]runs.Enqueue, n)
		for i := range es {
			es[i] = runs.Enqueue{Queue: "q"}
		}
		e.enqueue(es...)
		c := e.claim("q", "w", n)
		require.Len(t, c, n)
		refs := make([]driver.RunLeaseRef, n)
		var want []int64
		var lost []int
		for i := range c {
			refs[n-1-i] = ref(c[i]) // reverse order: results follow the batch, not the table
		}
		for i := range refs {
			if i%7 == 3 {
				refs[i].Fence++ // not this lease
				lost = append(lost, i)
			} else {
				want = append(want, refs[i].ID)
			}
		}
		e.h.Clock.Advance(time.Second)
		res := e.renewMany("w", refs...)
		require.Equal(t, want, res.Renewed)
		require.Equal(t, lost, res.Lost)
		require.Equal(t, StartTime.Add(time.Second+runLease), e.run(want[len(want)-1]).ExpiresAt)
		require.Equal(t, StartTime.Add(runLease), e.run(refs[3].ID).ExpiresAt)
		require.Empty(t, e.renewMany("w").Renewed, "an empty drain is a no-op")
		require.Zero(t, e.renewMany("w").StoreNow, "and reports no store time")
	}},
	{"RunRenewManyRefusesBadInputChangingNothing", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		rs := e.runStore()
		e.enqueue(runs.Enqueue{Queue: "q"})
		r := e.claim("q", "w", 1)[0]
		before := e.run(r.ID)
		e.h.Clock.Advance(time.Second)
		big := make([]driver.RunLeaseRef, driver.MaxRunRenewBatch+1)
		for i := range big {
			big[i] = driver.RunLeaseRef{ID: int64(i + 1), Fence: 1}
		}
		for name, p := range map[string]*driver.RunRenewManyParams{
			"no owner":       {Lease: runLease, Runs: []driver.RunLeaseRef{ref(r)}},
			"zero lease":     {Owner: "w", Runs: []driver.RunLeaseRef{ref(r)}},
			"negative lease": {Owner: "w", Lease: -time.Second, Runs: []driver.RunLeaseRef{ref(r)}},
			"absurd lease":   {Owner: "w", Lease: 1000 * time.Hour, Runs: []driver.RunLeaseRef{ref(r)}},
			"zero fence":     {Owner: "w", Lease: runLease, Runs: []driver.RunLeaseRef{ref(r), {ID: r.ID + 1, Fence: 0}}},
			"bad id":         {Owner: "w", Lease: runLease, Runs: []driver.RunLeaseRef{{ID: -1, Fence: 1}, ref(r)}},
			"twice":          {Owner: "w", Lease: runLease, Runs: []driver.RunLeaseRef{ref(r), {ID: r.ID, Fence: r.Fence + 1}}},
			"over the limit": {Owner: "w", Lease: runLease, Runs: big},
		} {
			_, err := rs.RunRenewMany(e.ctx, p)
			require.ErrorIs(t, err, driver.ErrInvalid, name)
			require.Equal(t, before, e.run(r.ID), name)
		}
	}},
	{"RunRenewManyWithOwnersChecksEachRunsOwner", func(t *testing.T, f Factory) {
		// One drain for the leases of many holders (the server's keeper for
		// its remote runners): each run is renewed only for its own owner,
		// across chunks, and a swapped owner renews nothing.
		e := newEnv(t, f)
		rs := e.runStore()
		var refs []driver.RunLeaseRef
		var owners []string
		for i := range 150 {
			e.enqueue(runs.Enqueue{Queue: "q"})
			owner := fmt.Sprintf("w%d", i%3)
			r := e.claim("q", owner, 1)[0]
			refs, owners = append(refs, ref(r)), append(owners, owner)
		}
		e.h.Clock.Advance(time.Second)
		swapped := slices.Clone(owners)
		swapped[0], swapped[1] = owners[1], owners[0]
		res, err := rs.RunRenewMany(e.ctx, &driver.RunRenewManyParams{Lease: runLease, Runs: refs, Owners: swapped})
		require.NoError(t, err)
		require.Equal(t, []int{0, 1}, res.Lost, "a lease is renewed only for its owner")
		require.Equal(t, StartTime.Add(runLease), e.run(refs[0].ID).ExpiresAt, "unchanged")
		require.Equal(t, StartTime.Add(time.Second+runLease), e.run(refs[149].ID).ExpiresAt)

		e.h.Clock.Advance(time.Second)
		res, err = rs.RunRenewMany(e.ctx, &driver.RunRenewManyParams{Owner: "ignored", Lease: runLease, Runs: refs, Owners: owners})
		require.NoError(t, err)
		require.Empty(t, res.Lost)
		require.Len(t, res.Renewed, 150)
		for _, r := range refs {
			require.Equal(t, StartTime.Add(2*time.Second+runLease), e.run(r.ID).ExpiresAt)
		}
		for name, p := range map[string]*driver.RunRenewManyParams{
			"owners short": {Lease: runLease, Runs: refs, Owners: owners[1:]},
			"empty owner":  {Lease: runLease, Runs: refs[:1], Owners: []string{""}},
		} {
			_, err := rs.RunRenewMany(e.ctx, p)
			require.ErrorIs(t, err, driver.ErrInvalid, name)
		}
	}},
}
