package driver

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHomeGranteeExcludesTheExpiredHolderAndIsDeterministic: the grantee
// is a live replica other than the expired holder, the same for a world
// every time, and none when no other replica is live.
func TestHomeGranteeExcludesTheExpiredHolderAndIsDeterministic(t *testing.T) {
	t.Parallel()
	live := []HomeReplica{{Node: "a"}, {Node: "b"}, {Node: "c"}}
	spread := map[string]bool{}
	for _, w := range []string{"w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8", "w9"} {
		got, ok := HomeGrantee(w, "b", live)
		require.True(t, ok)
		require.NotEqual(t, "b", got)
		again, _ := HomeGrantee(w, "b", live)
		require.Equal(t, got, again)
		spread[got] = true
	}
	require.Len(t, spread, 2, "spread over both candidates")
	_, ok := HomeGrantee("w", "a", []HomeReplica{{Node: "a"}})
	require.False(t, ok)
	_, ok = HomeGrantee("w", "a", nil)
	require.False(t, ok)
}
