package server

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// journalStreamPage is how many entries one read of a journal stream takes.
const journalStreamPage = 1000

// journalStream is GET /v1/worlds/{id}/journal/stream: the world's journal
// as server-sent events, in position order, each with id "<position>" and
// as data the entry in the JSONL export format (journal/jsonl.go: hashes
// hex, payload verbatim), so a client can check the hash chain itself. It
// resumes after the Last-Event-ID header (or the after query parameter)
// and then follows the world: entries committed later are sent as they
// commit — woken at once on Postgres by the journal trigger's NOTIFY
// (whichever process wrote them), else at the next StreamPoll.
func (s *Server) journalStream(w http.ResponseWriter, r *http.Request) {
	world := r.PathValue("world")
	after, err := parsePosition(lastEventID(r))
	if err == nil {
		err = journal.ValidateID("world", world)
	}
	if err != nil {
		s.problem(w, r, err)
		return
	}
	ctx, cancel := s.streamContext(r)
	defer cancel()
	woken, leave := s.journalWatch.join(world) // before the first read: no commit falls between
	defer leave()
	read := func() ([]journal.Entry, error) {
		return s.d.JournalRead(ctx, &driver.JournalReadParams{World: world, From: after + 1, Limit: journalStreamPage})
	}
	es, err := read() // before the headers: a world that does not exist is a 404 problem
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
	var line bytes.Buffer
	for {
		for i := range es {
			line.Reset()
			if err := journal.NewWriter(&line).Write(&es[i]); err != nil {
				s.cfg.Logger.Error("journal stream: encoding an entry", "world", world, "position", es[i].Position, "err", err)
				return
			}
			if out.event(strconv.FormatInt(es[i].Position, 10), "", line.Bytes()) != nil {
				return // the client left
			}
			after = es[i].Position
		}
		if len(es) < journalStreamPage {
			if !s.waitJournal(ctx, woken, keepC, out) {
				return
			}
		}
		if es, err = read(); err != nil {
			if ctx.Err() == nil {
				s.cfg.Logger.Warn("journal stream: read failed; ending the stream (the client resumes with Last-Event-ID)", "world", world, "err", err)
			}
			return
		}
	}
}

// waitJournal waits for a notification, the poll, or the end; it sends
// the keep-alives meanwhile. False when the stream should end.
func (s *Server) waitJournal(ctx context.Context, woken <-chan struct{}, keepC <-chan time.Time, out *sse) bool {
	t, tc := s.cfg.Clock.NewTimer(s.cfg.StreamPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-woken:
			return true
		case <-tc:
			return true
		case <-keepC:
			if out.comment("keep-alive") != nil {
				return false
			}
		}
	}
}

// parsePosition reads a journal stream id: a position, "" for the start.
func parsePosition(v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	p, err := strconv.ParseInt(v, 10, 64)
	if err != nil || p < 0 {
		return 0, &journal.InputError{Field: "Last-Event-ID", Problem: fmt.Sprintf("%.40q is not a journal position", v)}
	}
	return p, nil
}

// journalWatch fans one driver.JournalNotifier listener out to the
// server's journal streams, by world id: started by the first stream,
// stopped when the last leaves, so an idle server holds no listening
// connection. Without a notifier (SQLite) join returns a nil channel and
// streams poll.
type journalWatch struct {
	d   driver.Driver
	log *slog.Logger

	mu     sync.Mutex
	subs   map[string]map[chan struct{}]struct{}
	refs   int
	cancel context.CancelFunc // nil: not listening
	gen    int                // which listener is current
}

func (jw *journalWatch) join(world string) (<-chan struct{}, func()) {
	n, ok := jw.d.(driver.JournalNotifier)
	if !ok {
		return nil, func() {}
	}
	wake := make(chan struct{}, 1)
	jw.mu.Lock()
	defer jw.mu.Unlock()
	if jw.subs == nil {
		jw.subs = map[string]map[chan struct{}]struct{}{}
	}
	if jw.subs[world] == nil {
		jw.subs[world] = map[chan struct{}]struct{}{}
	}
	jw.subs[world][wake] = struct{}{}
	jw.refs++
	if jw.cancel == nil {
		ctx, cancel := context.WithCancel(context.Background())
		if ch, err := n.JournalNotify(ctx); err != nil {
			cancel()
			jw.log.Warn("journal notifications unavailable; journal streams poll", "err", err)
		} else {
			jw.gen++
			jw.cancel = cancel
			go jw.fanOut(ch, jw.gen)
		}
	}
	return wake, func() {
		jw.mu.Lock()
		defer jw.mu.Unlock()
		delete(jw.subs[world], wake)
		if len(jw.subs[world]) == 0 {
			delete(jw.subs, world)
		}
		if jw.refs--; jw.refs == 0 && jw.cancel != nil {
			jw.cancel()
			jw.cancel = nil
		}
	}
}

// fanOut wakes the streams of each notified world ("" wakes all) without
// blocking: a pending wake-up covers the next. When the listener ends it
// marks the watch not listening, so the next stream starts it again.
func (jw *journalWatch) fanOut(ch <-chan string, gen int) {
	wakeAll := func(subs map[chan struct{}]struct{}) {
		for w := range subs {
			select {
			case w <- struct{}{}:
			default:
			}
		}
	}
	for world := range ch {
		jw.mu.Lock()
		if world == "" {
			for _, subs := range jw.subs {
				wakeAll(subs)
			}
		} else {
			wakeAll(jw.subs[world])
		}
		jw.mu.Unlock()
	}
	jw.mu.Lock()
	if jw.gen == gen && jw.cancel != nil {
		jw.cancel()
		jw.cancel = nil
	}
	jw.mu.Unlock()
}
