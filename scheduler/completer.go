package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
)

// completer group-commits successful completions: the handlers of a worker
// hand their (run, fence, result) over and wait; one RunCompleteMany
// statement completes every run of the batch that is still held under its
// fence, in one transaction, and reports the others as fenced. Batches form
// while the previous one is in flight — no timer, so a lone completion pays
// one round trip at once and many concurrent ones share one.
type completer struct {
	store Store
	clock clock.Clock
	max   int
	log   *slog.Logger
	in    chan completion

	once sync.Once
	stop chan struct{}
	done chan struct{}
}

type completion struct {
	c   driver.RunCompletion
	out chan error // nil: completed; ErrFenced-wrapping: refused
}

func newCompleter(store Store, c clock.Clock, log *slog.Logger) *completer {
	return &completer{store: store, clock: c, max: 1000, log: log,
		in: make(chan completion, 4096), stop: make(chan struct{}), done: make(chan struct{})}
}

func (c *completer) start() { go c.loop() }

// close flushes what is queued and stops; completions sent after it are
// answered by the caller's fallback (a single RunComplete).
func (c *completer) close() {
	c.once.Do(func() { close(c.stop) })
	<-c.done
}

// complete queues a completion and waits for its batch.
func (c *completer) complete(ctx context.Context, rc driver.RunCompletion) error {
	it := completion{c: rc, out: make(chan error, 1)}
	select {
	case c.in <- it:
	case <-c.stop:
		_, err := c.store.RunComplete(ctx, &driver.RunCompleteParams{ID: rc.ID, Fence: rc.Fence, Result: rc.Result})
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-it.out:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *completer) loop() {
	defer close(c.done)
	for {
		var first completion
		select {
		case first = <-c.in:
		case <-c.stop:
			for { // flush once more on stop
				select {
				case it := <-c.in:
					c.flush(c.gatherNow([]completion{it}))
				default:
					return
				}
			}
		}
		runtime.Gosched() // let handlers finishing right now join this batch
		c.flush(c.gatherNow([]completion{first}))
	}
}

func (c *completer) gatherNow(batch []completion) []completion {
	for len(batch) < c.max {
		select {
		case it := <-c.in:
			batch = append(batch, it)
		default:
			return batch
		}
	}
	return batch
}

func (c *completer) flush(batch []completion) {
	p := &driver.RunCompleteManyParams{Runs: make([]driver.RunCompletion, len(batch))}
	for i, it := range batch {
		p.Runs[i] = it.c
	}
	var res *driver.RunCompleteManyResult
	var err error
	for attempt, backoff := 0, time.Millisecond; attempt < 5; attempt, backoff = attempt+1, backoff*4 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err = c.store.RunCompleteMany(ctx, p)
		cancel()
		if err == nil {
			break
		}
		c.log.Warn("batch completion failed; retrying", "runs", len(batch), "err", err)
		t, ch := c.clock.NewTimer(backoff)
		<-ch
		t.Stop()
	}
	fenced := map[int]bool{}
	if res != nil {
		for _, i := range res.Fenced {
			fenced[i] = true
		}
	}
	for i, it := range batch {
		switch {
		case err != nil:
			it.out <- err // left running: the reclaimer returns it after its lease expires
		case fenced[i]:
			it.out <- fmt.Errorf("complete of run %d under fence %d: %w", it.c.ID, it.c.Fence, driver.ErrFenced)
		default:
			it.out <- nil
		}
	}
}
