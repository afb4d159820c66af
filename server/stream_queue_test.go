package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/internal/testdb"
	"github.com/leasehold/leasehold/server"
)

// queueEvent is one event of a queue stream: its run and seq.
type queueEvent struct{ run, seq int64 }

// readQueueEvents reads n events off a queue stream, checking each id
// names its event, and returns them and the last id.
func readQueueEvents(t *testing.T, s *sseStream, n int) (got []queueEvent, last string) {
	t.Helper()
	for range n {
		ev := s.next(t)
		var e struct {
			RunID int64  `json:"run_id"`
			Fence int64  `json:"fence"`
			Seq   int64  `json:"seq"`
			Kind  string `json:"kind"`
		}
		require.NoError(t, json.Unmarshal([]byte(ev.data), &e))
		require.Regexp(t, fmt.Sprintf(`^[0-9]+:%d:%d:%d$`, e.RunID, e.Fence, e.Seq), ev.id)
		require.Equal(t, "step", e.Kind)
		got = append(got, queueEvent{e.RunID, e.Seq})
		last = ev.id
	}
	return got, last
}

// resumeQueueEvents: the writer emits events of two runs of queue "qs"
// (and of a run of another queue) in separate commits; the reader streams
// the queue, takes two, disconnects; one more is written while it is
// away; it resumes with Last-Event-ID and sees the rest in commit order,
// then one more as it commits — each once, the other queue's never.
func resumeQueueEvents(t *testing.T, writer, reader *testBundle) {
	writer.enqueue(t, "qs", `{}`)
	writer.enqueue(t, "qs", `{}`)
	writer.enqueue(t, "other", `{}`)
	r1, r2 := writer.claimOne(t, "qs", "w"), writer.claimOne(t, "qs", "w")
	o := writer.claimOne(t, "other", "w")
	writer.emitSeq(t, r1, 1, 2)
	writer.emitSeq(t, o, 1, 1)
	writer.emitSeq(t, r2, 1, 1)
	writer.emitSeq(t, r1, 3, 3)

	const path = "/v1/queues/qs/events/stream"
	s := reader.openStream(t, path, "")
	first, last := readQueueEvents(t, s, 2)
	require.Equal(t, []queueEvent{{r1.ID, 1}, {r1.ID, 2}}, first)
	s.cancel()
	for range s.events {
	}

	writer.emitSeq(t, r2, 2, 2)
	s2 := reader.openStream(t, path, last)
	again, _ := readQueueEvents(t, s2, 3)
	require.Equal(t, []queueEvent{{r2.ID, 1}, {r1.ID, 3}, {r2.ID, 2}}, again, "resumed after %s: commit order, no gap, no duplicate", last)
	writer.emitSeq(t, o, 2, 2) // another queue's: not sent
	writer.emitSeq(t, r1, 4, 4)
	live, _ := readQueueEvents(t, s2, 1)
	require.Equal(t, []queueEvent{{r1.ID, 4}}, live)
}

// TestQueueEventStreamResumesInCommitOrder: the queue-wide stream on each
// store, one server, and across two servers on one Postgres — the
// reader's StreamPoll an hour, so it follows only through LISTEN/NOTIFY —
// and on SQLite with an hour's poll, following only through the driver's
// process-local notifier.
func TestQueueEventStreamResumesInCommitOrder(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		resumeQueueEvents(t, b, b)
	})
	t.Run("sqlite woken, not polled", func(t *testing.T) {
		t.Parallel()
		b := setup(t, stores[0].open, leasehold.Config{}, server.Config{StreamPoll: time.Hour})
		resumeQueueEvents(t, b, b)
	})
	t.Run("two servers on one postgres", func(t *testing.T) {
		t.Parallel()
		url, schema := testdb.Schema(t)
		open := func(t *testing.T) leasehold.Driver {
			d, err := postgres.Open(context.Background(), postgres.Config{URL: url, Schema: schema, Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			return d
		}
		writer := setup(t, open, leasehold.Config{}, server.Config{})
		reader := setup(t, open, leasehold.Config{}, server.Config{StreamPoll: time.Hour})
		resumeQueueEvents(t, writer, reader)
	})
}

// TestQueueEventStreamRefusals: the queue stream needs read on its queue
// (a token for another queue is forbidden, none is unauthorized), and a
// malformed Last-Event-ID or queue name is invalid — answered before any
// stream opens.
func TestQueueEventStreamRefusals(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		b.anon(t).get(t, "/v1/queues/qs/events/stream").problem(t, "unauthorized")
		b.as(t, b.mint(t, "read:queue:other")).get(t, "/v1/queues/qs/events/stream").problem(t, "forbidden")
		b.as(t, b.mint(t, "read:world:*")).get(t, "/v1/queues/qs/events/stream").problem(t, "forbidden")
		for _, bad := range []string{"x", "1:2:3", "1:2:3:-4", "1:2:3:4:5", "a:b:c:d"} {
			b.get(t, "/v1/queues/qs/events/stream?after="+bad).problem(t, "invalid")
		}
		r := b.get(t, "/v1/queues/"+"%20bad/events/stream")
		require.Equal(t, http.StatusBadRequest, r.status)
		r.problem(t, "invalid")
		reader := b.as(t, b.mint(t, "read:queue:qs"))
		s := reader.openStream(t, "/v1/queues/qs/events/stream", "")
		b.enqueue(t, "qs", `{}`)
		run := b.claimOne(t, "qs", "w")
		b.emitSeq(t, run, 1, 1)
		got, _ := readQueueEvents(t, s, 1)
		require.Equal(t, []queueEvent{{run.ID, 1}}, got, "a reader of the queue may follow it")
	})
}
