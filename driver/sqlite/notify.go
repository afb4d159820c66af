package sqlite

import (
	"context"
	"fmt"
	"sync"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/lease"
)

var _ driver.EventNotifier = (*Driver)(nil)

// localNotifyBuffer is each listener's channel buffer: a listener slower
// than this many batches loses wake-ups, not events (the table is the
// source of truth and every consumer keeps its poll).
const localNotifyBuffer = 64

// localNotifier is SQLite's driver.EventNotifier: process-local, since an
// embedded store has no LISTEN/NOTIFY. RunEventAppend calls notify after
// its transaction committed, so a subscriber woken here reads the events
// it was woken for — whoever appended them in this process: the client's
// event committer, or the HTTP API's emit, which writes to the store
// directly and would otherwise wake an event stream only at its poll.
//
// It spans one Driver: another process (or another Driver on the same
// file) is not told, and its subscribers find the events at their poll,
// as the EventNotifier contract lets them.
type localNotifier struct {
	mu     sync.Mutex // guards subs and closed
	subs   map[chan int64]struct{}
	closed bool
}

// listen returns a channel of run ids appended from now on, closed when
// ctx ends or the driver closes.
func (n *localNotifier) listen(ctx context.Context) (<-chan int64, error) {
	ch := make(chan int64, localNotifyBuffer)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, fmt.Errorf("sqlite: event notifications: driver closed: %w", lease.ErrClosed)
	}
	if n.subs == nil {
		n.subs = map[chan int64]struct{}{}
	}
	n.subs[ch] = struct{}{}
	context.AfterFunc(ctx, func() { n.drop(ch) })
	return ch, nil
}

// drop removes and closes ch, once.
func (n *localNotifier) drop(ch chan int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.subs[ch]; ok {
		delete(n.subs, ch)
		close(ch)
	}
}

// notify sends each distinct run id of a committed batch to every
// listener without blocking: a full channel has wake-ups pending already
// and, like Postgres's listener, drops the id rather than hold up the
// writer.
func (n *localNotifier) notify(evs []driver.RunEventInsert) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.subs) == 0 {
		return
	}
	var last int64
	for _, e := range evs {
		if e.RunID == last {
			continue // a batch holds a run's events together, mostly
		}
		last = e.RunID
		for ch := range n.subs {
			select {
			case ch <- e.RunID:
			default:
			}
		}
	}
}

// close closes every listener's channel; later listens fail.
func (n *localNotifier) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	for ch := range n.subs {
		close(ch)
	}
	n.subs = nil
}

// RunEventsNotify implements driver.EventNotifier, process-locally
// (localNotifier): run ids of events appended through this driver, sent
// after they committed. It takes no input to validate.
func (d *Driver) RunEventsNotify(ctx context.Context) (<-chan int64, error) {
	return d.s.notifier.listen(ctx)
}
