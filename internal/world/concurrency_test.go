package world_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/world"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// TestConcurrentAppendsAcrossHandoffs: 16 goroutines append to one world
// while the lease is handed back and forth between two holders. Each
// appender writes for one holder, under the epoch that holder last learned.
// Afterwards the audit must prove that no position was written under a
// non-current epoch, and every acknowledged append must be in the journal,
// once, at the position it was acknowledged with.
func TestConcurrentAppendsAcrossHandoffs(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		const term = 30 * time.Second
		_, err := d.WorldCreate(ctx, &driver.WorldCreateParams{World: "w", Home: "A", Term: term})
		require.NoError(t, err)
		app := world.NewAppender(d, world.AppenderConfig{})

		// known[h] is what holder h believes: the epoch it was granted and
		// the position of that grant (its mirror is current through it).
		// changed is closed when the holder learns a newer view, so a refused
		// appender waits for news instead of spinning.
		type view struct {
			epoch, grantedAt int64
			changed          chan struct{}
		}
		var known [2]atomic.Pointer[view]
		known[0].Store(&view{1, 1, make(chan struct{})})
		known[1].Store(&view{0, 0, make(chan struct{})})
		progress := make(chan struct{}, 64)
		names := [2]string{"A", "B"}

		stop := make(chan struct{})
		var acked sync.Map // payload id -> position
		var nAcked, nRefused atomic.Int64
		var wg sync.WaitGroup
		for g := range 16 {
			h := g % 2
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					v := known[h].Load()
					if v.epoch == 0 { // B has not been granted yet
						select {
						case <-v.changed:
						case <-stop:
						}
						continue
					}
					id := fmt.Sprintf("g%d-%d", g, i)
					pos, err := app.Append(ctx, "w", journal.AppendRequest{Holder: names[h], Epoch: v.epoch,
						SeenPosition: v.grantedAt, Kind: "op", Payload: []byte(`"` + id + `"`)})
					switch {
					case err == nil:
						acked.Store(id, pos)
						nAcked.Add(1)
						select {
						case progress <- struct{}{}:
						default:
						}
					case errors.Is(err, lease.ErrFenced), errors.Is(err, lease.ErrNotHolder):
						nRefused.Add(1)
						select { // fenced: wait until this holder is granted again
						case <-v.changed:
						case <-stop:
						}
					default:
						t.Errorf("append %s: %v", id, err)
						return
					}
				}
			})
		}

		// The controller hands the lease back and forth 20 times, each time
		// after the holder has had 20 appends acknowledged in its epoch.
		handoffs := 20
		for i := range handoffs {
			for range 20 {
				<-progress
			}
			from, to := i%2, (i+1)%2
			v := known[from].Load()
			w, err := d.LeaseChange(ctx, &driver.LeaseChangeParams{World: "w", Op: "handoff",
				Plan: func(w *driver.World, now time.Time) (journal.Plan, error) {
					return journal.PlanHandoff(w.State, now, names[from], names[to], v.epoch, term)
				}})
			require.NoError(t, err)
			old := known[to].Swap(&view{w.Epoch, w.GrantedAt, make(chan struct{})})
			close(old.changed)
		}
		for range 20 {
			<-progress
		}
		close(stop)
		wg.Wait()
		app.Wait()

		var entries []journal.Entry
		for from := int64(1); ; {
			es, err := d.JournalRead(ctx, &driver.JournalReadParams{World: "w", From: from, Limit: 1000})
			require.NoError(t, err)
			entries = append(entries, es...)
			if len(es) < 1000 {
				break
			}
			from = es[len(es)-1].Position + 1
		}
		rep := journal.Audit(entries)
		require.True(t, rep.OK(), "audit: %v", rep.Violation)
		head, err := d.WorldGet(ctx, &driver.WorldGetParams{World: "w"})
		require.NoError(t, err)
		require.True(t, head.State.Equal(rep.Final))

		byPos := map[int64]journal.Entry{}
		for _, e := range entries {
			byPos[e.Position] = e
		}
		missing := 0
		acked.Range(func(k, v any) bool {
			e, ok := byPos[v.(int64)]
			if !ok || string(e.Payload) != `"`+k.(string)+`"` {
				missing++
			}
			return true
		})
		require.Zero(t, missing, "acknowledged appends missing from the journal")
		data := 0
		for _, e := range entries {
			if !e.Kind.IsSystem() {
				data++
			}
		}
		require.Equal(t, int(nAcked.Load()), data, "every data entry was acknowledged exactly once")
		batches, appends := app.Stats()
		t.Logf("%s: %d acknowledged, %d refused, %d handoffs, %d spans, %d entries; %d batches carrying %d appends (mean %.1f)",
			d.Name(), nAcked.Load(), nRefused.Load(), handoffs, len(rep.Spans), len(entries), batches, appends, float64(appends)/float64(max(batches, 1)))
		require.Positive(t, nAcked.Load())
	})
}
