package server_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/server"
)

// TestSQLiteEmitWakesAStreamAtOnce: on SQLite, events posted through the
// API wake a following event stream through the driver's process-local
// notifier, not at the stream's poll. StreamPoll is an hour, so only the
// wake can deliver the second event before the stream's 60 s bound: a
// stream left to its poll fails the test instead of passing it slowly.
// The first event is read before the second is posted, so the stream is
// past its first read and waiting when the wake must reach it.
func TestSQLiteEmitWakesAStreamAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, stores[0].open, leasehold.Config{}, server.Config{StreamPoll: time.Hour})
	b.enqueue(t, "q", `{}`)
	r := b.claimOne(t, "q", "w")
	b.emitSeq(t, r, 1, 1)
	s := b.openStream(t, runPath(r.ID, "/events/stream"), "")
	first, _ := readEvents(t, s, 1)
	require.Equal(t, []int64{1}, first)

	b.emitSeq(t, r, 2, 3)
	next, _ := readEvents(t, s, 2)
	require.Equal(t, []int64{2, 3}, next, "woken by the emit, an hour before the poll")
}
