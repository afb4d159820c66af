package host_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// keeperRig is a host and its SQLite store on one fake clock (the store's
// clock too), so a test drives minutes of drains without waiting.
func keeperRig(t *testing.T, tweak ...func(*host.Config)) (*clock.Fake, driver.Driver, *host.Host) {
	t.Helper()
	ctx := context.Background()
	fake := clock.NewFake(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	d, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "lh.db"), Clock: fake})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	_, err = d.Migrate(ctx)
	require.NoError(t, err)
	h := newHost(t, d, "home-1", programs.Bank{}, append([]func(*host.Config){func(c *host.Config) { c.Clock = fake }}, tweak...)...)
	require.NoError(t, h.Create(ctx, "w"))
	return fake, d, h
}

// tick advances the fake clock by d once the host's goroutines wait on it
// (n timers: the keeper's and the world loop's; the loop's alone without
// the keeper).
func tick(fake *clock.Fake, n int, d time.Duration) {
	fake.BlockUntil(n)
	fake.Advance(d)
}

func renewals(t *testing.T, d driver.Driver) int {
	n := 0
	for _, e := range journalOf(t, d, "w") {
		if e.Kind == journal.KindRenewed {
			n++
		}
	}
	return n
}

// TestTheWorldKeeperJournalsAboutTwoRenewalsPerTerm: a held world over 60 s
// (two terms) of drains every T_drain journals a lease.renewed each time
// its runway from the last extension falls below ExtendBelow ((T_lease −
// S)/2 = 12.5 s: about every 12.5 s), where synchronous renewals journal
// one per T_renew (5 s). Every drain confirms the lease, so the world keeps
// turning and never stops itself.
func TestTheWorldKeeperJournalsAboutTwoRenewalsPerTerm(t *testing.T) {
	t.Parallel()
	t0 := lease.WorldDefaults()
	count := func(timers int, tweak ...func(*host.Config)) (int, host.Stats) {
		fake, d, h := keeperRig(t, tweak...)
		before := renewals(t, d)
		for i := range int64(60 * time.Second / t0.Drain) {
			tick(fake, timers, t0.Drain)
			if timers == 2 { // each tick's drain done before the next (its own deadline is a timer too)
				require.Eventually(t, func() bool { return h.Stats().Drains > i }, 30*time.Second, 100*time.Microsecond)
			}
		}
		_, err := h.Submit(context.Background(), "w", deposit("a", 1))
		require.NoError(t, err, "still held and turning")
		auditOK(t, journalOf(t, d, "w"))
		return renewals(t, d) - before, h.Stats()
	}
	kept, st := count(2)
	require.Equal(t, int64(60), st.Drains, "a drain per T_drain")
	require.Equal(t, int64(0), st.SelfStops)
	require.GreaterOrEqual(t, kept, 4)
	require.LessOrEqual(t, kept, 6, "about one lease.renewed per (T_lease − S)/2")
	synced, _ := count(1, func(c *host.Config) { c.SyncRenewals = true })
	require.GreaterOrEqual(t, synced, 11, "one per T_renew without the keeper")
	t.Logf("60 s held: %d lease.renewed with the keeper (%d drains, %d extensions), %d with synchronous renewals every T_renew",
		kept, st.Drains, st.Extensions, synced)
}

// TestTheWorldKeeperLetsARevokedWorldGo: a drain the store refuses (the
// operator revoked the lease) makes the world's loop let it go.
func TestTheWorldKeeperLetsARevokedWorldGo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake, d, h := keeperRig(t)
	_, err := d.LeaseChange(ctx, &driver.LeaseChangeParams{World: "w", Op: "revoke",
		Plan: func(cur *driver.World, now time.Time) (journal.Plan, error) {
			return journal.PlanRevoke(cur.State, now, cur.Epoch, "maintenance")
		}})
	require.NoError(t, err)
	tick(fake, 2, lease.WorldDefaults().Drain)
	require.Eventually(t, func() bool { return len(h.Held()) == 0 }, 30*time.Second, time.Millisecond)
	_, err = h.Submit(ctx, "w", deposit("a", 1))
	var nh *host.NotHolderError
	require.ErrorAs(t, err, &nh)
}
