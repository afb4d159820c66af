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
