package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

// queueStreamPage is how many events one read of a queue stream takes.
const queueStreamPage = 1000

// queueEventBody is one event of a queue stream: a run event with its run.
type queueEventBody struct {
	RunID int64 `json:"run_id"`
	eventBody
}

// queueEventsStream is GET /v1/queues/{queue}/events/stream: the run
// events of every run of the queue as server-sent events, in commit order
// (driver.QueueEventLister: by the position of the transaction that stored
// them, then run, fence and seq), each with id "<pos>:<run>:<fence>:<seq>"
// and as data the event with its run_id. It resumes after the
// Last-Event-ID header (or the after query parameter) with no gap and no
// duplicate, and then follows the queue: events committed later are sent
// as they become listable — woken at once by the store's notifications
// (LISTEN/NOTIFY on Postgres, whichever process wrote them; the driver's
// process-local notifier on SQLite), else at the next StreamPoll. It is
// the queue-wide form of GET /v1/runs/{id}/events/stream, what a River
// subscriber or a Temporal visibility reader watches.
//
// On Postgres an event is listable once every transaction older than its
// own has ended, so a notification can arrive a moment before its event
// is; a read that reports events pending (driver.QueueEventPage) is
// retried soon (from 5 ms, doubling up to StreamPoll) rather than left to
// the poll.
func (s *Server) queueEventsStream(w http.ResponseWriter, r *http.Request) {
	queue := r.PathValue("queue")
	after, err := parseQueueEventID(lastEventID(r))
	if err == nil {
		err = runs.ValidateQueue(queue)
	}
	if err != nil {
		s.problem(w, r, err)
		return
	}
	ctx, cancel := s.streamContext(r)
	defer cancel()
	woken, leave := s.eventWatch.join() // before the first read: no commit falls between
	defer leave()
	read := func() ([]*driver.QueueEvent, bool, error) {
		page, err := s.d.RunEventListQueue(ctx, &driver.RunEventListQueueParams{Queue: queue, After: after, Limit: queueStreamPage})
		if err != nil {
			return nil, false, err
		}
		return page.Events, page.Pending, nil
	}
	es, pending, err := read() // before the headers: a store error is a problem, not a broken stream
	if err != nil {
		s.problem(w, r, err)
		return
	}
	out, err := startSSE(w)
	if err != nil {
		return
	}
	keep, keepC := s.cfg.Clock.NewTicker(sseKeepAlive)
	defer keep.Stop()
	// retry > 0: events are pending (Postgres holds them back until older
	// transactions end, and no notification says when they have): read
	// again this soon, doubling from 5 ms up to StreamPoll.
	var retry time.Duration
	for {
		for _, e := range es {
			data, err := json.Marshal(queueEventBody{RunID: e.RunID, eventBody: eventBody{Fence: e.Fence, Seq: e.Seq, Kind: e.Kind,
				Payload: raw(e.Payload), CreatedAt: stamp(e.CreatedAt)}})
			if err == nil {
				err = out.event(fmt.Sprintf("%d:%d:%d:%d", e.Pos, e.RunID, e.Fence, e.Seq), "", data)
			}
			if err != nil {
				return // the client left
			}
			after = e.Cursor()
		}
		switch {
		case !pending:
			retry = 0
		case len(es) > 0:
			retry = 5 * time.Millisecond
		default:
			retry = min(max(2*retry, 5*time.Millisecond), s.cfg.StreamPoll)
		}
		if len(es) < queueStreamPage {
			wait := s.cfg.StreamPoll
			if retry > 0 {
				wait = retry
			}
			if s.waitFor(ctx, woken, keepC, out, wait) == waitEnd {
				return
			}
		}
		if es, pending, err = read(); err != nil {
			if ctx.Err() == nil {
				s.cfg.Logger.Warn("queue event stream: read failed; ending the stream (the client resumes with Last-Event-ID)", "queue", queue, "err", err)
			}
			return
		}
	}
}

