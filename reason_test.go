package leasehold_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
)

// TestOneReasonRule (issue 17, defects 8 and 9 for reasons): Revoke and
// Cancel refuse the same reasons — invalid UTF-8, NUL, C0 and C1 controls,
// bidi overrides — with ErrInvalid and change nothing; Revoke used to
// journal "\xff" as U+FFFD and accept NUL, which Cancel refused.
func TestOneReasonRule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := openSQLite(t, leasehold.Config{})
	w, err := c.CreateWorld(ctx, "w", "home")
	require.NoError(t, err)
	enq, err := c.Enqueue(ctx, leasehold.Enqueue{Queue: "q"})
	require.NoError(t, err)
	id := enq[0].Run.ID
	for _, bad := range []string{"bad \xff byte", "nul \x00", "esc \x1b[2J", "c1 \u0085", "bidi \u202e"} {
		_, err := c.Revoke(ctx, "w", w.Epoch, bad)
		require.ErrorIs(t, err, leasehold.ErrInvalid, "revoke %q", bad)
		_, err = c.Cancel(ctx, id, bad)
		require.ErrorIs(t, err, leasehold.ErrInvalid, "cancel %q", bad)
	}
	after, err := c.World(ctx, "w")
	require.NoError(t, err)
	require.Equal(t, w.Position, after.Position, "nothing journaled")
	require.Equal(t, "home", after.Holder)
	r, err := c.Run(ctx, id)
	require.NoError(t, err)
	require.Equal(t, "available", string(r.State))

	_, err = c.Revoke(ctx, "w", w.Epoch, "multi-line\nreason\tok")
	require.NoError(t, err)
	_, err = c.Cancel(ctx, id, "multi-line\nreason\tok")
	require.NoError(t, err)
}
