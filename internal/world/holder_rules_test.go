package world

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestMayAdopt(t *testing.T) {
	t.Parallel()
	looked := holderState{looked: true, startEpoch: 3, given: 5}
	for _, c := range []struct {
		name string
		s    holderState
		head journal.State
		want bool
	}{
		{"an epoch handed to me after I looked", looked, journal.State{Epoch: 6, Holder: "A"}, true},
		{"someone else's epoch", looked, journal.State{Epoch: 6, Holder: "B"}, false},
		{"the epoch current when I first looked (a dead generation's?)", holderState{looked: true, startEpoch: 3}, journal.State{Epoch: 3, Holder: "A"}, false},
		{"an epoch before my first look", holderState{looked: true, startEpoch: 3}, journal.State{Epoch: 2, Holder: "A"}, false},
		{"an epoch I handed off (its handoff may be in flight)", looked, journal.State{Epoch: 5, Holder: "A"}, false},
		{"an epoch below one I handed off", looked, journal.State{Epoch: 4, Holder: "A"}, false},
		{"while holding one already", holderState{looked: true, startEpoch: 3, epoch: 6}, journal.State{Epoch: 7, Holder: "A"}, false},
		{"no holder (revoked)", looked, journal.State{Epoch: 6}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, mayAdopt(c.s, "A", c.head))
		})
	}
}

func TestObserve(t *testing.T) {
	t.Parallel()
	t.Run("the first look fixes the start epoch and adopts nothing current", func(t *testing.T) {
		s, adopted := observe(holderState{}, "A", journal.State{Epoch: 4, Holder: "A", GrantedAt: 9})
		require.False(t, adopted)
		require.Equal(t, holderState{looked: true, startEpoch: 4}, s)
	})
	t.Run("a later epoch for me is adopted, without runway", func(t *testing.T) {
		s, adopted := observe(holderState{looked: true, startEpoch: 4}, "A", journal.State{Epoch: 5, Holder: "A", GrantedAt: 12})
		require.True(t, adopted)
		require.Equal(t, int64(5), s.epoch)
		require.Equal(t, int64(12), s.grantedAt)
		require.False(t, s.renewed)
		require.Zero(t, runway(s, t0, lease.WorldDefaults()))
	})
	t.Run("a held epoch the head no longer shows is dropped", func(t *testing.T) {
		held := holderState{looked: true, startEpoch: 1, epoch: 5, grantedAt: 12, renewed: true, sent: t0}
		for _, head := range []journal.State{{Epoch: 6, Holder: "B"}, {Epoch: 5, Holder: ""}, {Epoch: 5, Holder: "B"}} {
			s, adopted := observe(held, "A", head)
			require.False(t, adopted, "%v", head)
			require.Zero(t, s.epoch, "%v", head)
			require.False(t, s.renewed, "%v", head)
		}
	})
	t.Run("a newer epoch for me replaces the one the head no longer shows", func(t *testing.T) {
		held := holderState{looked: true, startEpoch: 1, epoch: 5, grantedAt: 12, renewed: true, sent: t0}
		s, adopted := observe(held, "A", journal.State{Epoch: 7, Holder: "A", GrantedAt: 20})
		require.True(t, adopted, "the sweep granted home (me) the next epoch")
		require.Equal(t, int64(7), s.epoch)
		require.False(t, s.renewed, "the new epoch needs its own renewal")
	})
	t.Run("the same head keeps the held epoch and its runway", func(t *testing.T) {
		held := holderState{looked: true, startEpoch: 1, epoch: 5, grantedAt: 12, renewed: true, sent: t0}
		s, adopted := observe(held, "A", journal.State{Epoch: 5, Holder: "A", GrantedAt: 12, Position: 40})
		require.False(t, adopted)
		require.Equal(t, held, s)
	})
}

func TestRunway(t *testing.T) {
	t.Parallel()
	tm := lease.WorldDefaults() // T_lease 30s, S 5s
	held := holderState{epoch: 2, renewed: true, sent: t0}
	require.Equal(t, 25*time.Second, runway(held, t0, tm), "(t_send + T_lease) - now - S")
	require.Equal(t, 15*time.Second, runway(held, t0.Add(10*time.Second), tm))
	require.Zero(t, runway(held, t0.Add(25*time.Second), tm), "used up at T_lease - S")
	require.Zero(t, runway(held, t0.Add(time.Hour), tm), "saturates at zero")
	notRenewed := held
	notRenewed.renewed = false
	require.Zero(t, runway(notRenewed, t0, tm), "zero until a renewal under the epoch is confirmed")
	require.Zero(t, runway(dropEpoch(held), t0, tm), "zero without an epoch")
}

func TestAppendRefusal(t *testing.T) {
	t.Parallel()
	tm := lease.WorldDefaults()
	held := holderState{epoch: 2, grantedAt: 7, renewed: true, sent: t0}
	for _, c := range []struct {
		name string
		s    holderState
		now  time.Time
		seen int64
		want Refusal
	}{
		{"held, renewed, runway, mirror through the grant", held, t0.Add(time.Second), 7, ""},
		{"mirror past the grant", held, t0.Add(time.Second), 30, ""},
		{"no epoch", holderState{}, t0, 7, RefusedNoEpoch},
		{"adopted, not yet renewed", holderState{epoch: 2, grantedAt: 7}, t0, 7, RefusedNotRenewed},
		{"runway used up", held, t0.Add(25 * time.Second), 7, RefusedNoRunway},
		{"mirror behind the grant", held, t0.Add(time.Second), 6, RefusedSeenBehind},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, appendRefusal(c.s, c.now, tm, c.seen))
		})
	}
}

func TestDropsEpoch(t *testing.T) {
	t.Parallel()
	refused := func(r journal.Reason) error {
		return fmt.Errorf("wrapped: %w", &journal.RefusedError{Op: "append", Reason: r})
	}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{refused(journal.ReasonStaleEpoch), true},
		{refused(journal.ReasonRevoked), true},
		{refused(journal.ReasonNotHolder), true},
		{refused(journal.ReasonExpired), true},
		{refused(journal.ReasonSeenBehind), false},
		{lease.ErrInvalid, false},
		{errors.New("connection reset"), false},
	} {
		require.Equal(t, c.want, dropsEpoch(c.err), "%v", c.err)
	}
}

func TestRefusalSentinels(t *testing.T) {
	t.Parallel()
	for r, want := range map[Refusal]error{RefusedNoEpoch: lease.ErrNotHolder, RefusedNotRenewed: lease.ErrLeaseRunway,
		RefusedNoRunway: lease.ErrLeaseRunway, RefusedSeenBehind: lease.ErrSeenBehind} {
		err := fmt.Errorf("x: %w", &HolderError{Op: "append", Reason: r})
		require.ErrorIs(t, err, want, "%s", r)
	}
}
