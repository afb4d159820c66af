package world_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/world"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// The holder protocol against each real driver. The holders' clocks are
// fakes (runway is measured on them); the store's clock is real, and every
// lease here is far from expiring on it.

const holderTerm = 30 * time.Second

// spyStore counts the calls that reach the store and can lose a lease
// change's answer (after applying it, or instead of sending it).
type spyStore struct {
	world.Store
	calls int
	// during runs while a lease change is in flight (e.g. to advance a
	// fake clock: a slow round trip).
	during func()
	// loseChange: the next lease change is applied (landed) or not
	// (lost on the way), and its answer is lost either way.
	loseChange, landed bool
}

var errLost = errors.New("spy: the answer was lost")

func (s *spyStore) WorldGet(ctx context.Context, p *driver.WorldGetParams) (*driver.World, error) {
	s.calls++
	return s.Store.WorldGet(ctx, p)
}

func (s *spyStore) LeaseChange(ctx context.Context, p *driver.LeaseChangeParams) (*driver.World, error) {
	s.calls++
	if s.during != nil {
		s.during()
	}
	if s.loseChange {
		s.loseChange = false
		if s.landed {
			_, _ = s.Store.LeaseChange(ctx, p)
		}
		return nil, errLost
	}
	return s.Store.LeaseChange(ctx, p)
}

func (s *spyStore) JournalAppend(ctx context.Context, p *driver.JournalAppendParams) ([]journal.AppendOutcome, error) {
	s.calls++
	return s.Store.JournalAppend(ctx, p)
}

type holderBundle struct {
	d     driver.Driver
	clock *clock.Fake
}

func setupHolders(t *testing.T, d driver.Driver) *holderBundle {
	_, err := d.WorldCreate(context.Background(), &driver.WorldCreateParams{World: "w", Home: "home", Term: holderTerm})
	require.NoError(t, err)
	return &holderBundle{d: d, clock: clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
}

func (b *holderBundle) holder(t *testing.T, name string) (*world.Holder, *spyStore) {
	spy := &spyStore{Store: b.d}
	h, err := world.NewHolder(world.HolderConfig{Store: spy, Clock: b.clock, World: "w", Name: name,
		Timing: lease.Timing{Lease: holderTerm}})
	require.NoError(t, err)
	return h, spy
}

// change makes a lease change as an outside party (home, an operator).
func (b *holderBundle) change(t *testing.T, op string, plan func(s journal.State, now time.Time) (journal.Plan, error)) *driver.World {
	w, err := b.d.LeaseChange(context.Background(), &driver.LeaseChangeParams{World: "w", Op: op,
		Plan: func(cur *driver.World, now time.Time) (journal.Plan, error) { return plan(cur.State, now) }})
	require.NoError(t, err)
	return w
}

// handFromHome hands the lease from home (epoch 1) to holder.
func (b *holderBundle) handFromHome(t *testing.T, to string) *driver.World {
	return b.change(t, "handoff", func(s journal.State, now time.Time) (journal.Plan, error) {
		return journal.PlanHandoff(s, now, "home", to, s.Epoch, holderTerm)
	})
}

func readAdopts(t *testing.T, h *world.Holder, want bool) *driver.World {
	w, adopted, err := h.Read(context.Background())
	require.NoError(t, err)
	require.Equal(t, want, adopted, "%s adopts epoch %d held by %q", h.Name(), w.Epoch, w.Holder)
	return w
}

func entry(s string) world.Entry { return world.Entry{Kind: "op", Payload: []byte(`"` + s + `"`)} }

// TestHolderLifecycle: adopt an epoch handed over, renew synchronously
// before the first append, append, hand off, and be handed the lease back.
func TestHolderLifecycle(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		b := setupHolders(t, d)
		a, _ := b.holder(t, "A")
		bh, _ := b.holder(t, "B")
		readAdopts(t, a, false) // first looks: epoch 1 is home's
		readAdopts(t, bh, false)

		b.handFromHome(t, "A")
		w := readAdopts(t, a, true)
		require.Equal(t, w.Epoch, a.Epoch())
		require.Equal(t, w.GrantedAt, a.GrantedAt())

		// Adopted, not renewed: no runway, the append is refused locally.
		require.Zero(t, a.Runway())
		_, err := a.Append(ctx, a.GrantedAt(), entry("early"))
		var he *world.HolderError
		require.ErrorAs(t, err, &he)
		require.Equal(t, world.RefusedNotRenewed, he.Reason)
		require.ErrorIs(t, err, lease.ErrLeaseRunway)

		require.NoError(t, a.Renew(ctx))
		require.Equal(t, holderTerm-lease.WorldDefaults().Skew, a.Runway())
		outs, err := a.Append(ctx, a.GrantedAt(), entry("a1"), entry("a2"))
		require.NoError(t, err)
		require.Len(t, outs, 2)
		for _, o := range outs {
			require.NoError(t, o.Err)
		}
		require.Equal(t, outs[0].Position+1, outs[1].Position)

		given := a.Epoch()
		hw, err := a.Handoff(ctx, "B")
		require.NoError(t, err)
		require.Equal(t, given+1, hw.Epoch)
		require.Equal(t, "B", hw.Holder)
		require.Zero(t, a.Epoch())
		_, err = a.Append(ctx, outs[1].Position, entry("after handoff"))
		require.ErrorIs(t, err, lease.ErrNotHolder)

		readAdopts(t, a, false)
		readAdopts(t, bh, true)
		require.NoError(t, bh.Renew(ctx))
		outs, err = bh.Append(ctx, bh.GrantedAt(), entry("b1"))
		require.NoError(t, err)
		require.NoError(t, outs[0].Err)
		_, err = bh.Handoff(ctx, "A")
		require.NoError(t, err)

		// A newer epoch than the one A gave away is A's again.
		readAdopts(t, a, true)
		require.Equal(t, given+2, a.Epoch())
		require.NoError(t, a.Renew(ctx))
		_, err = a.Append(ctx, a.GrantedAt(), entry("a3"))
		require.NoError(t, err)
	})
}