// parseQueueEventID reads a queue event stream id,
// "<pos>:<run>:<fence>:<seq>"; "" is the start of the stream.
func parseQueueEventID(v string) (driver.QueueEventCursor, error) {
	var c driver.QueueEventCursor
	if v == "" {
		return c, nil
	}
	parts := strings.Split(v, ":")
	bad := len(parts) != 4
	for i, dst := range []*int64{&c.Pos, &c.RunID, &c.Fence, &c.Seq} {
		if bad {
			break
		}
		n, err := strconv.ParseInt(parts[i], 10, 64)
		bad = err != nil || n < 0
		*dst = n
	}
	if bad {
		return driver.QueueEventCursor{}, &journal.InputError{Field: "Last-Event-ID", Problem: fmt.Sprintf("%.60q is not a queue event id <pos>:<run>:<fence>:<seq>", v)}
	}
	return c, nil
}

// waitResult is why a stream's wait ended.
type waitResult int

const (
	waitEnd   waitResult = iota // the stream should end
	waitWoken                   // a notification
	waitPoll                    // the timer
)

// waitFor waits for a notification, the timer of d, or the end, sending
// the keep-alives meanwhile.
func (s *Server) waitFor(ctx context.Context, woken <-chan struct{}, keepC <-chan time.Time, out *sse, d time.Duration) waitResult {
	t, tc := s.cfg.Clock.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return waitEnd
		case <-woken:
			return waitWoken
		case <-tc:
			return waitPoll
		case <-keepC:
			if out.comment("keep-alive") != nil {
				return waitEnd
			}
		}
	}
}

// eventWatch fans one driver.EventNotifier listener out to the server's
// queue streams: started by the first stream, stopped when the last
// leaves. Every notification wakes every queue stream — a notification
// names a run, not its queue, and a stream's read is one index range scan
// that finds nothing quickly when the event was another queue's. Without
// a notifier join returns a nil channel and streams poll.
type eventWatch struct {
	d   driver.Driver
	log *slog.Logger

	mu     sync.Mutex // guards subs, cancel and gen
	subs   map[chan struct{}]struct{}
	cancel context.CancelFunc // nil: not listening
	gen    int                // which listener is current
}

func (ew *eventWatch) join() (<-chan struct{}, func()) {
	n, ok := ew.d.(driver.EventNotifier)
	if !ok {
		return nil, func() {}
	}
	wake := make(chan struct{}, 1)
	ew.mu.Lock()
	defer ew.mu.Unlock()
	if ew.subs == nil {
		ew.subs = map[chan struct{}]struct{}{}
	}
	ew.subs[wake] = struct{}{}
	if ew.cancel == nil {
		ctx, cancel := context.WithCancel(context.Background())
		if ch, err := n.RunEventsNotify(ctx); err != nil {
			cancel()
			ew.log.Warn("event notifications unavailable; queue event streams poll", "err", err)
		} else {
			ew.gen++
			ew.cancel = cancel
			go ew.fanOut(ch, ew.gen)
		}
	}
	return wake, func() {
		ew.mu.Lock()
		defer ew.mu.Unlock()
		delete(ew.subs, wake)
		if len(ew.subs) == 0 && ew.cancel != nil {
			ew.cancel()
			ew.cancel = nil
		}
	}
}

// fanOut wakes every stream per notification without blocking: a pending
// wake-up covers the next. When the listener ends it marks the watch not
// listening, so the next stream starts it again.
func (ew *eventWatch) fanOut(ch <-chan int64, gen int) {
	for range ch {
		ew.mu.Lock()
		for w := range ew.subs {
			select {
			case w <- struct{}{}:
			default:
			}
		}
		ew.mu.Unlock()
	}
	ew.mu.Lock()
	if ew.gen == gen && ew.cancel != nil {
		ew.cancel()
		ew.cancel = nil
	}
	ew.mu.Unlock()
}
