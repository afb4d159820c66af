package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/internal/testdb"
	"github.com/leasehold/leasehold/server"
)

// sseEvent is one server-sent event as a client parses it.
type sseEvent struct{ id, data string }

// sseStream is an open event stream; cancel disconnects it.
type sseStream struct {
	events <-chan sseEvent
	cancel context.CancelFunc
}

// openStream GETs path as an event stream through the bundle's client,
// resuming after lastID when it is not empty. Events arrive on the
// channel, in order, until the stream ends or is cancelled.
func (b *testBundle) openStream(t *testing.T, path, lastID string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a bound, not a timing guess
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.url+path, nil)
	require.NoError(t, err)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := b.http.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	ch := make(chan sseEvent, 1024)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.id != "" || ev.data != "" {
					ch <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	s := &sseStream{events: ch, cancel: cancel}
	t.Cleanup(cancel)
	return s
}

// next returns the stream's next event; it fails the test if the stream
// ends first.
func (s *sseStream) next(t *testing.T) sseEvent {
	t.Helper()
	ev, ok := <-s.events
	require.True(t, ok, "the stream ended early")
	return ev
}

// emitSeq emits events seq from..to of a held run through the bundle.
func (b *testBundle) emitSeq(t *testing.T, r run, from, to int) {
	t.Helper()
	var evs []map[string]any
	for i := from; i <= to; i++ {
		evs = append(evs, map[string]any{"seq": i, "kind": "step", "payload": map[string]int{"n": i}})
	}
	var got struct {
		Accepted int `json:"accepted"`
	}
	b.post(t, runPath(r.ID, "/events"), map[string]any{"fence": r.Fence, "events": evs}).ok(t, &got)
	require.Equal(t, to-from+1, got.Accepted)
}

// readEvents reads n run events off s and returns their seqs, checking
// each id names its event.
func readEvents(t *testing.T, s *sseStream, n int) (seqs []int64, last string) {
	t.Helper()
	for range n {
		ev := s.next(t)
		var e struct {
			Fence, Seq int64
			Kind       string
		}
		require.NoError(t, json.Unmarshal([]byte(ev.data), &e))
		require.Equal(t, fmt.Sprintf("%d:%d", e.Fence, e.Seq), ev.id)
		seqs = append(seqs, e.Seq)
		last = ev.id
	}
	return seqs, last
}

func seqRange(from, to int) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, int64(i))
	}
	return out
}

// resumeRunEvents is must-show 4 for run events: writer writes through
// one bundle, reader streams from another (the same one on a single
// server). The reader sees 1..5, takes 3, disconnects mid-stream; 6..9
// are written while it is away; it resumes with Last-Event-ID and sees
// 4..9 then 10, written while it follows — each once, in order.
func resumeRunEvents(t *testing.T, writer, reader *testBundle) {
	writer.enqueue(t, "q", `{}`)
	r := writer.claimOne(t, "q", "w1")
	writer.emitSeq(t, r, 1, 5)

	s := reader.openStream(t, runPath(r.ID, "/events/stream"), "")
	first, last := readEvents(t, s, 3)
	require.Equal(t, seqRange(1, 3), first)
	s.cancel() // disconnected mid-stream: 4 and 5 were sent or in flight
	for range s.events {
	}

	writer.emitSeq(t, r, 6, 9)
	s2 := reader.openStream(t, runPath(r.ID, "/events/stream"), last)
	again, _ := readEvents(t, s2, 6)
	require.Equal(t, seqRange(4, 9), again, "resumed after %s: no gap, no duplicate", last)
	writer.emitSeq(t, r, 10, 10) // while the reader follows
	live, _ := readEvents(t, s2, 1)
	require.Equal(t, []int64{10}, live)
}

