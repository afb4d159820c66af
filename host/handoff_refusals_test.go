package host_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
	"github.com/leasehold/leasehold/lease"
)

// TestBadHandoffsAreTypedAndChangeNothing (issue 11, "Bad input and
// limits"): a handback or spill asked of a host that does not hold the
// world, a handoff to a node the router does not know (not a registered
// spill target), to a malformed node name, or of an unknown world — in
// process and through a remote host — each answers a typed error and
// leaves the journal and the lease as they were.
func TestBadHandoffsAreTypedAndChangeNothing(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		home := newHost(t, d, "home-1", programs.Bank{})
		spill := newHost(t, d, "spill-1", programs.Bank{})
		require.NoError(t, home.Create(ctx, "w"))
		_, err := home.Submit(ctx, "w", deposit("a", 1))
		require.NoError(t, err)
		remoteSpill, remoteHome := serve(t, spill), serve(t, home)
		r := host.NewRouter(d, home, spill)
		before := journalOf(t, d, "w")
		head, err := d.WorldGet(ctx, &driver.WorldGetParams{World: "w"})
		require.NoError(t, err)

		for name, c := range map[string]struct {
			do   func() error
			want error
		}{
			"handback by the non-holder":           {func() error { return spill.Handoff(ctx, "w", "home-1") }, lease.ErrNotHolder},
			"handback by the non-holder, remote":   {func() error { return remoteSpill.Handoff(ctx, "w", "home-1") }, lease.ErrNotHolder},
			"spill to an unregistered node":        {func() error { return r.Handoff(ctx, "w", "home-1", "spill-9") }, lease.ErrInvalid},
			"spill by the router's non-holder":     {func() error { return r.Handoff(ctx, "w", "spill-1", "home-1") }, lease.ErrNotHolder},
			"handoff to a malformed node name":     {func() error { return home.Handoff(ctx, "w", "spill 1") }, lease.ErrInvalid},
			"handoff to a malformed name, remote":  {func() error { return remoteHome.Handoff(ctx, "w", "spill\x00") }, lease.ErrInvalid},
			"handoff of an unknown world":          {func() error { return home.Handoff(ctx, "nope", "spill-1") }, lease.ErrNotHolder},
			"handoff of a malformed world, remote": {func() error { return remoteHome.Handoff(ctx, "n o", "spill-1") }, lease.ErrInvalid},
		} {
			require.ErrorIs(t, c.do(), c.want, name)
		}
		require.Equal(t, before, journalOf(t, d, "w"), "a refused handoff journals nothing")
		after, err := d.WorldGet(ctx, &driver.WorldGetParams{World: "w"})
		require.NoError(t, err)
		require.Equal(t, head.State, after.State, "the lease is as it was")
		_, err = home.Submit(ctx, "w", deposit("a", 2))
		require.NoError(t, err, "the holder still serves the world")
	})
}
