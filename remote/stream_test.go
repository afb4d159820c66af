package remote_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/remote"
)

// TestStreamEventsResumesAcrossADroppedConnection: the client's event
// stream, cut by the server mid-stream, reconnects with Last-Event-ID on
// its own and delivers every event once, in order — those written before
// the cut, during it and after.
func TestStreamEventsResumesAcrossADroppedConnection(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		s := serve(t, open, lease.Timing{}, false)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound, not a timing guess
		defer cancel()
		c := s.client()
		_, err := c.Enqueue(ctx, remote.Enqueue{Queue: "q"})
		require.NoError(t, err)
		ls, err := c.Claim(ctx, "q", "w", 1, 0)
		require.NoError(t, err)
		l := ls[0]
		emit := func(from, to int64) {
			for seq := from; seq <= to; seq++ {
				require.NoError(t, c.Emit(ctx, l.ID, l.Fence, remote.Event{Seq: seq, Kind: "step"}))
			}
		}
		emit(1, 3)
		evs, err := c.StreamEvents(ctx, l.ID, "")
		require.NoError(t, err)
		var got []string
		for range 2 {
			got = append(got, (<-evs).ID)
		}
		s.hs.CloseClientConnections() // the connection drops mid-stream
		emit(4, 6)
		for len(got) < 6 {
			e, ok := <-evs
			require.True(t, ok)
			got = append(got, e.ID)
		}
		var want []string
		for seq := 1; seq <= 6; seq++ {
			want = append(want, fmt.Sprintf("%d:%d", l.Fence, seq))
		}
		require.Equal(t, want, got)
		require.Positive(t, s.resumes.Load(), "the client resumed with Last-Event-ID")

		_, err = c.StreamEvents(ctx, 999, "")
		require.ErrorIs(t, err, leasehold.ErrNotFound)
	})
}

// TestStreamQueueEventsResumesAcrossADroppedConnection: the client's
// queue stream delivers the events of every run of the queue in commit
// order, each with its run, and across a dropped connection resumes with
// Last-Event-ID on its own: every event once.
func TestStreamQueueEventsResumesAcrossADroppedConnection(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		s := serve(t, open, lease.Timing{}, false)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound, not a timing guess
		defer cancel()
		c := s.client()
		_, err := c.Enqueue(ctx, remote.Enqueue{Queue: "q"}, remote.Enqueue{Queue: "q"})
		require.NoError(t, err)
		ls, err := c.Claim(ctx, "q", "w", 2, 0)
		require.NoError(t, err)
		require.Len(t, ls, 2)
		a, b := ls[0], ls[1]
		var want []string
		emit := func(l remote.Lease, seq int64) {
			require.NoError(t, c.Emit(ctx, l.ID, l.Fence, remote.Event{Seq: seq, Kind: "step"}))
			want = append(want, fmt.Sprintf("%d:%d", l.ID, seq))
		}
		emit(a, 1)
		emit(b, 1)
		emit(a, 2)
		evs, err := c.StreamQueueEvents(ctx, "q", "")
		require.NoError(t, err)
		var got []string
		next := func() {
			e, ok := <-evs
			require.True(t, ok)
			require.Regexp(t, fmt.Sprintf(`^[0-9]+:%d:%d:%d$`, e.RunID, e.Fence, e.Seq), e.ID)
			got = append(got, fmt.Sprintf("%d:%d", e.RunID, e.Seq))
		}
		next()
		next()
		s.hs.CloseClientConnections() // the connection drops mid-stream
		emit(b, 2)
		emit(a, 3)
		for len(got) < len(want) {
			next()
		}
		require.Equal(t, want, got, "commit order, each once")
		require.Positive(t, s.resumes.Load(), "the client resumed with Last-Event-ID")

		_, err = c.StreamQueueEvents(ctx, "bad queue", "")
		require.ErrorIs(t, err, leasehold.ErrInvalid)
	})
}
