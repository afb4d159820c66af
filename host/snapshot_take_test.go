package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// handoffOnRead is a real store that hands the world from home-1 to n2
// when the fold first reads the journal: a grant landing while
// TakeSnapshot folds, at a fixed point instead of a lucky one.
type handoffOnRead struct {
	driver.Driver
	once sync.Once
	err  error
}

func (s *handoffOnRead) JournalRead(ctx context.Context, p *driver.JournalReadParams) ([]journal.Entry, error) {
	s.once.Do(func() {
		_, s.err = s.LeaseChange(ctx, &driver.LeaseChangeParams{World: p.World, Op: "handoff",
			Plan: func(w *driver.World, now time.Time) (journal.Plan, error) {
				return journal.PlanHandoff(w.State, now, "home-1", "n2", w.Epoch, 30*time.Second)
			}})
	})
	return s.Driver.JournalRead(ctx, p)
}

// TestTakeSnapshotFencedByAGrantMidFold: on both stores, an operator's
// snapshot whose fold a handoff overtakes is refused with the lease
// refusal (its epoch is no longer the world's) and writes nothing; taken
// again, it goes in under the new epoch and a host restores it.
func TestTakeSnapshotFencedByAGrantMidFold(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		h := newHost(t, d, "home-1", programs.Bank{}, func(c *host.Config) { c.SnapshotEvery = -1 })
		require.NoError(t, h.Create(ctx, "acct"))
		for i := range 3 {
			_, err := h.Submit(ctx, "acct", host.Command{Key: fmt.Sprintf("k%d", i), Payload: json.RawMessage(`{"op":"deposit","account":"a","amount":1}`)})
			require.NoError(t, err)
		}
		require.NoError(t, h.Stop(ctx))

		racing := &handoffOnRead{Driver: d}
		_, wrote, err := host.TakeSnapshot(ctx, racing, programs.Bank{}, "acct")
		require.False(t, wrote)
		require.NoError(t, racing.err)
		require.ErrorIs(t, err, lease.ErrFenced)
		var re *journal.RefusedError
		require.ErrorAs(t, err, &re)
		require.Equal(t, "snapshot", re.Op)
		require.Equal(t, int64(2), re.CurrentEpoch)
		_, err = d.WorldSnapshotGet(ctx, &driver.WorldSnapshotGetParams{World: "acct"})
		require.ErrorIs(t, err, lease.ErrNotFound, "the fenced put wrote nothing")

		pos, wrote, err := host.TakeSnapshot(ctx, d, programs.Bank{}, "acct")
		require.NoError(t, err)
		require.True(t, wrote)
		w, err := d.WorldGet(ctx, &driver.WorldGetParams{World: "acct"})
		require.NoError(t, err)
		require.Equal(t, w.Position, pos, "through the head, the handoff included")
		n2 := newHost(t, d, "n2", programs.Bank{}, func(c *host.Config) { c.SnapshotEvery = -1 })
		require.NoError(t, n2.Prepare(ctx, "acct"))
		require.Equal(t, int64(1), n2.Stats().SnapshotsRestored)
		again, wrote, err := host.TakeSnapshot(ctx, d, programs.Bank{}, "acct")
		require.NoError(t, err)
		require.False(t, wrote, "the stored snapshot is at the head")
		require.Equal(t, pos, again)
	})
}
