package drivertest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

var leaseCases = []Case{
	{"RenewExtendsExpiryOnStoreClock", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w1", "home")
		e.h.Clock.Advance(10 * time.Second)
		w, err := e.change("w1", "renew", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanRenew(s, now, "home", 1, term)
		})
		require.NoError(t, err)
		require.Equal(t, StartTime.Add(10*time.Second+term), w.ExpiresAt)
		require.Equal(t, w.ExpiresAt, e.get("w1").ExpiresAt)
		e.audit("w1")
	}},
	{"RenewRefusedForOthersAndExpired", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w1", "home")
		_, err := e.change("w1", "renew", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanRenew(s, now, "other", 1, term)
		})
		require.ErrorIs(t, err, driver.ErrNotHolder)
		e.h.Clock.Advance(term)
		_, err = e.change("w1", "renew", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanRenew(s, now, "home", 1, term)
		})
		require.ErrorIs(t, err, driver.ErrLeaseExpired, "an expired lease is never revived")
		require.Len(t, e.read("w1"), 1)
		e.audit("w1")
	}},
	{"RevokeEndsEpochThenGrant", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w1", "home")
		_, err := e.change("w1", "grant", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanGrant(s, now, "a", 1, term)
		})
		require.ErrorIs(t, err, driver.ErrLeaseHeld)
		_, err = e.change("w1", "revoke", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanRevoke(s, now, 0, "ops")
		})
		require.ErrorIs(t, err, driver.ErrFenced)
		w, err := e.change("w1", "revoke", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanRevoke(s, now, 1, "ops")
		})
		require.NoError(t, err)
		require.False(t, w.Held())
		_, err = e.append1("w1", "home", 1, 1, "x", "{}")
		require.ErrorIs(t, err, driver.ErrFenced, "a revoked epoch accepts nothing")
		w, err = e.change("w1", "grant", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanGrant(s, now, "a", 1, term)
		})
		require.NoError(t, err)
		require.Equal(t, int64(2), w.Epoch)
		require.Equal(t, int64(4), w.GrantedAt)
		_, err = e.append1("w1", "a", 2, 4, "x", "{}")
		require.NoError(t, err)
		e.audit("w1")
	}},
	{"HandoffBothWays", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w1", "home")
		w := e.handoff("w1", "home", "node", 1)
		require.Equal(t, int64(2), w.Epoch)
		require.Equal(t, "node", w.Holder)
		_, err := e.append1("w1", "node", 2, 2, "x", "{}")
		require.NoError(t, err)
		w = e.handoff("w1", "node", "home", 2)
		require.Equal(t, int64(3), w.Epoch)
		_, err = e.append1("w1", "node", 2, 3, "x", "{}")
		require.ErrorIs(t, err, driver.ErrFenced, "the node is fenced after handing back")
		_, err = e.append1("w1", "home", 3, 4, "x", "{}")
		require.NoError(t, err)
		rep := e.audit("w1")
		require.Equal(t, []journal.Span{{Epoch: 1, Holder: "home", From: 1, To: 1}, {Epoch: 2, Holder: "node", From: 2, To: 3}, {Epoch: 3, Holder: "home", From: 4, To: 6}}, rep.Spans)
	}},
	{"HandoffRefusedWhenExpiredOrNotHolder", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w1", "home")
		_, err := e.change("w1", "handoff", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanHandoff(s, now, "node", "x", 1, term)
		})
		require.ErrorIs(t, err, driver.ErrNotHolder)
		e.h.Clock.Advance(term + time.Second)
		_, err = e.change("w1", "handoff", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanHandoff(s, now, "home", "node", 1, term)
		})
		require.ErrorIs(t, err, driver.ErrLeaseExpired)
		require.Len(t, e.read("w1"), 1)
	}},
	{"StoreRefusesWhatTheConditionalWriteDoesNotAllow", func(t *testing.T, f Factory) {
		// A planner that lies about the head stands for a bug in the Go
		// rules: the store's conditional write must still refuse it.
		e := newEnv(t, f)
		e.create("w1", "home")
		e.handoff("w1", "home", "a", 1) // epoch 2, held by a, granted at position 2
		// "expired lease" moves the clock past expiry, so it goes last.
		lies := []struct {
			name string
			lie  func(s journal.State) journal.State
		}{
			// The planner's head one entry behind the store's (its grant
			// too, or the append rule itself would refuse the request as
			// seen past that head) and one entry ahead of it.
			{"stale position", func(s journal.State) journal.State {
				s.Position--
				s.GrantedAt = min(s.GrantedAt, s.Position)
				return s
			}},
			{"position ahead", func(s journal.State) journal.State {
				s.Position++
				return s
			}},
			{"stale epoch", func(s journal.State) journal.State {
				s.Epoch, s.Holder = 1, "home"
				return s
			}},
			{"wrong holder", func(s journal.State) journal.State {
				s.Holder = "intruder"
				return s
			}},
			{"seen below grant", func(s journal.State) journal.State {
				s.GrantedAt = 1
				return s
			}},
			{"expired lease", func(s journal.State) journal.State {
				s.ExpiresAt = s.ExpiresAt.Add(time.Hour)
				return s
			}},
		}
		for _, l := range lies {
			name, lie := l.name, l.lie
			before := e.read("w1")
			if name == "expired lease" {
				e.h.Clock.Advance(term + time.Second)
			}
			_, err := e.change("w1", "append", func(s journal.State, now time.Time) (journal.Plan, error) {
				fake := lie(s)
				p, out := journal.PlanAppend(fake, now, []journal.AppendRequest{{Holder: fake.Holder, Epoch: fake.Epoch, SeenPosition: fake.GrantedAt, Kind: "x"}},
					func(string) bool { return false })
				require.NoError(t, out[0].Err, name)
				return p, nil
			})
			require.ErrorIs(t, err, driver.ErrFenced, name)
			require.Equal(t, before, e.read("w1"), "%s: nothing written", name)
		}
		e.audit("w1")
	}},
}
