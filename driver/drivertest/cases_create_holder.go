package drivertest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/lease"
)

// A world created homed on a pool but held by the replica that creates it
// (WorldCreateParams.Holder): the first grant is the holder's, the Home the
// pool's, and the expiry sweep grants a live replica of the pool.

func init() {
	sweepCases = append(sweepCases, Case{"WorldCreatedHeldByAReplicaOfItsHomePool", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		w, err := e.d.WorldCreate(e.ctx, &driver.WorldCreateParams{World: "w", Home: "homes", Holder: "home-1", Term: term})
		require.NoError(t, err)
		require.Equal(t, "homes", w.Home)
		require.Equal(t, "home-1", w.Holder)
		require.Equal(t, *w, *e.get("w"))
		require.True(t, e.audit("w").OK())
		e.join("homes", "home-2", 10*term)
		e.h.Clock.Advance(term)
		to, swept, err := e.sweepHome("w")
		require.NoError(t, err)
		require.True(t, swept)
		require.Equal(t, "home-2", to, "a live replica other than the expired holder")
		_, err = e.d.WorldCreate(e.ctx, &driver.WorldCreateParams{World: "x", Home: "homes", Holder: "bad holder", Term: term})
		require.ErrorIs(t, err, lease.ErrInvalid)
	}})
}
