package drivertest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// The world keeper's drain (driver.WorldRenewer): one call confirms a
// holder's worlds and extends those marked, each world answered on its
// own; a refusal journals nothing.

func init() {
	leaseCases = append(leaseCases, worldRenewCases...)
}

func (e *env) renewWorlds(holder string, rs ...driver.WorldRenewal) []driver.WorldRenewOutcome {
	e.t.Helper()
	out, err := e.d.WorldRenewMany(e.ctx, &driver.WorldRenewManyParams{Holder: holder, Worlds: rs})
	require.NoError(e.t, err)
	require.Len(e.t, out, len(rs))
	return out
}

var worldRenewCases = []Case{
	{"WorldRenewManyExtendsAndConfirms", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		for _, w := range []string{"a", "b", "c"} {
			e.create(w, "h")
		}
		e.create("other", "g")
		e.h.Clock.Advance(10 * time.Second)
		out := e.renewWorlds("h",
			driver.WorldRenewal{World: "a", Epoch: 1, Extend: true, Term: term},
			driver.WorldRenewal{World: "b", Epoch: 1},
			driver.WorldRenewal{World: "c", Epoch: 1, Extend: true, Term: 2 * term},
			driver.WorldRenewal{World: "other", Epoch: 1},
			driver.WorldRenewal{World: "nope", Epoch: 1},
			driver.WorldRenewal{World: "a-stale", Epoch: 1},
		)
		now := StartTime.Add(10 * time.Second)
		require.NoError(t, out[0].Err)
		require.Equal(t, int64(2), out[0].World.Position, "an extension journals lease.renewed")
		require.Equal(t, now.Add(term), out[0].World.ExpiresAt)
		require.NoError(t, out[1].Err)
		require.Equal(t, int64(1), out[1].World.Position, "a confirmation journals nothing")
		require.Equal(t, StartTime.Add(term), out[1].World.ExpiresAt)
		require.Equal(t, now.Add(2*term), out[2].World.ExpiresAt)
		require.ErrorIs(t, out[3].Err, lease.ErrNotHolder)
		require.ErrorIs(t, out[4].Err, lease.ErrNotFound)
		require.ErrorIs(t, out[5].Err, lease.ErrNotFound)
		require.Equal(t, out[0].World.State, e.get("a").State, "the answer is the head")
		require.Equal(t, int64(1), e.get("other").Position, "a refusal journals nothing")
		for _, w := range []string{"a", "b", "c"} {
			require.True(t, e.audit(w).OK())
		}

		// A confirmation-only drain reads, and sees an expired lease as refused.
		e.h.Clock.Advance(term)
		out = e.renewWorlds("h", driver.WorldRenewal{World: "b", Epoch: 1}, driver.WorldRenewal{World: "a", Epoch: 1},
			driver.WorldRenewal{World: "c", Epoch: 2})
		require.ErrorIs(t, out[0].Err, lease.ErrLeaseExpired)
		require.ErrorIs(t, out[1].Err, lease.ErrLeaseExpired)
		require.ErrorIs(t, out[2].Err, lease.ErrFenced)
		// An extension of an expired lease is refused, and journals nothing.
		out = e.renewWorlds("h", driver.WorldRenewal{World: "a", Epoch: 1, Extend: true, Term: term},
			driver.WorldRenewal{World: "c", Epoch: 1, Extend: true, Term: term})
		require.ErrorIs(t, out[0].Err, lease.ErrLeaseExpired)
		require.NoError(t, out[1].Err, "c's term was twice as long")
		require.Equal(t, int64(2), e.get("a").Position)
		require.Equal(t, int64(3), e.get("c").Position)
	}},
	{"WorldRenewManyBadParamsWriteNothing", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("a", "h")
		before, err := e.fingerprint()
		require.NoError(t, err)
		for name, p := range map[string]*driver.WorldRenewManyParams{
			"no holder":  {Worlds: []driver.WorldRenewal{{World: "a", Epoch: 1, Extend: true, Term: term}}},
			"bad world":  {Holder: "h", Worlds: []driver.WorldRenewal{{World: "", Epoch: 1}}},
			"twice":      {Holder: "h", Worlds: []driver.WorldRenewal{{World: "a", Epoch: 1}, {World: "a", Epoch: 1, Extend: true, Term: term}}},
			"zero epoch": {Holder: "h", Worlds: []driver.WorldRenewal{{World: "a", Extend: true, Term: term}}},
			"bad term":   {Holder: "h", Worlds: []driver.WorldRenewal{{World: "a", Epoch: 1, Extend: true, Term: -time.Second}}},
			"huge term":  {Holder: "h", Worlds: []driver.WorldRenewal{{World: "a", Epoch: 1, Extend: true, Term: journal.MaxTerm + time.Hour}}},
			"too many":   {Holder: "h", Worlds: make([]driver.WorldRenewal, driver.MaxWorldRenewBatch+1)},
		} {
			_, err := e.d.WorldRenewMany(e.ctx, p)
			require.ErrorIs(t, err, lease.ErrInvalid, name)
		}
		after, err := e.fingerprint()
		require.NoError(t, err)
		require.Equal(t, before, after)
	}},
}
