package drivertest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// Key rotation is one way (issue 11, `leasehold host rotate-key`): once a
// node has registered a new key, the epoch granted to it next carries the
// new key and refuses batches signed with the old one, the journal still
// audits whole (each epoch under the key its grant carries), and the old
// key is never registered again.

func init() {
	worldCases = append(worldCases, retiredKeyCases...)
}

var retiredKeyCases = []Case{
	{"KeyRotationRetiresTheOldKey", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		a, privA := seeded(1)
		b, privB := seeded(2)
		e.register("n1", a)
		e.create("w", "n1")
		e.appendBatch("w", signed("w", "n1", 1, 1, 2, privA, "a1", "a2"))
		require.Equal(t, int64(2), e.register("n1", b).Version)

		// The rotation reaches the world at its next grant: revoke, grant.
		_, err := e.change("w", "revoke", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanRevoke(s, now, 1, "rotation")
		})
		require.NoError(t, err)
		w, err := e.change("w", "grant", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanGrant(s, now, "n1", 1, term)
		})
		require.NoError(t, err)
		require.Equal(t, int64(2), w.Epoch)
		require.Equal(t, []byte(b), w.HolderKey, "the grant after the rotation carries the new key")

		// The retired key signs nothing under the new epoch.
		requireRefused(t, e.appendBatch("w", signed("w", "n1", 2, w.Position, w.Position+1, privA, "old")), journal.ReasonBadSignature, lease.ErrBadSignature)
		head := e.get("w").Position
		out := e.appendBatch("w", signed("w", "n1", 2, head, head+1, privB, "b1"))
		require.NoError(t, out[0].Err)
		rep := e.audit("w")
		require.True(t, rep.OK(), "each epoch verifies under its grant's key: %v", rep.Violation)
		require.Equal(t, []byte(b), rep.Final.HolderKey)

		// The old key is never current again; the current one re-registers
		// as itself.
		before, err := e.fingerprint()
		require.NoError(t, err)
		_, err = e.d.NodeKeyRegister(e.ctx, &driver.NodeKeyRegisterParams{Node: "n1", PublicKey: a})
		require.ErrorIs(t, err, lease.ErrConflict)
		var re *driver.KeyRetiredError
		require.ErrorAs(t, err, &re)
		require.Equal(t, driver.KeyRetiredError{Node: "n1", Version: 1, Current: 2}, *re)
		require.Equal(t, int64(2), e.register("n1", b).Version)
		after, err := e.fingerprint()
		require.NoError(t, err)
		require.Equal(t, before, after, "a refused registration writes nothing")
		k, err := e.d.NodeKeyGet(e.ctx, &driver.NodeKeyGetParams{Node: "n1"})
		require.NoError(t, err)
		require.Equal(t, []byte(b), k.PublicKey)
		// Another node may register the key n1 retired: keys are per node.
		require.Equal(t, int64(1), e.register("n2", a).Version)
	}},
}
