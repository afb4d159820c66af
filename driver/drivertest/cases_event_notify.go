package drivertest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// Event notifications (driver.EventNotifier): every driver of this module
// has one — Postgres LISTEN/NOTIFY, SQLite and libSQL process-local — and
// a subscriber that listens is told of an append only after it
// committed, so its read finds the events. Delivery is best effort, so
// the case waits for the id with a deadline and no sleep.

// notifyDeadline bounds the wait for a notification: a bound, not a timing
// guess (a local one arrives before RunEventAppend returns).
const notifyDeadline = 30 * time.Second

var eventNotifyCase = Case{"RunEventsNotifyTellsAListenerAfterTheCommit", func(t *testing.T, f Factory) {
	e := newEnv(t, f)
	n, ok := e.d.(driver.EventNotifier)
	require.True(t, ok, "driver %s is not a driver.EventNotifier", e.d.Name())
	ctx, cancel := context.WithTimeout(e.ctx, notifyDeadline)
	defer cancel()
	ids, err := n.RunEventsNotify(ctx)
	require.NoError(t, err)

	e.enqueue(runs.Enqueue{Queue: "q"})
	r := e.claim("q", "w", 1)[0]
	_, err = e.effects().RunEventAppend(e.ctx, &driver.RunEventAppendParams{Events: []driver.RunEventInsert{
		{RunID: r.ID, Fence: r.Fence, Seq: 1, Kind: "k", Payload: []byte(`{}`)}}})
	require.NoError(t, err)
	for {
		id, open := <-ids
		require.True(t, open, "the notifications ended (or the deadline passed) before run %d was named", r.ID)
		if id == r.ID || id == 0 { // 0: "any run may have events" (a reconnect)
			break
		}
	}
	evs, err := e.effects().RunEventList(e.ctx, &driver.RunEventListParams{RunID: r.ID})
	require.NoError(t, err)
	require.Len(t, evs, 1, "notified after the commit: the read finds the event")

	cancel()
	for range ids { // the channel closes when ctx ends
	}
}}
