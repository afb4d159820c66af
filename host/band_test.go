package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
	"github.com/leasehold/leasehold/journal"
)

// TestTheBandSpillsAHotWorldAndBringsItHome: a world loaded past the
// band's threshold for its sustain time spills from its home to the spill
// node; once the load stops and stays below the exit threshold for the
// clear time it is handed back. Each transition is journaled by the
// holder (host.band, with its reason and load) right before the handoff
// it triggers, and no command is lost or applied twice.
func TestTheBandSpillsAHotWorldAndBringsItHome(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		r := host.NewRouter(d)
		band := &host.Band{TurnsPerSecond: 50, Sustain: 300 * time.Millisecond, Clear: 600 * time.Millisecond,
			Window: 100 * time.Millisecond, Spill: []string{"spill-1"}, Mover: r}
		withBand := func(c *host.Config) { c.Band = band }
		home := newHost(t, d, "home-1", programs.Bank{}, withBand)
		spill := newHost(t, d, "spill-1", programs.Bank{}, withBand)
		r.Add(home)
		r.Add(spill)
		require.NoError(t, home.Create(ctx, "hot"))

		holder := func() string {
			w, err := d.WorldGet(ctx, &driver.WorldGetParams{World: "hot"})
			require.NoError(t, err)
			return w.State.Holder
		}
		var stop atomic.Bool
		var wg sync.WaitGroup
		var n atomic.Int64
		for s := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; !stop.Load(); k++ {
					_, err := r.Submit(ctx, "hot", deposit(fmt.Sprintf("s%d", s), k+1))
					if err != nil {
						t.Error(err)
						return
					}
					n.Add(1)
				}
			}()
		}
		waitFor(t, func() bool { return holder() == "spill-1" }, "the hot world spilled")
		stop.Store(true)
		wg.Wait()
		waitFor(t, func() bool { return holder() == "home-1" }, "the cooled world came home")

		es := journalOf(t, d, "hot")
		auditOK(t, es)
		var moves []string
		for i, e := range es {
			if e.Kind != host.BandKind {
				continue
			}
			var mv struct {
				State, To, Reason string
				Load              struct {
					TurnsPerSecond float64 `json:"turns_per_second"`
				}
			}
			require.NoError(t, json.Unmarshal(e.Payload, &mv))
			require.NotEmpty(t, mv.Reason)
			next := es[i+1]
			require.Equal(t, journal.KindHandedOff, next.Kind, "the band entry is the holder's last before its handoff")
			require.Equal(t, mv.To, next.Holder)
			moves = append(moves, fmt.Sprintf("%s→%s by %s (%s)", mv.State, mv.To, e.Holder, mv.Reason))
		}
		require.Len(t, moves, 2, "one spill, one handback: %v", moves)
		require.Equal(t, int64(1), home.Stats().Spills)
		require.Equal(t, int64(1), spill.Stats().Handbacks)
		keys := turnKeys(es)
		require.Len(t, keys, int(n.Load()))
		for k, c := range keys {
			require.Equal(t, 1, c, k)
		}
		t.Logf("%d commands; band transitions: %v", n.Load(), moves)
	})
}

// waitFor waits until cond (a store read) holds, bounded: the one polling
// helper the project uses elsewhere (require.Eventually).
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	require.Eventually(t, cond, 30*time.Second, 20*time.Millisecond, "timed out waiting: %s", what)
}
