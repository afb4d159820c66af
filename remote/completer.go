package remote

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/leasehold/leasehold"
)

// completer group-commits completions: a handler's completion waits in a
// queue; the completer sends what is queued — one, or as many as arrived
// while the previous call was in flight, up to max — in one complete-many
// call (one store commit). No timer: a lone completion goes at once.
type completer struct {
	c    *Client
	max  int
	log  *slog.Logger
	in   chan pending
	quit chan struct{}
	done chan struct{}
}

type pending struct {
	c   Completion
	ack chan error
}

func newCompleter(c *Client, max int, log *slog.Logger) *completer {
	return &completer{c: c, max: max, log: log, in: make(chan pending, max), quit: make(chan struct{}), done: make(chan struct{})}
}

// complete queues one completion and waits for its answer: nil when the
// run was completed, ErrFenced when the store refused it for its fence.
func (k *completer) complete(ctx context.Context, c Completion) error {
	p := pending{c: c, ack: make(chan error, 1)}
	select {
	case k.in <- p:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-p.ack:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (k *completer) run() {
	defer close(k.done)
	batch := make([]pending, 0, k.max)
	for {
		batch = batch[:0]
		select {
		case p := <-k.in:
			batch = append(batch, p)
		case <-k.quit:
			return
		}
	fill:
		for len(batch) < k.max {
			select {
			case p := <-k.in:
				batch = append(batch, p)
			default:
				break fill
			}
		}
		k.send(batch)
	}
}

func (k *completer) send(batch []pending) {
	cs := make([]Completion, len(batch))
	for i, p := range batch {
		cs[i] = p.c
	}
	_, fenced, err := k.c.CompleteMany(context.Background(), cs)
	refused := map[int]bool{}
	for _, i := range fenced {
		refused[i] = true
	}
	for i, p := range batch {
		switch {
		case err != nil:
			p.ack <- err
		case refused[i]:
			p.ack <- fmt.Errorf("remote: completing run %d under fence %d: %w", p.c.ID, p.c.Fence, leasehold.ErrFenced)
		default:
			p.ack <- nil
		}
	}
}

// stop ends the completer once every queued completion was answered
// (Stop calls it after the handlers returned).
func (k *completer) stop() {
	close(k.quit)
	<-k.done
}
