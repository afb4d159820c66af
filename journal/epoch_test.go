package journal

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestEpochFloorStartsTheNextEpochPastIt: a store's epoch floor (a
// Postgres server's timeline floor) makes the next grant, handoff, sweep
// grant and a world's first grant start at floor+1 when that is past the
// current epoch, epoch+1 otherwise; the plans never carry the floor, and
// the audit accepts every journal they build.
func TestEpochFloorStartsTheNextEpochPastIt(t *testing.T) {
	t.Parallel()
	const term = time.Minute
	var entries []Entry
	p, err := PlanCreateAbove("w", "home", term, t0, EpochBand)
	require.NoError(t, err)
	s := commit(t, &entries, p)
	require.Equal(t, EpochBand+1, s.Epoch, "a world created above a floor starts past it")
	require.Zero(t, p.Before.EpochFloor+p.After.EpochFloor)

	s.EpochFloor = EpochBand // below the epoch now: no jump
	p, err = PlanHandoff(s, t0.Add(time.Second), "home", "node", s.Epoch, term)
	require.NoError(t, err)
	s = commit(t, &entries, p)
	require.Equal(t, EpochBand+2, s.Epoch)

	p, err = PlanRevoke(s, t0.Add(2*time.Second), s.Epoch, "ops")
	require.NoError(t, err)
	s = commit(t, &entries, p)
	s.EpochFloor = 2 * EpochBand
	p, err = PlanGrant(s, t0.Add(3*time.Second), "a", s.Epoch, term)
	require.NoError(t, err)
	s = commit(t, &entries, p)
	require.Equal(t, 2*EpochBand+1, s.Epoch)

	s.EpochFloor = 3 * EpochBand
	p, ok := PlanSweep(s, t0.Add(3*time.Second+term), "home", term)
	require.True(t, ok)
	s = commit(t, &entries, p)
	require.Equal(t, 3*EpochBand+1, s.Epoch)
	require.Equal(t, "home", s.Holder)

	s.EpochFloor = 4*EpochBand + 5 // not a band's start: no store names it
	p, err = PlanHandoff(s, t0.Add(4*time.Second+term), "home", "b", s.Epoch, term)
	require.NoError(t, err)
	s = commit(t, &entries, p)
	require.Equal(t, 3*EpochBand+2, s.Epoch, "a floor off the band is ignored")
}

// TestFoldAcceptsOnlyEpochPlusOneOrABandStart: the audit refuses a grant
// or handoff to any epoch but current+1 or the first of a later band.
func TestFoldAcceptsOnlyEpochPlusOneOrABandStart(t *testing.T) {
	t.Parallel()
	const term = time.Minute
	var entries []Entry
	p, err := PlanCreate("w", "home", term, t0)
	require.NoError(t, err)
	s := commit(t, &entries, p)
	p, err = PlanRevoke(s, t0.Add(time.Second), 1, "ops")
	require.NoError(t, err)
	s = commit(t, &entries, p)

	for _, c := range []struct {
		epoch func(cur int64) int64
		ok    bool
	}{
		{func(cur int64) int64 { return cur + 1 }, true},
		{func(int64) int64 { return EpochBand + 1 }, true},
		{func(int64) int64 { return 5*EpochBand + 1 }, true},
		{func(cur int64) int64 { return cur }, false},
		{func(cur int64) int64 { return cur + 2 }, false},
		{func(int64) int64 { return EpochBand }, false},
		{func(int64) int64 { return EpochBand + 2 }, false},
	} {
		for _, kind := range []Kind{KindGranted, KindHandedOff} {
			at, base := s, entries // none(1): a grant may follow
			payload := func(epoch int64) []byte {
				return mustMarshal(Granted{Holder: "b", Epoch: epoch, TermMS: termMS(term), GrantedAtPosition: at.Position + 1})
			}
			if kind == KindHandedOff { // from "a", the live holder of epoch 2
				g, err := PlanGrant(s, t0.Add(2*time.Second), "a", 1, term)
				require.NoError(t, err)
				base, at = append(append([]Entry(nil), entries...), g.Entries...), g.After
				payload = func(epoch int64) []byte {
					return mustMarshal(HandedOff{From: "a", To: "b", Epoch: epoch, TermMS: termMS(term)})
				}
			}
			epoch := c.epoch(at.Epoch)
			e := Entry{World: "w", Position: at.Position + 1, Epoch: epoch, Kind: kind, Holder: "b",
				Payload: payload(epoch), StoreTime: t0.Add(3 * time.Second), PrevHash: at.LastHash}
			Seal(&e)
			rep := Audit(append(append([]Entry(nil), base...), e))
			require.Equal(t, c.ok, rep.OK(), "%s to epoch %d after epoch %d: %v", kind, epoch, at.Epoch, rep.Violation)
			if !c.ok {
				require.Equal(t, "stale_epoch", rep.Violation.Rule)
			}
		}
	}
}
