package scheduler

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/rt"
	"github.com/leasehold/leasehold/lease"
)

// countingRuntime counts the events fired: a stream fires its event each
// time it wakes its waiters.
type countingRuntime struct {
	rt.Runtime
	events atomic.Int64
}

func (c *countingRuntime) NewEvent() rt.Event {
	return &countedEvent{Event: c.Runtime.NewEvent(), n: &c.events}
}

type countedEvent struct {
	rt.Event
	n *atomic.Int64
}

func (e *countedEvent) Fire() {
	if !e.Fired() {
		e.n.Add(1)
	}
	e.Event.Fire()
}

// waiting returns the event a waiter of s would block on now.
func waiting(s *eventStream) rt.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.event()
}

// TestSettleWakesEachStreamOnce: a flushed batch wakes each run's stream
// once, after all of its events' outcomes are recorded — not once per
// event — and a waiter sees the last of them.
func TestSettleWakesEachStreamOnce(t *testing.T) {
	r := &countingRuntime{Runtime: rt.Real(clock.Real())}
	a, b := newEventStream(r), newEventStream(r)
	before := r.events.Load()
	aChanged, bChanged := waiting(a), waiting(b)
	var batch []eventItem
	for seq := int64(1); seq <= 50; seq++ { // interleaved, as the committer's queue holds them
		batch = append(batch, eventItem{ev: driver.RunEventInsert{RunID: 1, Fence: 1, Seq: seq}, s: a},
			eventItem{ev: driver.RunEventInsert{RunID: 2, Fence: 1, Seq: seq}, s: b})
	}
	errs := make([]error, len(batch))
	errs[len(errs)-1] = lease.ErrFenced // b's last event refused: b fenced
	c := NewEventCommitter(nil, EventCommitterConfig{})
	c.settle(batch, errs)

	require.Equal(t, int64(2), r.events.Load()-before, "one wake per stream, not per event")
	require.Nil(t, a.changed, "a wake drops the fired event; the next waiter makes one")
	require.True(t, aChanged.Fired())
	require.True(t, bChanged.Fired())
	require.Equal(t, int64(50), a.durable)
	require.False(t, a.fenced)
	require.Equal(t, int64(49), b.durable)
	require.True(t, b.fenced)

	// The next batch wakes again (the first wake reset the stream).
	aChanged = waiting(a)
	c.settle([]eventItem{{ev: driver.RunEventInsert{RunID: 1, Fence: 1, Seq: 51}, s: a}}, nil)
	require.True(t, aChanged.Fired())
	require.Equal(t, int64(51), a.durable)
	require.Equal(t, int64(3), r.events.Load()-before)

	// A failure wakes at once.
	aChanged = waiting(a)
	a.fail(errors.New("not durable"))
	require.True(t, aChanged.Fired())
	require.Error(t, a.failed)
}