// TestHolderNeverReadoptsAGivenEpoch: a handoff whose answer was lost may
// have landed or not; either way the holder never acts under that epoch
// again, even while the head still names it (the handoff may be in flight).
func TestHolderNeverReadoptsAGivenEpoch(t *testing.T) {
	t.Parallel()
	for _, landed := range []bool{false, true} {
		name := map[bool]string{false: "lost on the way", true: "landed, answer lost"}[landed]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			forEachDriver(t, func(t *testing.T, d driver.Driver) {
				ctx := context.Background()
				b := setupHolders(t, d)
				a, spy := b.holder(t, "A")
				readAdopts(t, a, false)
				b.handFromHome(t, "A")
				readAdopts(t, a, true)
				require.NoError(t, a.Renew(ctx))
				e := a.Epoch()

				spy.loseChange, spy.landed = true, landed
				_, err := a.Handoff(ctx, "B")
				require.ErrorIs(t, err, errLost)
				require.Zero(t, a.Epoch(), "dropped whatever the outcome")

				w := readAdopts(t, a, false)
				if !landed {
					require.Equal(t, e, w.Epoch, "the head still names A under the given epoch")
					require.Equal(t, "A", w.Holder)
				}
				calls := spy.calls
				_, err = a.Append(ctx, w.Position, entry("zombie"))
				require.ErrorIs(t, err, lease.ErrNotHolder)
				require.Equal(t, calls, spy.calls, "refused locally: nothing sent")
			})
		})
	}
}

// TestHolderRestartDoesNotTakeOverItsEpoch is the ABA case: a holder
// restarted under the same name finds the head naming it, but the epoch was
// its dead predecessor's; it waits for the next grant.
func TestHolderRestartDoesNotTakeOverItsEpoch(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		b := setupHolders(t, d)
		first, _ := b.holder(t, "A")
		readAdopts(t, first, false)
		b.handFromHome(t, "A")
		readAdopts(t, first, true)
		require.NoError(t, first.Renew(ctx))

		restarted, _ := b.holder(t, "A") // the same name, a new generation
		w := readAdopts(t, restarted, false)
		require.Equal(t, "A", w.Holder)
		require.Zero(t, restarted.Epoch())
		_, err := restarted.Append(ctx, w.Position, entry("aba"))
		require.ErrorIs(t, err, lease.ErrNotHolder)
		require.ErrorIs(t, restarted.Renew(ctx), lease.ErrNotHolder)

		// An operator revokes and grants A a new epoch: that one is the
		// new generation's.
		b.change(t, "revoke", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanRevoke(s, now, s.Epoch, "operator")
		})
		b.change(t, "grant", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanGrant(s, now, "A", s.Epoch, holderTerm)
		})
		readAdopts(t, restarted, true)
		require.NoError(t, restarted.Renew(ctx))
		_, err = restarted.Append(ctx, restarted.GrantedAt(), entry("new generation"))
		require.NoError(t, err)
	})
}

