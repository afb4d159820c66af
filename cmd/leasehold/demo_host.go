package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
)

// demoHost is the demo's second act: a world run by world hosts. Two hosts
// share the store — home-1, the world's home, and spill-1 — under a
// hot-world band with short thresholds; 8 submitters load the world until
// the band spills it to spill-1, then stop; the band brings it home once
// it is quiet; the audit proves who held every position, and every
// acknowledged command is checked against the journal.
func demoHost(ctx context.Context, out io.Writer, c *leasehold.Client, id string) error {
	d := c.Driver()
	quiet := slog.New(slog.DiscardHandler)
	r := host.NewRouter(d)
	// The entry threshold is far below what one world sustains here (tens
	// of thousands of turns/s; a few hundred under -race with the whole
	// test suite loading both cores), so the band spills whatever the
	// machine's speed; the demo is about the move, not the rate.
	band := &host.Band{TurnsPerSecond: 25, Sustain: time.Second, Clear: 2 * time.Second,
		Window: 250 * time.Millisecond, Spill: []string{"spill-1"}, Mover: r}
	mk := func(node string) (*host.Host, error) {
		return host.New(host.Config{Store: d, Node: node, Program: programs.Bank{}, Band: band, Logger: quiet})
	}
	home, err := mk("home-1")
	if err != nil {
		return err
	}
	spill, err := mk("spill-1")
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = home.Stop(sctx)
		_ = spill.Stop(sctx)
	}()
	r.Add(home)
	r.Add(spill)
	if err := home.Create(ctx, id); err != nil {
		return err
	}
	fmt.Fprintf(out, "8. world %s created on host home-1, running the bank program; band: spill above %.0f turns/s for %s, home after %s below half of it\n",
		id, band.TurnsPerSecond, band.Sustain, band.Clear)

	holder := func() string {
		w, err := d.WorldGet(ctx, &driver.WorldGetParams{World: id})
		if err != nil {
			return ""
		}
		return w.State.Holder
	}
	var stop atomic.Bool
	var acked atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	start := time.Now()
	for s := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; !stop.Load(); k++ {
				cmd := host.Command{Key: fmt.Sprintf("demo-%d-%d", s, k),
					Payload: json.RawMessage(fmt.Sprintf(`{"op":"deposit","account":"acct-%d","amount":1}`, s))}
				if _, err := r.Submit(ctx, id, cmd); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				acked.Add(1)
			}
		}()
	}
	wait := func(want string, limit time.Duration) bool {
		deadline := time.Now().Add(limit)
		for holder() != want {
			if time.Now().After(deadline) || ctx.Err() != nil {
				return false
			}
			time.Sleep(25 * time.Millisecond)
		}
		return true
	}
	if !wait("spill-1", 30*time.Second) {
		stop.Store(true)
		wg.Wait()
		return fmt.Errorf("the band did not spill the world (load %d commands in %s; error %v)", acked.Load(), time.Since(start).Round(time.Millisecond), firstErr)
	}
	fmt.Fprintf(out, "9. under load (%d commands acknowledged in %s) the band spilled the world to spill-1\n", acked.Load(), time.Since(start).Round(time.Millisecond))
	spilledAt := time.Now()
	time.Sleep(500 * time.Millisecond) // a little load on the spill node
	stop.Store(true)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	fmt.Fprintf(out, "10. load stopped after %d commands; waiting for the band to bring the world home\n", acked.Load())
	if !wait("home-1", 30*time.Second) {
		return fmt.Errorf("the band did not bring the world home")
	}
	fmt.Fprintf(out, "11. quiet for the clear time: the band handed the world back to home-1 (%s after the spill)\n", time.Since(spilledAt).Round(time.Millisecond))

	es, err := c.Read(ctx, id, 1, 0)
	if err != nil {
		return err
	}
	all := es
	for len(es) == 1000 {
		if es, err = c.Read(ctx, id, es[len(es)-1].Position+1, 0); err != nil {
			return err
		}
		all = append(all, es...)
	}
	turns := map[string]int{}
	for _, e := range all {
		switch e.Kind {
		case host.TurnKind:
			turns[e.Key]++
		case host.BandKind:
			var mv struct{ State, To, Reason string }
			_ = json.Unmarshal(e.Payload, &mv)
			fmt.Fprintf(out, "    position %d, by %s: band %s → %s (%s)\n", e.Position, e.Holder, mv.State, mv.To, mv.Reason)
		}
	}
	twice := 0
	for _, n := range turns {
		if n > 1 {
			twice++
		}
	}
	fmt.Fprintf(out, "12. journal: %d commands acknowledged, %d turns journaled, %d twice\n\n", acked.Load(), len(turns), twice)
	rep, err := c.Audit(ctx, id)
	if err != nil {
		return err
	}
	printReport(out, rep, false)
	if !rep.OK() || int64(len(turns)) != acked.Load() || twice > 0 {
		return reportedFailure{}
	}
	return nil
}
