package scale

import (
	"context"
	"fmt"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// tally is what the end-of-test check counted.
type tally struct {
	runs, effects, events, appends, uncertain, witnessCalls int
}

func (t tally) String() string {
	return fmt.Sprintf("%d runs completed, %d effects committed and accepted downstream (%d witness calls, %d uncertain reports), "+
		"%d acknowledged events present, %d acknowledged journal appends present once", t.runs, t.effects, t.witnessCalls,
		t.uncertain, t.events, t.appends)
}

// awaitFinal waits until every run is final.
func (f *fleet) awaitFinal() {
	f.t.Helper()
	var final int
	require.Eventually(f.t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var err error
		_, final, err = f.progress(ctx)
		return err == nil && final == len(f.ids)
	}, 2*patience, 50*time.Millisecond, "runs not final: %d of %d", final, len(f.ids))
}

// awaitCompleted waits until at least n runs are completed.
func (f *fleet) awaitCompleted(n int) {
	f.t.Helper()
	var completed int
	require.Eventually(f.t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var err error
		completed, _, err = f.progress(ctx)
		return err == nil && completed >= n
	}, patience, 20*time.Millisecond, "fewer than %d runs completed (%d)", n, completed)
}

// check is the end of every test, from the store and the witness alone:
// every run completed with its effects committed and accepted downstream;
// no effect key accepted twice without an uncertain report; every
// acknowledged event present with its payload; every acknowledged append
// journaled once, at the position acknowledged, and no key twice.
func (f *fleet) check() tally {
	t := f.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	f.mu.Lock()
	defer f.mu.Unlock()
	var n tally
	stored := map[[3]int64]string{}
	for _, id := range f.ids {
		r, err := f.store.RunGet(ctx, &driver.RunGetParams{ID: id})
		require.NoError(t, err)
		require.Equal(t, runs.StateCompleted, r.State, "run %d: %s", id, r.Reason)
		n.runs++
		es, err := f.store.RunEffectList(ctx, &driver.RunEffectListParams{RunID: id})
		require.NoError(t, err)
		committed := map[string]bool{}
		for _, e := range es {
			committed[e.Key] = e.Committed
		}
		for i := range f.cfg.Effects {
			key := fmt.Sprintf("e%d", i)
			require.True(t, committed[key], "run %d completed without effect %s committed", id, key)
			require.True(t, f.wit.Has(fmt.Sprintf("%d:%s", id, key)), "run %d: effect %s never accepted downstream", id, key)
			n.effects++
		}
		evs, err := f.store.RunEventList(ctx, &driver.RunEventListParams{RunID: id, Limit: 1000})
		require.NoError(t, err)
		for _, ev := range evs {
			stored[[3]int64{id, ev.Fence, ev.Seq}] = string(ev.Payload)
		}
	}
	for key, calls := range f.wit.Accepted() {
		n.witnessCalls += calls
		require.LessOrEqual(t, calls, 1+f.uncertain[key], "effect %s accepted %d times after %d uncertain reports", key, calls, f.uncertain[key])
	}
	for _, u := range f.uncertain {
		n.uncertain += u
	}
	for _, e := range f.events {
		got, ok := stored[[3]int64{e.Run, e.Fence, e.Seq}]
		require.True(t, ok, "acknowledged event %d/%d/%d missing", e.Run, e.Fence, e.Seq)
		require.JSONEq(t, e.Payload, got)
		n.events++
	}
	journaled := map[string]map[string]int64{} // world → key → position
	for _, a := range f.appends {
		if journaled[a.World] == nil {
			journaled[a.World] = f.journal(ctx, a.World)
		}
		pos, ok := journaled[a.World][a.Key]
		require.True(t, ok, "acknowledged append %s to %s missing", a.Key, a.World)
		require.Equal(t, a.Pos, pos, "append %s acknowledged at %d, journaled at %d", a.Key, a.Pos, pos)
		n.appends++
	}
	return n
}

// journal reads a world's journal: key → position, failing on a key
// journaled twice.
func (f *fleet) journal(ctx context.Context, world string) map[string]int64 {
	keys := map[string]int64{}
	for from := int64(1); ; {
		es, err := f.store.JournalRead(ctx, &driver.JournalReadParams{World: world, From: from, Limit: 1000})
		require.NoError(f.t, err)
		for _, e := range es {
			if e.Key == "" {
				continue
			}
			_, dup := keys[e.Key]
			require.False(f.t, dup, "key %s journaled twice in %s", e.Key, world)
			keys[e.Key] = e.Position
		}
		if len(es) < 1000 {
			return keys
		}
		from = es[len(es)-1].Position + 1
	}
}