// resumeJournal is must-show 4 for a world's journal: positions 1..4,
// three read, a disconnect, 5..7 written meanwhile, a resume after 3 sees
// 4..7 and then 8 as it commits.
func resumeJournal(t *testing.T, writer, reader *testBundle) {
	ctx := context.Background()
	const world = "stream-w"
	_, err := writer.c.CreateWorld(ctx, world, "home")
	require.NoError(t, err)
	renew := func(n int) {
		for range n {
			_, err := writer.c.Renew(ctx, world, "home", 1)
			require.NoError(t, err)
		}
	}
	renew(3) // positions 2..4
	path := "/v1/worlds/" + world + "/journal/stream"
	readPositions := func(s *sseStream, n int) (ps []int64) {
		for range n {
			ev := s.next(t)
			var e struct {
				World    string `json:"world"`
				Position int64  `json:"position"`
				Hash     string `json:"hash"`
			}
			require.NoError(t, json.Unmarshal([]byte(ev.data), &e))
			require.Equal(t, world, e.World)
			require.Equal(t, fmt.Sprint(e.Position), ev.id)
			require.Len(t, e.Hash, 64)
			ps = append(ps, e.Position)
		}
		return ps
	}
	s := reader.openStream(t, path, "")
	require.Equal(t, seqRange(1, 3), readPositions(s, 3))
	s.cancel()
	for range s.events {
	}
	renew(3) // 5..7
	s2 := reader.openStream(t, path, "3")
	require.Equal(t, seqRange(4, 7), readPositions(s2, 4))
	renew(1)
	require.Equal(t, []int64{8}, readPositions(s2, 1))
}

// TestSSEResumesWithLastEventID: must-show 4 on each store, one server.
func TestSSEResumesWithLastEventID(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		t.Run("run events", func(t *testing.T) { resumeRunEvents(t, b, b) })
		t.Run("journal", func(t *testing.T) { resumeJournal(t, b, b) })
	})
}

// TestSSEAcrossTwoServersOnOnePostgres: must-show 4 across processes —
// two server.Server instances, each over its own client and its own
// postgres driver (own pools, own LISTEN connection) on one schema; the
// writer's writes reach the reader's streams only through the database
// and its NOTIFY. StreamPoll is an hour on the reader, so a stream that
// followed without the notification would hang the test, not pass it.
func TestSSEAcrossTwoServersOnOnePostgres(t *testing.T) {
	t.Parallel()
	url, schema := testdb.Schema(t)
	open := func(t *testing.T) leasehold.Driver {
		d, err := postgres.Open(context.Background(), postgres.Config{URL: url, Schema: schema, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		return d
	}
	writer := setup(t, open, leasehold.Config{}, server.Config{})
	reader := setup(t, open, leasehold.Config{}, server.Config{StreamPoll: time.Hour})
	t.Run("run events", func(t *testing.T) { resumeRunEvents(t, writer, reader) })
	t.Run("journal", func(t *testing.T) { resumeJournal(t, writer, reader) })
}

// TestSSERefusals: a stream of a run or world that does not exist is a
// not-found problem, and a malformed Last-Event-ID is invalid — answered
// before any stream opens.
func TestSSERefusals(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		b.get(t, "/v1/runs/99/events/stream").problem(t, "not-found")
		b.get(t, "/v1/worlds/nope/journal/stream").problem(t, "not-found")
		b.get(t, "/v1/runs/1/events/stream?after=x").problem(t, "invalid")
		b.get(t, "/v1/worlds/nope/journal/stream?after=-1").problem(t, "invalid")
	})
}

// TestStreamsEndWhenTheServerStops: an open stream ends when shutdown
// begins, so it never holds up a graceful stop.
func TestStreamsEndWhenTheServerStops(t *testing.T) {
	t.Parallel()
	b := setup(t, stores[0].open, leasehold.Config{}, server.Config{})
	b.enqueue(t, "q", `{}`)
	r := b.claimOne(t, "q", "w")
	b.emitSeq(t, r, 1, 1)
	_, err := b.c.CreateWorld(context.Background(), "w", "home")
	require.NoError(t, err)
	events := b.openStream(t, runPath(r.ID, "/events/stream"), "")
	journal := b.openStream(t, "/v1/worlds/w/journal/stream", "")
	events.next(t)
	journal.next(t)
	b.s.BeginStopping()
	for range events.events {
	}
	for range journal.events {
	}
}