// TestHolderDropsTheEpochOnAFencedRefusal: the lease was revoked while the
// holder still believed in it; the store refuses the append (journaling it)
// and the holder drops the epoch, so it sends nothing more under it.
func TestHolderDropsTheEpochOnAFencedRefusal(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		b := setupHolders(t, d)
		a, spy := b.holder(t, "A")
		readAdopts(t, a, false)
		b.handFromHome(t, "A")
		readAdopts(t, a, true)
		require.NoError(t, a.Renew(ctx))
		b.change(t, "revoke", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanRevoke(s, now, s.Epoch, "operator")
		})

		outs, err := a.Append(ctx, a.GrantedAt(), entry("late"))
		require.NoError(t, err)
		require.ErrorIs(t, outs[0].Err, lease.ErrFenced)
		require.Zero(t, a.Epoch())
		calls := spy.calls
		_, err = a.Append(ctx, a.GrantedAt(), entry("later"))
		require.ErrorIs(t, err, lease.ErrNotHolder)
		require.Equal(t, calls, spy.calls)
		require.ErrorIs(t, a.Renew(ctx), lease.ErrNotHolder)
	})
}

// TestHolderRenewRefusedDropsTheEpoch: a renewal the store refuses (the
// epoch was handed away behind the holder's back by an operator revoke and
// grant) drops the epoch.
func TestHolderRenewRefusedDropsTheEpoch(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		b := setupHolders(t, d)
		a, _ := b.holder(t, "A")
		readAdopts(t, a, false)
		b.handFromHome(t, "A")
		readAdopts(t, a, true)
		require.NoError(t, a.Renew(ctx))
		b.change(t, "revoke", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanRevoke(s, now, s.Epoch, "operator")
		})
		err := a.Renew(ctx)
		require.ErrorIs(t, err, lease.ErrFenced)
		var re *journal.RefusedError
		require.ErrorAs(t, err, &re)
		require.Zero(t, a.Epoch())
		require.Zero(t, a.Runway())
	})
}

// TestHolderRunwayCountsFromTheSend: a renewal whose round trip took 3s
// leaves 3s less runway than the term allows (the store set the expiry
// somewhere in those 3s), and once the runway is used up on the holder's
// clock the holder stops sending appends, although the store would still
// take them.
func TestHolderRunwayCountsFromTheSend(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		b := setupHolders(t, d)
		a, spy := b.holder(t, "A")
		readAdopts(t, a, false)
		b.handFromHome(t, "A")
		readAdopts(t, a, true)
		skew := lease.WorldDefaults().Skew

		spy.during = func() { b.clock.Advance(3 * time.Second) }
		require.NoError(t, a.Renew(ctx))
		spy.during = nil
		require.Equal(t, holderTerm-skew-3*time.Second, a.Runway())

		b.clock.Advance(holderTerm - skew - 3*time.Second)
		require.Zero(t, a.Runway())
		calls := spy.calls
		_, err := a.Append(ctx, a.GrantedAt(), entry("no runway"))
		var he *world.HolderError
		require.ErrorAs(t, err, &he)
		require.Equal(t, world.RefusedNoRunway, he.Reason)
		require.ErrorIs(t, err, lease.ErrLeaseRunway)
		require.Equal(t, calls, spy.calls, "refused locally: nothing sent")

		// A confirmed renewal restores it.
		require.NoError(t, a.Renew(ctx))
		require.Equal(t, holderTerm-skew, a.Runway())
		_, err = a.Append(ctx, a.GrantedAt()-1, entry("behind"))
		require.ErrorIs(t, err, lease.ErrSeenBehind)
		_, err = a.Append(ctx, a.GrantedAt(), entry("ok"))
		require.NoError(t, err)
	})
}

// TestNewHolderValidates: a holder needs a store, a world and a name.
func TestNewHolderValidates(t *testing.T) {
	t.Parallel()
	_, err := world.NewHolder(world.HolderConfig{World: "w", Name: "A"})
	require.ErrorIs(t, err, lease.ErrInvalid)
	_, err = world.NewHolder(world.HolderConfig{Store: &spyStore{}, World: "", Name: "A"})
	require.ErrorIs(t, err, lease.ErrInvalid)
	_, err = world.NewHolder(world.HolderConfig{Store: &spyStore{}, World: "w", Name: ""})
	require.ErrorIs(t, err, lease.ErrInvalid)
	_, err = world.NewHolder(world.HolderConfig{Store: &spyStore{}, World: "w", Name: "A", Timing: lease.Timing{Lease: time.Second}})
	require.ErrorIs(t, err, lease.ErrInvalidTiming)
}
