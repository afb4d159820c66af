package witness

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReconcileRaisesTheFloor: the asker learns nothing was accepted, and
// a paused holder's lower token arriving afterwards is refused, so the
// asker's own run of the effect is the only one accepted.
func TestReconcileRaisesTheFloor(t *testing.T) {
	t.Parallel()
	w := New()
	require.False(t, w.Reconcile("1:charge", 3), "nothing accepted yet")
	require.ErrorIs(t, w.Invoke("1:charge", 1), ErrStaleToken, "the paused holder's late call")
	require.NoError(t, w.Invoke("1:charge", 3))
	require.True(t, w.Reconcile("1:charge", 5))
	require.Equal(t, map[string]int{"1:charge": 1}, w.Accepted())
}
